"""The person's tags on records (issue 23): their own work, kept in the user's data directory, keyed
so they survive reopening and moving a dataset."""
