"""The command line: ``python -m emulator COMMAND ...``.

Each subcommand is a module of ``emulator.app.commands`` with ``run(args) -> int``; its arguments
are ``emulator.app.commands.arguments``' ``add_<command>(subparsers)``. This module builds the whole
parser from those (every subcommand, every option, every ``--help``), imports only the chosen
command's module, and maps bad input to exit status 2. Exit status: 0 every expectation met;
1 an expectation failed (or a waitFor timed out, or the simulation deadlocked); 2 bad input
(one clear message on stderr naming the file, the path inside it and what was expected; no
traceback; nothing run); 130 interrupted. A sweep (``hunt``, ``compare``) whose executor broke
and whose fresh replacement refused work too ends with one ``error: --executor:`` line and 1.
``serve`` ends on SIGINT or SIGTERM by design: that is a clean stop (0 or 1 by its expectations,
as ``run``), not an interruption.

Bad input is any ``emulator.base.inputs.InputError`` (``ScenarioError``, ``StepError``,
``ManifestError``, ``ConfigError``, ``SetupError``, ``UsageError``, ``ExplainError``,
``HuntError``, ``WorkloadError``, ``CompareError``, ``ExecutorError``, ``ResultsError``): one
line, ``error: <file>[:<line>:<column>]: <path>: <detail>``.

Start-up (median of 5 on a loaded 2-core machine, wall / CPU seconds; bare ``python -c pass``
0.30 / 0.08): ``import emulator.cli`` 2.13 / 0.64 when it imported every command (numpy, the
bench harness, the scheduler, the kubelet), 0.51 / 0.16 now (argparse, PyYAML, msgspec, the
runtime); ``validate scenarios/quickstart.yaml`` 1.94 / 0.62 then, 1.47 / 0.42 now (the rest
is the scheduler it builds to check the configuration). ``tests/cli/test_cli_imports.py``
pins what a start may load.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import BrokenExecutor
from typing import Any, Final

from emulator.app.commands import arguments
from emulator.base.inputs import InputError

__all__ = ["COMMANDS", "main"]

COMMANDS: Final[dict[str, tuple[Callable[[Any], argparse.ArgumentParser], str]]] = {
    "run": (arguments.add_run, "emulator.app.commands.run"),
    "serve": (arguments.add_serve, "emulator.app.commands.serve"),
    "validate": (arguments.add_validate, "emulator.app.commands.validate"),
    "explain": (arguments.add_explain, "emulator.app.commands.explain"),
    "hunt": (arguments.add_hunt, "emulator.app.commands.hunt"),
    "compare": (arguments.add_compare, "emulator.app.commands.compare"),
    "bench": (arguments.add_bench, "emulator.app.commands.bench"),
    "report": (arguments.add_report, "emulator.app.commands.report"),
}
"""Subcommand name → (its arguments, the module whose ``run(args)`` it calls), in the order
``--help`` lists them. The module is imported only when its command is chosen."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m emulator",
        description="A Kubernetes control plane (API server, kube-scheduler, kubelets) emulated in one process.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add, _ in COMMANDS.values():
        add(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        command = importlib.import_module(COMMANDS[args.command][1])
        code: int = command.run(args)
        return code
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except BrokenExecutor as err:  # hunt, compare: a broken pool's replacement refused work too
        print(f"error: --executor: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
