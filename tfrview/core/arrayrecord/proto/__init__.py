"""Generated protobuf modules of the Riegeli file format (`make protos`): data only, never executed."""
