"""Reading one input file, bounded: every file a user hands us is read through ``read_text``.

What this module owns: refusing what is not a regular file (a directory, a FIFO that would
block the open, ``/dev/zero`` that would never end), refusing a file larger than
``MAX_FILE_BYTES`` before reading it (and again while reading, should it grow), and decoding
UTF-8 with an error that names the byte offset. Every refusal is a ``ReadError`` (an
``InputError``) whose ``reason`` callers may reword with their own context (the scenario
loader reports a ``file:`` reference against the scenario line that names it). It does not
parse anything.

=====================  =========================================================
input                  ``ReadError.reason``
=====================  =========================================================
missing, unreadable    the OS's words (``No such file or directory``)
a directory            ``Is a directory``
FIFO, device, socket   ``not a regular file (a FIFO)`` ... — never opened
over the limit         ``larger than 64 MiB, the limit for an input file``
bad UTF-8              ``not UTF-8 text: invalid byte 0xff at offset 12``
=====================  =========================================================
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

from emulator.base.inputs.errors import InputError

__all__ = ["MAX_FILE_BYTES", "ReadError", "read_text"]

MAX_FILE_BYTES: Final = 64 * 2**20
"""The largest input file read (64 MiB): far above any scenario or manifest set, far below
what would exhaust memory once parsed."""
_CHUNK: Final = 2**20


class ReadError(InputError):
    """A file that cannot be read as text: ``<file>: cannot read file: <reason>``."""

    def __init__(self, file: str, reason: str) -> None:
        super().__init__(file, "", f"cannot read file: {reason}")
        self.reason = reason


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit % 2**20 == 0 else f"{limit} bytes"


def _check(file: str, mode: int, size: int, limit: int) -> None:
    if stat.S_ISDIR(mode):
        raise ReadError(file, "Is a directory")
    if not stat.S_ISREG(mode):
        raise ReadError(file, f"not a regular file ({_kind(mode)})")
    if size > limit:
        raise ReadError(file, f"larger than {_size(limit)}, the limit for an input file")


def read_bytes(path: str | Path, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The content of the regular file at ``path``, at most ``limit`` bytes; else ``ReadError``."""
    file = str(path)
    try:
        _check(file, os.stat(path).st_mode, 0, limit)  # stat first: opening a FIFO blocks
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise ReadError(file, err.strerror or str(err)) from None
    try:
        info = os.fstat(fd)
        _check(file, info.st_mode, info.st_size, limit)
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew since fstat
                raise ReadError(file, f"larger than {_size(limit)}, the limit for an input file")
        return b"".join(chunks)
    except OSError as err:
        raise ReadError(file, err.strerror or str(err)) from None
    finally:
        os.close(fd)


def read_text(path: str | Path, *, limit: int = MAX_FILE_BYTES) -> str:
    """The file at ``path`` decoded as UTF-8 (``read_bytes``' limits); else ``ReadError``."""
    data = read_bytes(path, limit=limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ReadError(
            str(path), f"not UTF-8 text: invalid byte 0x{data[err.start]:02x} at offset {err.start}"
        ) from None
