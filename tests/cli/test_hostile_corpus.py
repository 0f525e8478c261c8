"""The hostile-input corpus (``tests/cli/hostile_corpus.py``) through the command line.

Every case either is refused — exit status 2, exactly one ``error:`` line on stderr that names
the file and the path inside it, nothing on stdout — or, when the input is valid, ``validate``
exits 0 and ``run`` completes (0 or 1). None may raise, hang or print a traceback. Most cases
run in process through ``emulator.cli.main``; a sample also runs as real processes, the
user's view, to prove that no traceback reaches stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulator import cli
from tests.cli.hostile_corpus import CASES, DIR, LOOP, Case

ROOT = Path(__file__).resolve().parents[2]
SUBPROCESS_SAMPLE = (
    "yaml-python-object",
    "yaml-deep-nesting",
    "plugin-int-enabled",
    "cpu-310-digits",
    "explain-not-utf8",
    "cli-until-overflow",
)


def _materialize(d: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = d / name
        if content == DIR:
            path.mkdir()
        elif content == LOOP:
            path.symlink_to(path)
        else:
            path.write_bytes(content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content)


def _argvs(case: Case, d: Path) -> list[list[str]]:
    return [[a.replace("{d}", str(d)) for a in argv] for argv in case.argv]


def _check(case: Case, d: Path, argv: list[str], code: int, out: str, err: str, elapsed: float) -> None:
    assert "Traceback" not in err, err
    assert elapsed < 15.0, f"{argv} took {elapsed:.1f}s"
    if case.want is None:
        assert code in (0, 1) if argv[0] == "run" else code == 0, err
        return
    assert code == 2, (code, out, err)
    lines = err.splitlines()
    if lines and lines[0].startswith("usage:"):  # argparse's own refusal: the usage, then one error line
        assert all("error:" not in line for line in lines[:-1]), err
        assert lines[-1].startswith("python -m emulator "), err
        assert ": error: " in lines[-1], err
        lines = lines[-1:]
    assert len(lines) == 1, err
    assert lines[0].startswith(("error: ", "python -m emulator ")), err
    assert case.file in lines[0], err
    assert case.want in lines[0], err


def _in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, float]:
    start = time.monotonic()
    try:
        code = cli.main(argv)
    except SystemExit as exit_:  # argparse refuses an option this way
        code = int(exit_.code or 0)
    elapsed = time.monotonic() - start
    captured = capsys.readouterr()
    return code, captured.out, captured.err, elapsed


def _params() -> list[object]:
    return [pytest.param(case, id=case.id, marks=[pytest.mark.slow] if case.slow else []) for case in CASES]


def test_corpus_is_large_and_named_once() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) >= 120
    assert len(set(ids)) == len(ids)


@pytest.mark.real_time
@pytest.mark.parametrize("case", _params())
def test_hostile_input_is_refused_or_runs(case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _materialize(tmp_path, case.files)
    for argv in _argvs(case, tmp_path):
        if argv[0] == "run" and case.want is not None:
            continue  # run reads the file as validate does; the subprocess sample drives both
        _check(case, tmp_path, argv, *_in_process(argv, capsys))


@pytest.mark.real_time
@pytest.mark.parametrize("case_id", SUBPROCESS_SAMPLE)
def test_no_traceback_reaches_stderr_of_a_real_process(case_id: str, tmp_path: Path) -> None:
    (case,) = [c for c in CASES if c.id == case_id]
    _materialize(tmp_path, case.files)
    for argv in _argvs(case, tmp_path):
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "emulator", *argv],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=20,
            check=False,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdin=subprocess.DEVNULL,
        )
        _check(case, tmp_path, argv, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)
