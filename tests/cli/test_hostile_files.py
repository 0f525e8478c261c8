"""Hostile files through ``validate``, ``run`` and ``explain``: each ends in exit status 2 with
exactly one ``error:`` line naming the file (and the path inside it, with ``line:column`` when
the YAML node is known), fast, with no traceback and nothing run."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from emulator import cli
from emulator.base.inputs import MAX_FILE_BYTES
from tests.inputs.hostile import alias_bomb, sparse_file

ROOT = Path(__file__).resolve().parents[2]
POD = "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}"
BAD_LABELS = "{apiVersion: v1, kind: Pod, metadata: {name: p, labels: 3}, spec: {containers: [{name: c, image: i}]}}"
TOTAL = sum(9**level for level in range(10))
EXPANDS = f"the List expands to {TOTAL} objects; at most 1000000 are allowed"

Make = Callable[[Path], None]


def _text(name: str, text: str | bytes) -> Make:
    def make(d: Path) -> None:
        (d / name).write_bytes(text.encode() if isinstance(text, str) else text)

    return make


def _big(name: str) -> Make:
    def make(d: Path) -> None:
        sparse_file(d / name, MAX_FILE_BYTES + 2**20)

    return make


def _dir(name: str) -> Make:
    return lambda d: (d / name).mkdir()


def _fifo(name: str) -> Make:
    return lambda d: os.mkfifo(d / name)


def _uses(name: str) -> Make:
    return _text("s.yaml", f"name: t\nobjects: [{{file: {name}}}]\n")


SCENARIOS = [
    pytest.param(
        [_text("s.yaml", b"name: caf\xe9\n")],
        "s.yaml",
        "{s}: cannot read file: not UTF-8 text: invalid byte 0xe9 at offset 9",
        id="scenario-not-utf8",
    ),
    pytest.param(
        [_uses("m.yaml"), _text("m.yaml", b"kind: Pod # caf\xe9\n")],
        "s.yaml",
        "{s}:2:11: objects[0]: cannot read file: not UTF-8 text: invalid byte 0xe9 at offset 15: {d}/m.yaml",
        id="manifest-not-utf8",
    ),
    pytest.param(
        [_uses("/dev/zero")],
        "s.yaml",
        "{s}:2:11: objects[0]: cannot read file: not a regular file (a character device): /dev/zero",
        id="dev-zero",
    ),
    pytest.param(
        [_uses("pipe.yaml"), _fifo("pipe.yaml")],
        "s.yaml",
        "{s}:2:11: objects[0]: cannot read file: not a regular file (a FIFO): {d}/pipe.yaml",
        id="fifo",
    ),
    pytest.param(
        [_uses("big.yaml"), _big("big.yaml")],
        "s.yaml",
        "{s}:2:11: objects[0]: cannot read file: larger than 64 MiB, the limit for an input file: {d}/big.yaml",
        id="65-MiB-manifest",
    ),
    pytest.param(
        [_big("s.yaml")],
        "s.yaml",
        "{s}: cannot read file: larger than 64 MiB, the limit for an input file",
        id="65-MiB-scenario",
    ),
    pytest.param([_dir("s.yaml")], "s.yaml", "{s}: cannot read file: Is a directory", id="scenario-is-a-directory"),
    pytest.param(
        [_uses("dir"), _dir("dir")],
        "s.yaml",
        "{s}:2:11: objects[0]: cannot read file: Is a directory: {d}/dir",
        id="manifest-is-a-directory",
    ),
    pytest.param(
        [_uses("bomb.yaml"), _text("bomb.yaml", alias_bomb())],
        "s.yaml",
        "{d}/bomb.yaml:3:1: items: " + EXPANDS,
        id="alias-bomb",
    ),
    pytest.param(
        [_text("s.yaml", "name: a\nseed: 1\nname: b\n")],
        "s.yaml",
        '{s}: invalid YAML at line 3, column 1: mapping key "name" already defined at line 1',
        id="duplicate-key",
    ),
    pytest.param(
        [_text("s.yaml", f"name: t\nobjects:\n  - {BAD_LABELS}\n")],
        "s.yaml",
        "{s}:3:53: objects[0].metadata.labels: Expected `object`, got `int`",
        id="msgspec-type-error",
    ),
    pytest.param(
        [
            _text(
                "s.yaml",
                "name: t\nsteps:\n  - sleep: 1s\n  - createPods:\n"
                "      namePrefix: w\n      count: many\n      template: {}\n",
            )
        ],
        "s.yaml",
        '{s}:6:7: steps[1].createPods.count: expected an integer >= 1 and <= 1000000, got "many"',
        id="schema-type-error",
    ),
]


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, float]:
    started = time.perf_counter()
    code = cli.main(argv)
    elapsed = time.perf_counter() - started
    out = capsys.readouterr()
    return code, out.out, out.err, elapsed


def _expect(message: str, d: Path, main_file: str) -> str:
    return "error: " + message.format(s=d / main_file, d=d) + "\n"


@pytest.mark.real_time
@pytest.mark.parametrize(("makes", "main_file", "message"), SCENARIOS)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_hostile_scenario_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, makes: list[Make], main_file: str, message: str
) -> None:
    for make in makes:
        make(tmp_path)
    code, out, err, elapsed = _main([command, str(tmp_path / main_file)], capsys)
    assert (code, err, out) == (2, _expect(message, tmp_path, main_file), "")
    assert elapsed < 2.0


EXPLAIN = [
    pytest.param(
        [_text("c.yaml", b"kind: Pod # caf\xe9\n")],
        "{d}/c.yaml: cannot read file: not UTF-8 text: invalid byte 0xe9 at offset 15",
        id="not-utf8",
    ),
    pytest.param(
        [_big("c.yaml")], "{d}/c.yaml: cannot read file: larger than 64 MiB, the limit for an input file", id="65-MiB"
    ),
    pytest.param([_dir("c.yaml")], "{d}/c.yaml: cannot read file: Is a directory", id="directory"),
    pytest.param([_fifo("c.yaml")], "{d}/c.yaml: cannot read file: not a regular file (a FIFO)", id="fifo"),
    pytest.param([_text("c.yaml", alias_bomb())], "{d}/c.yaml:3:1: items: " + EXPANDS, id="alias-bomb"),
    pytest.param(
        [_text("c.yaml", "kind: Pod\nkind: Node\n")],
        '{d}/c.yaml: not valid YAML: while constructing a mapping in "<unicode string>", line 1, column 1 '
        'mapping key "kind" already defined at line 1 in "<unicode string>", line 2, column 1',
        id="duplicate-key",
    ),
    pytest.param(
        [_text("c.yaml", f"{POD}\n---\n{BAD_LABELS}\n")],
        "{d}/c.yaml:3:49: documents[1].metadata.labels: Expected `object`, got `int`",
        id="msgspec-type-error",
    ),
]


@pytest.mark.real_time
@pytest.mark.parametrize(("makes", "message"), EXPLAIN)
def test_hostile_explain_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], makes: list[Make], message: str
) -> None:
    for make in makes:
        make(tmp_path)
    code, out, err, elapsed = _main(["explain", str(tmp_path / "c.yaml")], capsys)
    assert (code, err, out) == (2, _expect(message, tmp_path, "c.yaml"), "")
    assert elapsed < 2.0


def test_explain_config_file_is_read_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text(POD)
    (tmp_path / "s.yaml").write_bytes(b"kind: \xff\n")
    code, _, err, _ = _main(["explain", str(tmp_path / "c.yaml"), "--config", str(tmp_path / "s.yaml")], capsys)
    assert (code, err) == (
        2,
        f"error: {tmp_path}/s.yaml: cannot read file: not UTF-8 text: invalid byte 0xff at offset 6\n",
    )


@pytest.mark.real_time
def test_no_traceback_reaches_stderr(tmp_path: Path) -> None:
    """The same refusals through a real process: one line on stderr, exit 2, within seconds."""
    (tmp_path / "bomb.yaml").write_text(alias_bomb())
    (tmp_path / "s.yaml").write_text("name: t\nobjects: [{file: bomb.yaml}, {file: /dev/zero}]\n")
    (tmp_path / "latin.yaml").write_bytes(b"kind: caf\xe9\n")
    for argv in (
        ["validate", str(tmp_path / "s.yaml")],
        ["run", str(tmp_path / "s.yaml")],
        ["explain", str(tmp_path / "bomb.yaml")],
        ["explain", str(tmp_path / "latin.yaml")],
    ):
        out = subprocess.run(
            [sys.executable, "-m", "emulator", *argv], capture_output=True, text=True, cwd=ROOT, timeout=60, check=False
        )
        assert out.returncode == 2, (argv, out.stderr)
        assert out.stderr.startswith("error: "), (argv, out.stderr)
        assert out.stderr.count("\n") == 1, (argv, out.stderr)
        assert "Traceback" not in out.stderr
        assert out.stdout == ""


BENCH = [
    pytest.param(
        [_text("w.yaml", b"workloads: caf\xe9\n")],
        "{d}/w.yaml: cannot read the file: not UTF-8 text: invalid byte 0xe9 at offset 14",
        id="not-utf8",
    ),
    pytest.param(
        [_big("w.yaml")],
        "{d}/w.yaml: cannot read the file: larger than 64 MiB, the limit for an input file",
        id="65-MiB",
    ),
    pytest.param([_fifo("w.yaml")], "{d}/w.yaml: cannot read the file: not a regular file (a FIFO)", id="fifo"),
    pytest.param(
        [_text("w.yaml", "a: &a [x]\nb: [" + ", ".join(["*a"] * 101) + "]\n")],
        '{d}/w.yaml: not valid YAML: while composing a document in "<unicode string>", line 1, column 1 '
        'document contains excessive aliasing (more than 100 alias uses) in "<unicode string>", line 2, column 4',
        id="aliases",
    ),
]


@pytest.mark.real_time
@pytest.mark.parametrize(("makes", "message"), BENCH)
def test_hostile_bench_workload_file_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], makes: list[Make], message: str
) -> None:
    for make in makes:
        make(tmp_path)
    code, out, err, elapsed = _main(["bench", "--list", "--file", str(tmp_path / "w.yaml")], capsys)
    assert (code, err, out) == (2, _expect(message, tmp_path, "w.yaml"), "")
    assert elapsed < 2.0


CONFIG = (
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
    "  - schedulerName: default-scheduler\n    plugins:\n      score:\n        enabled:\n          - name: Nope\n"
)
NOPE = 'plugin "Nope" does not exist: not an in-tree plugin, nor registered out of tree'


@pytest.mark.parametrize(
    ("files", "argv", "message"),
    [
        pytest.param(
            {"c.yaml": POD, "s.yaml": CONFIG},
            ["c.yaml", "--config", "s.yaml"],
            "s.yaml:8:13: profiles[0].plugins.score.enabled[0].name: " + NOPE,
            id="config-file",
        ),
        pytest.param(
            {"c.yaml": POD + "\n---\n" + CONFIG},
            ["c.yaml"],
            "c.yaml:10:13: documents[1].profiles[0].plugins.score.enabled[0].name: " + NOPE,
            id="config-among-the-manifests",
        ),
    ],
)
def test_explain_configuration_errors_carry_line_and_column(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    files: dict[str, str],
    argv: list[str],
    message: str,
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    code, out, err, _ = _main(["explain", *argv], capsys)
    assert (code, err, out) == (2, f"error: {message}\n", "")
