"""Worker processes: the window's jobs, the scan process, how every worker starts."""
