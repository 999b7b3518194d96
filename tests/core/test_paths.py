"""A file's real path with its folder resolved once (issue 19: thousands of shards): the same
answer as os.path.realpath through linked folders and linked files, and one file named twice is
one file of the dataset."""

import os

from tfrview.core.tfrecord.dataset import name_files
from tfrview.core.tfrecord.paths import real_path, real_paths


def test_real_path_follows_linked_folders_and_files(tmp_path):
    (tmp_path / "data").mkdir()
    shard = tmp_path / "data" / "a-00000-of-00001.tfrecord"
    shard.write_bytes(b"")
    (tmp_path / "linked").symlink_to(tmp_path / "data")
    (tmp_path / "data" / "alias.tfrecord").symlink_to(shard)
    names = [
        tmp_path / "linked" / shard.name,
        tmp_path / "data" / "alias.tfrecord",
        tmp_path / "linked" / ".." / "data" / shard.name,
        "no/such/file",
        ".",
    ]
    for p in names:
        assert real_path(p) == os.path.realpath(p)
    assert real_path(names[0]) == real_path(names[1]) == str(shard.resolve())


def test_a_file_named_through_a_linked_folder_is_listed_once(tmp_path):
    (tmp_path / "data").mkdir()
    for i in range(3):
        (tmp_path / "data" / f"s-{i:05d}-of-00003.tfrecord").write_bytes(b"")
    (tmp_path / "data" / ".hidden").write_bytes(b"")
    (tmp_path / "data" / "sub").mkdir()  # a folder inside is no file of the dataset
    (tmp_path / "linked").symlink_to(tmp_path / "data")
    failed, paths = name_files(
        [str(tmp_path / "data"), str(tmp_path / "linked" / "s-00001-of-00003.tfrecord")]
    )
    assert failed == [] and [p.name for p in paths] == [f"s-{i:05d}-of-00003.tfrecord" for i in range(3)]


def test_a_listed_folder_with_a_linked_file_still_resolves_it_and_lists_it_once(tmp_path):
    """The names a listing saw were no symlinks skip real_path's lstat (10,000 shards); a symlink in
    the same listing is still followed, so the file it names is one file of the dataset."""
    (tmp_path / "data").mkdir()
    for i in range(3):
        (tmp_path / "data" / f"s-{i:05d}-of-00003.tfrecord").write_bytes(b"")
    (tmp_path / "data" / "t-alias.tfrecord").symlink_to(tmp_path / "data" / "s-00001-of-00003.tfrecord")
    failed, paths = name_files([str(tmp_path / "data")])
    assert failed == [] and [p.name for p in paths] == [f"s-{i:05d}-of-00003.tfrecord" for i in range(3)]
    for p in [*paths, tmp_path / "data" / "t-alias.tfrecord"]:
        assert real_path(p) == os.path.realpath(p)


def test_real_paths_of_many_files_answers_as_real_path_each(tmp_path, monkeypatch):
    """`real_paths` (a folder split off and resolved once for a run of its files: 10,000 shards)
    gives `real_path`'s answer for every shape of path: linked files and folders, relative names,
    a doubled slash, `..`, a trailing slash, the root."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a").write_bytes(b"")
    (tmp_path / "sub" / "l").symlink_to(tmp_path / "sub" / "a")
    (tmp_path / "lnk").symlink_to(tmp_path / "sub")
    monkeypatch.chdir(tmp_path / "sub")
    t = str(tmp_path)
    names = [f"{t}/sub/a", f"{t}/sub/l", f"{t}/lnk/a", f"{t}/lnk/l", "a", "l", "./a", "../sub/a"]
    names += [f"{t}//sub/a", f"{t}/sub/../sub/a", f"{t}/sub/", "/", "/tmp", tmp_path / "sub" / "a"]
    assert real_paths(names) == [real_path(p) for p in names]
    assert real_paths(names)[:4] == [str((tmp_path / "sub" / "a").resolve())] * 4
