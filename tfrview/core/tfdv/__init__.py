"""TensorFlow Data Validation's files without TensorFlow (issue 23): schemas inferred and checked,
statistics written from the stored analysis, TFX pipeline roots read."""
