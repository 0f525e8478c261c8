"""The load model: what each running pod uses, as a pure function of the pods and the time.

Upstream has no such thing (a real pod's usage is what its process does); the emulator needs
one to feed the resource metrics API (``metrics.k8s.io``, ``kubectl top``) and through it the
Horizontal Pod Autoscaler. Two sources, both deterministic, on the run's clock:

* the annotation ``emulator.k8s.io/usage: '{"cpu": "250m", "memory": "200Mi"}'`` on a pod (or
  its template): that pod's own usage;
* ``LoadRule``s (a scenario's ``load:`` section): for the pods of one namespace matching a label
  selector, a requests-per-second ``LoadCurve`` (constant, steps, or a day curve), a usage per
  request per second (``perRequest``) and a usage per pod (``base``). The traffic is spread
  evenly over the rule's Running and Ready pods (a Service's endpoints); a Running pod that is
  not Ready gets only its base.

A pod's usage is its annotation (else the bases of the rules that select it) plus its share of
each selecting rule's traffic. Only Running pods have usage (metrics-server reports the pods
the kubelets run). Values are kept in milli-units (``Quantity.milli``: millicores, and bytes
× 1000 for memory) and rounded half to even, so a run's figures are the same on every machine.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import is_
from typing import Final

from emulator.base.api.core import Pod
from emulator.base.api.labelselector import EVERYTHING, Selector
from emulator.base.api.quantity import parse_quantity

__all__ = [
    "DAY_SECONDS",
    "USAGE_ANNOTATION",
    "LoadCurve",
    "LoadModel",
    "LoadRule",
    "Usage",
    "is_running_and_ready",
    "parse_usage",
    "usage_problem",
]

USAGE_ANNOTATION: Final = "emulator.k8s.io/usage"
DAY_SECONDS: Final = 86_400.0
Usage = dict[str, int]
"""Resource name → milli-units."""


def parse_usage(text: str) -> Usage:
    """The annotation's JSON object of quantities; ``ValueError`` with what is wrong."""
    try:
        raw = json.loads(text)
    except ValueError:
        raise ValueError('expected a JSON object of quantities, e.g. {"cpu": "250m", "memory": "200Mi"}') from None
    if not isinstance(raw, dict):
        raise ValueError('expected a JSON object of quantities, e.g. {"cpu": "250m", "memory": "200Mi"}')
    out: Usage = {}
    for name, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(f"{name}: expected a quantity")
        try:
            q = parse_quantity(value)
        except ValueError as err:
            raise ValueError(f"{name}: {err}") from None
        if q.milli < 0:
            raise ValueError(f"{name}: must be greater than or equal to 0")
        out[str(name)] = q.milli
    return out


def usage_problem(annotations: Mapping[str, str]) -> str | None:
    """What is wrong with a pod's usage annotation, or None (absent or valid)."""
    text = annotations.get(USAGE_ANNOTATION)
    if text is None:
        return None
    try:
        parse_usage(text)
    except ValueError as err:
        return str(err)
    return None


def is_running_and_ready(pod: Pod) -> bool:
    if pod.status.phase != "Running" or pod.metadata.deletion_timestamp is not None:
        return False
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions)


@dataclass(frozen=True, slots=True)
class LoadCurve:
    """Requests per second over time: ``constant``; else ``steps`` ((from time, value), sorted:
    the value of the last step started, 0 before the first); else ``daily`` (values at evenly
    spaced times of a 24 h day from 00:00, linearly interpolated, wrapping at midnight; the
    day starts at clock time 0 shifted by ``day_offset`` seconds)."""

    constant: float | None = None
    steps: tuple[tuple[float, float], ...] = ()
    daily: tuple[float, ...] = ()
    day_offset: float = 0.0

    def at(self, t: float) -> float:
        if self.constant is not None:
            return self.constant
        if self.steps:
            i = bisect.bisect_right([s[0] for s in self.steps], t) - 1
            return self.steps[i][1] if i >= 0 else 0.0
        if self.daily:
            n = len(self.daily)
            x = ((t + self.day_offset) % DAY_SECONDS) / DAY_SECONDS * n
            i = int(x)
            frac = x - i
            a, b = self.daily[i % n], self.daily[(i + 1) % n]
            return a + (b - a) * frac
        return 0.0


@dataclass(frozen=True, slots=True)
class LoadRule:
    namespace: str = "default"
    selector: Selector = EVERYTHING
    curve: LoadCurve = LoadCurve()
    per_request: Mapping[str, float] = field(default_factory=dict)
    """Resource → milli-units per request per second."""
    base: Mapping[str, int] = field(default_factory=dict)
    """Resource → milli-units every Running pod of the rule uses."""

    def matches(self, pod: Pod) -> bool:
        return pod.metadata.namespace == self.namespace and self.selector.matches(pod.metadata.labels)


class LoadModel:
    """The rules of a run (none: annotations only)."""

    __slots__ = ("_combos", "_keys", "_pods", "_ready", "_seen", "rules", "version")

    def __init__(self, rules: Iterable[LoadRule] = ()) -> None:
        self.rules = tuple(rules)
        self._seen: dict[tuple[str, str], tuple[Pod, tuple[bool, ...], bool, str | None]] = {}
        """(namespace, name) -> (the Pod object, the rules it matches, Ready, its usage annotation)
        as of the last call: a pod object is read once (objects are replaced, not changed)."""
        self._pods: list[Pod] = []
        """The pods of the last call, in its order: the same objects again need no pass over them."""
        self._keys: list[tuple[str, str]] = []
        self._combos: list[tuple[tuple[bool, ...], bool, str | None]] = []
        """The last call's Running pods: their keys and (rules matched, Ready, annotation), in order."""
        self._ready: list[int] = []
        """The last call's Running and Ready pods per rule."""
        self.version = 0
        """Counts the calls whose pods were not the previous call's (the same objects in the same
        order): a reader may keep what it derived from ``shared_usage``'s keys while it is the same."""

    def __repr__(self) -> str:
        return f"<LoadModel {len(self.rules)} rules>"

    def usage(self, pods: Iterable[Pod], t: float) -> dict[tuple[str, str], Usage]:
        """Every Running pod's usage at ``t``, by (namespace, name), in the pods' order. A pod's
        usage depends on its annotation, the rules it matches and whether it is Ready: it is
        computed once per such combination (each pod gets its own copy)."""
        return {key: dict(u) for key, u in self.shared_usage(pods, t).items()}

    def shared_usage(self, pods: Iterable[Pod], t: float) -> dict[tuple[str, str], Usage]:
        """``usage``, the pods of one combination sharing one dict: read them, never change them.
        Called again with the same pod objects in the same order (the HPA's reads every 15 s of a
        cluster that did not change), only the rates are computed again."""
        listed = pods if isinstance(pods, list) else list(pods)
        last = self._pods
        if len(listed) != len(last) or not all(map(is_, listed, last)):
            self._scan(listed)
        rules = self.rules
        rates = [rule.curve.at(t) / n if n else 0.0 for rule, n in zip(rules, self._ready, strict=True)]
        combos = self._combos
        made = {c: _usage(rules, rates, c[0], c[1], c[2]) for c in dict.fromkeys(combos)}
        return dict(zip(self._keys, map(made.__getitem__, combos), strict=True))

    def _scan(self, pods: list[Pod]) -> None:
        """Read ``pods`` (each object once over its life: ``_seen``) into the call's rows."""
        rules = self.rules
        seen = self._seen
        kept: dict[tuple[str, str], tuple[Pod, tuple[bool, ...], bool, str | None]] = {}
        keys: list[tuple[str, str]] = []
        combos: list[tuple[tuple[bool, ...], bool, str | None]] = []
        for p in pods:
            meta = p.metadata
            if p.status.phase != "Running" or meta.deletion_timestamp is not None:
                continue
            key = (meta.namespace, meta.name)
            row = seen.get(key)
            if row is None or row[0] is not p:
                matched = tuple(rule.matches(p) for rule in rules)
                row = (p, matched, is_running_and_ready(p), meta.annotations.get(USAGE_ANNOTATION))
            kept[key] = row
            keys.append(key)
            combos.append((row[1], row[2], row[3]))
        self._seen = kept
        self._pods = list(pods)
        self._keys = keys
        self._combos = combos
        self._ready = [sum(1 for m, r, _a in combos if m[i] and r) for i in range(len(rules))]
        self.version += 1


def _usage(
    rules: tuple[LoadRule, ...], rates: list[float], matches: tuple[bool, ...], is_ready: bool, text: str | None
) -> Usage:
    own = _annotation_text_usage(text)
    usage: dict[str, float] = {k: float(v) for k, v in (own or {}).items()}
    for rule, hit, rps in zip(rules, matches, rates, strict=True):
        if not hit:
            continue
        if own is None:
            for k, b in rule.base.items():
                usage[k] = usage.get(k, 0.0) + b
        if not is_ready:
            continue
        for k, per in rule.per_request.items():
            usage[k] = usage.get(k, 0.0) + rps * per
    return {k: round(v) for k, v in usage.items()}


def _annotation_text_usage(text: str | None) -> Usage | None:
    if text is None:
        return None
    try:
        return parse_usage(text)
    except ValueError:
        return None  # refused by validation on create; a pod restored from a dump is skipped
