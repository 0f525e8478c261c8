"""A plugin's verdict: ``Code`` and ``Status`` (upstream ``framework/interface.go``, the status
half: ``Code``, ``Status``, ``AsStatus``, ``NodeScore``, ``MaxNodeScore``/``MinNodeScore``).

What this module owns: the status codes in upstream's order, the immutable ``Status`` (code,
reasons, the plugin that produced it) with the shared ``SUCCESS`` and ``SKIP``, ``as_status``
(an exception a plugin raised, as an ``Error`` status), ``error_status`` (a runner's ``Error``
with the point's message), ``NodeScore`` and the score bounds. An expected "no" is a Status,
never a raise.

What it does not own: the plugin interfaces (``interface.py``), the runners that stamp a
plugin's name and point on a status (``runtime.py`` and its mixins), the per-node statuses of a
failed cycle (``node_to_status.py``, ``diagnosis.py``). Import these names from ``types.py``
(the framework's vocabulary) or, in hot modules, from here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "SKIP",
    "SUCCESS",
    "Code",
    "NodeScore",
    "Status",
    "as_status",
    "error_status",
]

MAX_NODE_SCORE: Final = 100
MIN_NODE_SCORE: Final = 0


class Code(enum.IntEnum):
    """Upstream status codes, in upstream's iota order."""

    Success = 0
    Error = 1
    Unschedulable = 2
    UnschedulableAndUnresolvable = 3
    Wait = 4
    Skip = 5
    Pending = 6


class Status:
    """A plugin's result: code, reasons, and the plugin that produced it."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: Code = Code.Success, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin

    @classmethod
    def success(cls) -> Status:
        return SUCCESS

    def is_success(self) -> bool:
        return self.code is Code.Success

    def is_skip(self) -> bool:
        return self.code is Code.Skip

    def is_wait(self) -> bool:
        return self.code is Code.Wait

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (Code.Unschedulable, Code.UnschedulableAndUnresolvable, Code.Pending)

    def with_plugin(self, plugin: str) -> Status:
        if self.plugin == plugin:
            return self
        return Status(self.code, *self.reasons, plugin=plugin)

    def message(self) -> str:
        return ", ".join(self.reasons)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        plugin = f" plugin={self.plugin}" if self.plugin else ""
        reasons = f" {list(self.reasons)!r}" if self.reasons else ""
        return f"<Status {self.code.name}{reasons}{plugin}>"


SUCCESS: Final = Status()
SKIP: Final = Status(Code.Skip)
"""A plugin's Skip, shared (statuses are never changed in place: ``with_plugin`` copies)."""


def error_status(msg: str, plugin: str) -> Status:
    """A runner's ``Error`` for ``plugin`` with the point's message (upstream's
    ``AsStatus(fmt.Errorf(...)).WithPlugin(name)``)."""
    return Status(Code.Error, msg, plugin=plugin)


def as_status(err: Exception) -> Status:
    """Upstream ``AsStatus(err)``: an exception a plugin raised, as an ``Error`` status whose
    message is the exception's type and text (the runners add the plugin and the point)."""
    text = str(err)
    return Status(Code.Error, f"{type(err).__name__}: {text}" if text else type(err).__name__)


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int
