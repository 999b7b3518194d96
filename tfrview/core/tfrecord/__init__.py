"""Bytes to framed records: the format, sources, the index, reports, datasets, diagnosis of non-TFRecords."""
