"""``python -m emulator validate FILE``: load and check a scenario; run nothing."""

from __future__ import annotations

import argparse
import sys

from rich.console import Console

from emulator.app.commands.common import check_scheduler
from emulator.app.scenario.loader import load_scenario

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    out = Console(highlight=False, soft_wrap=True)
    warnings: list[str] = []
    scenario = load_scenario(args.file, warnings)
    for line in warnings:
        print(f"warning: {line}", file=sys.stderr)
    check_scheduler(scenario, args.file)
    out.print(
        f"{args.file}: valid scenario {scenario.name!r}: {len(scenario.objects)} objects, "
        f"{sum(g.count for g in scenario.nodes)} nodes, {len(scenario.steps)} steps, "
        f"{len(scenario.expect)} expectations"
    )
    return 0
