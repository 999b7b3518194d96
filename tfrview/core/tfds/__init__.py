"""TFDS prepared directories, read strictly as data.

`dataset_info.json`, `features.json` and `*.labels.txt` say a dataset's name, version, splits,
shard lengths and what its features mean. They are parsed as JSON and text within limits; no
class they name is ever imported and nothing in them is executed or unpickled. The lowest layer
of the core with `arrayrecord/`: it imports neither framing nor records.
"""
