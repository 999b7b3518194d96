"""A new dataset written from a whole one (issue 23): kept and dropped records, class maps, shards,
splits, provenance. Sits on `analysis` (filters, stored facts, duplicate groups); never touches inputs."""
