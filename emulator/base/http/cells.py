"""How the printers write a cell: apimachinery's and kubectl's formatting helpers.

Owns the text of the values every row shares: ages (apimachinery's
``duration.HumanDuration``; ``Since`` is the printers' ``translateTimestampSince`` against
one ``now``), label maps (``labels.FormatLabels``), label selectors
(``metav1.FormatLabelSelector``, and the selector string printDeployment prints), int-or-string
values and bool pointers, and the container names and images of a pod template. It knows
no kind: each kind's row is ``emulator.base.http.printers``'.

Pure: ``now`` is given, no clock reads, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from emulator.base.api.core import Container, LabelSelector
from emulator.base.api.intstr import IntOrString
from emulator.base.runtime.clock import parse_timestamp

__all__ = [
    "AGE_COLUMN",
    "AGE_DOC",
    "NAME_COLUMN",
    "NAME_DOC",
    "NONE",
    "Since",
    "bool_ptr",
    "column",
    "containers",
    "format_labels",
    "format_selector",
    "human_duration",
    "intstr",
    "selector_string",
]

NONE: Final = "<none>"

# --- durations ---------------------------------------------------------------------------


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``5s``, ``3m20s``, ``15m``, ``5h3m``, ``2d5h``, ``3y``.

    Two significant units while they matter, one afterwards; up to 1 s in the future is ``0s``,
    further is ``<invalid>``.
    """
    whole = int(seconds)  # Go's int(d.Seconds()): truncated toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        s = whole % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


class Since:
    """``translateTimestampSince`` against one ``now``, parsing each distinct timestamp once
    (a list's objects share few creation seconds)."""

    __slots__ = ("_memo", "now")

    def __init__(self, now: float) -> None:
        self.now = now
        self._memo: dict[str, str] = {}

    def __call__(self, stamp: str | None) -> str:
        if not stamp:
            return "<unknown>"
        text = self._memo.get(stamp)
        if text is None:
            text = self._memo[stamp] = human_duration(self.now - parse_timestamp(stamp))
        return text


# --- labels, selectors, values ----------------------------------------------------------


def containers(containers: Sequence[Container]) -> tuple[str, str]:
    return ",".join(c.name for c in containers), ",".join(c.image for c in containers)


def format_labels(labels: dict[str, str]) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` joined by commas, ``<none>`` when empty."""
    if not labels:
        return NONE
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_selector(selector: LabelSelector | None) -> str:
    """``metav1.FormatLabelSelector``: ``<none>`` for nil or empty, else the selector string with
    matchLabels and expressions sorted by key (``a=b,c in (x,y),!d``)."""
    if selector is None:
        return NONE
    parts: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in selector.match_labels.items()]
    for req in selector.match_expressions:
        values = ",".join(sorted(req.values))
        match req.operator:
            case "In":
                parts.append((req.key, f"{req.key} in ({values})"))
            case "NotIn":
                parts.append((req.key, f"{req.key} notin ({values})"))
            case "Exists":
                parts.append((req.key, req.key))
            case "DoesNotExist":
                parts.append((req.key, f"!{req.key}"))
            case _:
                return "<error>"
    text = ",".join(p for _, p in sorted(parts, key=lambda kp: kp[0]))
    return text or NONE


def selector_string(selector: LabelSelector | None) -> str:
    """``LabelSelectorAsSelector(...).String()`` as printDeployment uses it: nil selects nothing
    (``""``), empty selects everything (``""``)."""
    text = format_selector(selector)
    return "" if text == NONE else text


def intstr(value: IntOrString | None) -> str:
    if value is None:
        return "N/A"
    return str(value)


def bool_ptr(value: bool | None) -> str:
    if value is None:
        return "<unset>"
    return "True" if value else "False"


# --- Table column definitions (``metav1.TableColumnDefinition``) ------------------------------

NAME_DOC: Final = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended "
    "for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
AGE_DOC: Final = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "
    "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


def column(
    name: str, type_: str = "string", description: str = "", *, fmt: str = "", priority: int = 0
) -> dict[str, Any]:
    """One ``TableColumnDefinition`` as the Table's JSON carries it."""
    return {"name": name, "type": type_, "format": fmt, "description": description, "priority": priority}


NAME_COLUMN: Final = column("Name", "string", NAME_DOC, fmt="name")
AGE_COLUMN: Final = column("Age", "string", AGE_DOC)
