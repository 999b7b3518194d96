"""The Qt layer: depends on tfrview.core, never the reverse."""
