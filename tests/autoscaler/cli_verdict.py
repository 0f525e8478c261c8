"""The bad-input tests' shared check of what ``validate`` / ``run`` answer for a scenario file."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.cli import main


def assert_verdict(command: str, path: Path, expected: str, prefix: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``expected`` empty: ``validate`` accepts the file (``run`` is not played). Otherwise the
    command exits 2 with one non-blank stderr line starting with ``prefix`` and containing
    ``expected``."""
    if not expected:
        if command == "validate":
            assert main([command, str(path)]) == 0, capsys.readouterr().err
        return
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(prefix)
    assert expected in lines[0], lines[0]
