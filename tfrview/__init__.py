"""tfrview: inspect TensorFlow TFRecord files."""

__version__ = "0.1.0"
