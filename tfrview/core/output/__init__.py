"""Everything tfrview writes: atomic new files, the writer, salvage, exports, index files."""
