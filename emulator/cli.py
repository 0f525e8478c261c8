"""The command line: ``python -m emulator COMMAND ...``.

Each subcommand is a module of ``emulator.commands`` with ``add_parser(subparsers)`` and
``run(args) -> int``; this module builds the parser from them and maps bad input to exit
status 2. Exit status: 0 every expectation met; 1 an expectation failed (or a waitFor timed
out, or the simulation deadlocked); 2 bad input (one clear message on stderr naming the file,
the path inside it and what was expected; no traceback; nothing run); 130 interrupted.
``serve`` ends on SIGINT or SIGTERM by design: that is a clean stop (0 or 1 by its
expectations, as ``run``), not an interruption.

Bad input is any ``emulator.inputs.InputError`` (``ScenarioError``, ``StepError``,
``ManifestError``, ``ConfigError``, ``SetupError``, ``UsageError``, ``ExplainError``,
``HuntError``, ``WorkloadError``, ``CompareError``, ``ExecutorError``, ``ResultsError``): one
line, ``error: <file>[:<line>:<column>]: <path>: <detail>``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from emulator.commands import bench, compare, explain, hunt, report, run, serve, validate
from emulator.inputs import InputError

__all__ = ["main"]

COMMANDS = {
    "run": run,
    "serve": serve,
    "validate": validate,
    "explain": explain,
    "hunt": hunt,
    "compare": compare,
    "bench": bench,
    "report": report,
}
"""Subcommand name → module, in the order ``--help`` lists them."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m emulator",
        description="A Kubernetes control plane (API server, kube-scheduler, kubelets) emulated in one process.",
    )
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        code: int = COMMANDS[args.command].run(args)
        return code
    except InputError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
