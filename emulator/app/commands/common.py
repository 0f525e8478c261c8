"""What several subcommands share: the usage error and the scheduler
set-up check that turns a bad KubeSchedulerConfiguration into bad input."""

from __future__ import annotations

from pathlib import Path

from agents.scheduler import SetupError, build_scheduler_setup
from emulator.app.scenario.schedulers import scheduler_settings
from emulator.app.scenario.schema import Scenario
from emulator.base.inputs import PlainInputError

__all__ = ["UsageError", "check_scheduler"]


class UsageError(PlainInputError):
    """Bad input found by a command itself (an output file that cannot be written, ...)."""


def check_scheduler(scenario: Scenario, path: Path) -> None:
    """Build the scheduler set-up once before running, its plugins constructed: a bad
    configuration, a plugin module that fails at import or a plugin constructor that raises
    is bad input (exit 2, one line naming the plugin and the file/path)."""
    try:
        build_scheduler_setup(scheduler_settings(scenario, source=str(path)), construct=True)
    except SetupError as err:
        raise UsageError(str(err)) from None
