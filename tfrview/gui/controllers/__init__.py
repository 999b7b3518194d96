"""Controllers: each owns one concern of the window (filter, shards, export), takes what it needs
explicitly and keeps its state as data; widgets stay thin."""
