"""A start loads only what the command needs: the parser is built from the light
``emulator.app.commands.arguments``, and only the chosen command's module is imported.

Each check runs in a fresh interpreter (this process has imported everything already) and
reads its ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.real_time  # fresh interpreters: subprocesses

ROOT = Path(__file__).resolve().parents[2]

NOT_AT_START = ("numpy", "aiohttp", "cryptography", "agents", "emulator.app.bench", "rich")
"""Packages ``import emulator.cli`` must not load (``--help`` and every command pay for it)."""

NOT_FOR_VALIDATE = (
    "emulator.app.bench",
    "emulator.base.http",
    "emulator.app.report",
    "emulator.app.experiments",
    "aiohttp",
)
"""Packages ``validate`` needs none of."""

NOT_FOR_RUN = ("emulator.app.bench", "emulator.base.http", "emulator.app.experiments", "aiohttp", "cryptography")


def _loaded(code: str) -> list[str]:
    """The modules loaded in a fresh interpreter after running ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    modules: list[str] = json.loads(out.stdout.splitlines()[-1])
    return modules


def _under(modules: list[str], packages: tuple[str, ...]) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)]


def test_importing_the_command_line_loads_no_command() -> None:
    modules = _loaded("import emulator.cli")
    assert _under(modules, NOT_AT_START) == []
    assert _under(modules, ("emulator.app.commands",)) == ["emulator.app.commands", "emulator.app.commands.arguments"]


def test_the_parser_offers_every_command_without_importing_it() -> None:
    modules = _loaded(
        "import contextlib, io\n"
        "from emulator import cli\n"
        "for name in cli.COMMANDS:\n"
        "    with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "        cli.main([name, '--help'])"
    )
    assert _under(modules, NOT_AT_START) == []
    assert _under(modules, ("emulator.app.commands",)) == ["emulator.app.commands", "emulator.app.commands.arguments"]


@pytest.mark.parametrize(
    ("argv", "absent"),
    [
        pytest.param(["validate", "scenarios/quickstart.yaml"], NOT_FOR_VALIDATE, id="validate"),
        pytest.param(["run", "scenarios/quickstart.yaml", "--output", "json"], NOT_FOR_RUN, id="run"),
    ],
)
def test_a_command_imports_only_what_it_needs(argv: list[str], absent: tuple[str, ...]) -> None:
    modules = _loaded(
        "import contextlib, io\n"
        "from emulator import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert cli.main({argv!r}) == 0"
    )
    assert _under(modules, absent) == []
    command = f"emulator.app.commands.{argv[0]}"
    assert command in modules
    others = [f"emulator.app.commands.{name}" for name in ("bench", "compare", "hunt", "serve", "explain")]
    assert [m for m in others if m in modules] == []
