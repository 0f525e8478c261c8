"""The bounded reader: what is not a regular UTF-8 file of at most 64 MiB is one ``ReadError``
naming the file, refused before it is read (a FIFO is never opened, /dev/zero never read)."""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path

import pytest

from emulator.base.inputs import MAX_FILE_BYTES, InputError, ReadError, read_text
from tests.inputs.hostile import sparse_file


def test_reads_utf8_text(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes("name: café\n".encode())
    assert read_text(path) == "name: café\n"


def test_a_file_exactly_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(b"a" * 100)
    assert read_text(path, limit=100) == "a" * 100


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        pytest.param(b"name: caf\xe9\n", "not UTF-8 text: invalid byte 0xe9 at offset 9", id="latin-1"),
        pytest.param(b"\xff\xfen\x00a\x00", "not UTF-8 text: invalid byte 0xff at offset 0", id="utf-16-bom"),
        pytest.param(b"a: 1\nb: \xc3\n", "not UTF-8 text: invalid byte 0xc3 at offset 8", id="truncated-sequence"),
    ],
)
def test_not_utf8_names_the_byte_offset(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(content)
    with pytest.raises(ReadError) as info:
        read_text(path)
    assert (info.value.file, info.value.reason) == (str(path), reason)
    assert str(info.value) == f"{path}: cannot read file: {reason}"


def test_missing_file_gives_the_os_words(tmp_path: Path) -> None:
    with pytest.raises(ReadError, match=r"nope\.yaml: cannot read file: No such file or directory$"):
        read_text(tmp_path / "nope.yaml")


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ReadError) as info:
        read_text(tmp_path)
    assert info.value.reason == "Is a directory"


@pytest.mark.real_time
def test_larger_than_the_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = sparse_file(tmp_path / "big.yaml", MAX_FILE_BYTES + 2**20)
    started = time.perf_counter()
    with pytest.raises(ReadError) as info:
        read_text(path)
    assert info.value.reason == "larger than 64 MiB, the limit for an input file"
    assert time.perf_counter() - started < 1.0


def test_a_smaller_limit_is_reported_in_bytes(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(b"a" * 101)
    with pytest.raises(ReadError, match="larger than 100 bytes"):
        read_text(path, limit=100)


def test_dev_zero_is_refused_without_reading() -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    with pytest.raises(ReadError) as info:
        read_text("/dev/zero")
    assert info.value.reason == "not a regular file (a character device)"


@pytest.mark.real_time
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs")
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    started = time.perf_counter()
    with pytest.raises(ReadError) as info:
        read_text(path)  # opening a FIFO with no writer would block forever
    assert info.value.reason == "not a regular file (a FIFO)"
    assert time.perf_counter() - started < 1.0


def test_read_error_is_an_input_error_that_survives_pickling(tmp_path: Path) -> None:
    with pytest.raises(ReadError) as info:
        read_text(tmp_path)
    err = info.value
    assert isinstance(err, InputError)
    copy = pickle.loads(pickle.dumps(err))
    assert (type(copy), str(copy), copy.reason) == (ReadError, str(err), err.reason)
