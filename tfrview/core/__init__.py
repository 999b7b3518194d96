"""The Qt-free engine: framing, sources, the index, datasets, payloads, images and checks."""
