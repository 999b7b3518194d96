"""Our own text for TensorFlow Metadata's Schema, Anomalies and statistics messages, and their
generated modules (`make protos`). They keep TensorFlow Metadata's package and names, so they are
built into a descriptor pool of their own (`POOL`), not protobuf's default one: a process that also
imports `tensorflow_metadata` (TFX, TFDV, a test comparing with it) would otherwise fail on the
duplicate names. `make protos` points the generated modules at this pool."""

from google.protobuf import descriptor_pool

POOL = descriptor_pool.DescriptorPool()
