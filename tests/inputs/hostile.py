"""Hostile input files shared by the tests of ``emulator.base.inputs`` and of the command line."""

from __future__ import annotations

from pathlib import Path

POD = "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}"


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """A ``kind: List`` whose items are Lists of aliases of the level below, ``levels`` deep:
    ``width ** levels`` pods from ``levels * width`` alias uses (under ``MAX_ALIASES``)."""
    lines = ["apiVersion: v1", "kind: List", "items:", f"- &a0 {POD}"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * width)
        lines.append(f"- &a{level} {{apiVersion: v1, kind: List, items: [{refs}]}}")
    return "\n".join(lines) + "\n"


def sparse_file(path: Path, size: int) -> Path:
    """A file of ``size`` bytes that takes no disk space (``truncate``)."""
    with path.open("wb") as f:
        f.truncate(size)
    return path
