"""ArrayRecord and Riegeli files, read without the official wheel.

A Riegeli file is 64 KiB blocks, each starting with a block header, over a chain of chunks
(each with a chunk header and data); an ArrayRecord file ends in a footer chunk and a postscript
that index its chunks, so record N is found without reading the file. This package frames such a
file into records, checks its hashes and finds every whole chunk of a damaged one. Like
`tfrecord/`, it never looks inside a payload.
"""
