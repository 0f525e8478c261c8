"""The status ConfigMap ``kube-system/cluster-autoscaler-status`` (``clusterstate/utils/status.go``
``WriteStatusConfigMap``, ``clusterstate/api/types.go``, ``clusterstate/clusterstate.go``
``GetStatus``, 1.34): written every loop, its ``status`` key the YAML of a
``ClusterAutoscalerStatus`` (gopkg.in/yaml.v2: fields in declaration order, ``omitempty`` ones
left out while zero) and the annotation ``cluster-autoscaler.kubernetes.io/last-updated`` the
loop's time (``ConfigMapLastUpdateFormat``: ``2006-01-02 15:04:05.999999999 -0700 MST``, also
the document's ``time``).

``StatusBuilder.build`` is ``GetStatus``: ``autoscalerStatus: Running``; ``clusterWide`` and,
per node group in the cloud's order, ``health`` (``Healthy``; ``nodeCounts``: ``registered``
{``total``, ``ready``, ``notStarted`` (not Ready, registered less than ``MaxNodeStartupTime``,
15 min, ago), ``unready`` {``total``, ``resourceUnready``} (the other not-Ready ones; left out
while 0)}, ``longUnregistered``, ``unregistered`` (requested, not registered); per group
``cloudProviderTarget``, ``minSize``, ``maxSize``), ``scaleUp`` (per group ``InProgress`` while
its requested nodes have not all registered, else ``Backoff`` with ``backoffInfo`` {``errorCode:
timeout``, ``errorMessage: Scale-up timed out for node group <g> after <d>``} while backed off,
else ``NoActivity``; cluster-wide ``InProgress`` when a group is) and ``scaleDown``
(``CandidatesPresent`` with ``candidates`` while nodes are unneeded, else ``NoCandidates``; its
probe time the last scale-down update). A condition's ``lastTransitionTime`` is its probe time
when its status changed from the previous document's, else the previous transition time.
Condition times are ``metav1.Time`` marshalled by yaml.v2 as ``time.Time`` text (RFC 3339 with
nanoseconds, trailing zeros dropped).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

import yaml

from emulator.base.runtime.clock import calendar_epoch

__all__ = [
    "LAST_UPDATED_ANNOTATION",
    "MAX_NODE_STARTUP_TIME",
    "Counts",
    "GroupState",
    "StatusBuilder",
    "block_yaml",
    "counts_of",
    "initializing_yaml",
    "last_update_format",
    "rfc3339_nano",
]

LAST_UPDATED_ANNOTATION: Final = "cluster-autoscaler.kubernetes.io/last-updated"
MAX_NODE_STARTUP_TIME: Final = 900.0
"""``MaxNodeStartupTime``: a not-Ready node registered less than this long ago is ``notStarted``."""


@dataclass(frozen=True, slots=True)
class Counts:
    """A ``Readiness``: registered nodes by state, and the requested ones not registered."""

    registered: int = 0
    ready: int = 0
    not_started: int = 0
    unready: int = 0
    unregistered: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(
            self.registered + other.registered,
            self.ready + other.ready,
            self.not_started + other.not_started,
            self.unready + other.unready,
            self.unregistered + other.unregistered,
        )


@dataclass(frozen=True, slots=True)
class GroupState:
    name: str
    counts: Counts
    target: int
    min_size: int
    max_size: int
    candidates: int
    scaling_up: bool
    """``IsNodeGroupScalingUp``: a scale-up request whose nodes have not all registered."""
    backoff: str = ""
    """The backoff's error message while the group is backed off."""


def _when(t: float) -> datetime:
    return calendar_epoch() + timedelta(seconds=t)


def _fraction(when: datetime) -> str:
    """Go's ``.999999999``: the nanoseconds without trailing zeros, nothing when 0."""
    frac = f"{when.microsecond * 1000:09d}".rstrip("0")
    return f".{frac}" if frac else ""


def last_update_format(t: float) -> str:
    when = _when(t)
    return when.strftime("%Y-%m-%d %H:%M:%S") + _fraction(when) + " +0000 UTC"


def rfc3339_nano(t: float) -> str:
    """Go's ``time.RFC3339Nano`` in UTC: ``2023-11-24T04:28:19.000048988Z``."""
    when = _when(t)
    return when.strftime("%Y-%m-%dT%H:%M:%S") + _fraction(when) + "Z"


def initializing_yaml(t: float) -> str:
    """``EmptyClusterAutoscalerStatus`` as ``WriteStatusConfigMap`` writes it at start."""
    return str(yaml.safe_dump({"time": last_update_format(t), "autoscalerStatus": "Initializing"}, sort_keys=False))


def _node_count(c: Counts) -> dict[str, Any]:
    registered: dict[str, Any] = {"total": c.registered, "ready": c.ready, "notStarted": c.not_started}
    if c.unready:
        registered["unready"] = {"total": c.unready, "resourceUnready": 0}
    return {"registered": registered, "longUnregistered": 0, "unregistered": c.unregistered}


class StatusBuilder:
    """``GetStatus`` across loops: it keeps the previous document's condition statuses and
    transition times (``csr.lastStatus``)."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, str], tuple[str, str]] = {}
        """(scope, condition) -> (status, lastTransitionTime) of the previous document."""

    def _condition(self, scope: str, name: str, status: str, probe: str, body: dict[str, Any]) -> dict[str, Any]:
        previous = self._last.get((scope, name))
        transition = previous[1] if previous is not None and previous[0] == status else probe
        self._next[(scope, name)] = (status, transition)
        return {"status": status, **body, "lastProbeTime": probe, "lastTransitionTime": transition}

    def build(
        self, t: float, groups: Sequence[GroupState], other: Counts, scale_down_probed: float | None = None
    ) -> str:
        """The ``status`` document at clock time ``t``; ``other``: the nodes outside any group
        (counted cluster-wide, as upstream does); ``scale_down_probed``: the last scale-down
        update (``t`` when None)."""
        self._next: dict[tuple[str, str], tuple[str, str]] = {}
        probe = rfc3339_nano(t)
        down_probe = rfc3339_nano(t if scale_down_probed is None else scale_down_probed)
        out: list[dict[str, Any]] = []
        for g in groups:
            health = {
                "nodeCounts": _node_count(g.counts),
                "cloudProviderTarget": g.target,
                "minSize": g.min_size,
                "maxSize": g.max_size,
            }
            if g.scaling_up:
                up_status, up_body = "InProgress", {}
            elif g.backoff:
                up_status, up_body = "Backoff", {"backoffInfo": {"errorCode": "timeout", "errorMessage": g.backoff}}
            else:
                up_status, up_body = "NoActivity", {}
            down = {"candidates": g.candidates} if g.candidates else {}
            out.append(
                {
                    "name": g.name,
                    "health": self._condition(g.name, "health", "Healthy", probe, health),
                    "scaleUp": self._condition(g.name, "scaleUp", up_status, probe, up_body),
                    "scaleDown": self._condition(
                        g.name, "scaleDown", "CandidatesPresent" if g.candidates else "NoCandidates", down_probe, down
                    ),
                }
            )
        total = other
        for g in groups:
            total = total + g.counts
        candidates = sum(g.candidates for g in groups)
        wide = {
            "health": self._condition("", "health", "Healthy", probe, {"nodeCounts": _node_count(total)}),
            "scaleUp": self._condition(
                "", "scaleUp", "InProgress" if any(g.scaling_up for g in groups) else "NoActivity", probe, {}
            ),
            "scaleDown": self._condition(
                "",
                "scaleDown",
                "CandidatesPresent" if candidates else "NoCandidates",
                down_probe,
                {"candidates": candidates} if candidates else {},
            ),
        }
        self._last = self._next
        doc: dict[str, Any] = {"time": last_update_format(t), "autoscalerStatus": "Running", "clusterWide": wide}
        if out:
            doc["nodeGroups"] = out
        return block_yaml(doc)


_WIDTH: Final = 80
"""PyYAML's default ``best_width``: a scalar with a space may be folded past this column."""
_RFC3339: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z")
_scalars: dict[str, str | None] = {}
"""String -> its PyYAML rendering as a block mapping's value (None: no single-line form)."""


class _Unsure(Exception):
    """A scalar whose rendering depends on its column: the document goes through PyYAML."""


def _scalar(text: str, column: int) -> str:
    if _RFC3339.fullmatch(text):
        return f"'{text}'"  # the timestamp resolver matches it: quoted, no quote inside
    out = _scalars.get(text, "")
    if out == "":
        alone = str(yaml.safe_dump(text))
        quoted = "'" + text.replace("'", "''") + "'\n"
        out = alone[:-5] if alone == text + "\n...\n" else alone[:-1] if alone == quoted else None
        if len(_scalars) < 4096:
            _scalars[text] = out
    if out is None or (" " in out and column + len(out) > _WIDTH):
        raise _Unsure
    return out


def _emit(lines: list[str], value: Any, indent: int) -> None:
    pad = " " * indent
    for key, v in value.items():
        if len(key) > 100 or _scalar(key, 0) != key:  # a key PyYAML would quote (or mark "? ")
            raise _Unsure
        if isinstance(v, dict):
            if not v:
                lines.append(f"{pad}{key}: {{}}")
                continue
            lines.append(f"{pad}{key}:")
            _emit(lines, v, indent + 2)
        elif isinstance(v, list):
            if not v:
                lines.append(f"{pad}{key}: []")
                continue
            lines.append(f"{pad}{key}:")
            for item in v:  # PyYAML's indentless sequence of mappings
                if not isinstance(item, dict) or not item:
                    raise _Unsure
                start = len(lines)
                _emit(lines, item, indent + 2)
                lines[start] = f"{pad}- {lines[start][indent + 2 :]}"
        elif isinstance(v, bool) or not isinstance(v, int | str):
            raise _Unsure
        elif isinstance(v, int):
            lines.append(f"{pad}{key}: {v}")
        else:
            lines.append(f"{pad}{key}: {_scalar(v, indent + len(key) + 2)}")


def block_yaml(doc: dict[str, Any]) -> str:
    """``yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)``, byte for byte, for a
    document of mappings (string keys), lists of non-empty mappings, ints and strings, written
    line by line (the status is written every loop); a string whose form depends on its column
    (one PyYAML could fold) sends the whole document through PyYAML."""
    lines: list[str] = []
    try:
        if not doc:
            raise _Unsure
        _emit(lines, doc, 0)
    except _Unsure:
        return str(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))
    return "\n".join(lines) + "\n"


def counts_of(nodes: Sequence[tuple[bool, float]], now: float, target: int | None = None) -> Counts:
    """``updateReadinessStats`` over ``(ready, registered at)`` pairs; ``target``: the group's
    target size (its nodes requested and not registered are ``unregistered``)."""
    ready = sum(1 for r, _ in nodes if r)
    not_started = sum(1 for r, since in nodes if not r and since + MAX_NODE_STARTUP_TIME > now)
    unready = len(nodes) - ready - not_started
    unregistered = max(0, target - len(nodes)) if target is not None else 0
    return Counts(len(nodes), ready, not_started, unready, unregistered)
