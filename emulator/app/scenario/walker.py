"""The schema-driven walk: a YAML value and a type from ``schema`` in, a Struct out.

What this module owns: reading any value of the scenario's schema (Structs, lists, dicts,
unions, literals, scalars) with an exact path for every error. Field names, required fields,
defaults and constraints (``msgspec.Meta`` ``ge``/``gt``/``le``/``min_length``/``pattern``,
and ``extra={"format": "duration" | "quantity" | "rate"}``) come from the Structs, so the
walk and the schema cannot drift; ``describe`` turns a type into the "expected ..." words.
Types with their own syntax are read by ``readers`` (manifests, templates, the scheduler
configuration), here (durations, quantities, label selectors) or by the readers a subclass
registers in ``readers`` (steps, expectations and faults: ``verbs``); cross-field checks
run from the ``after`` hooks once a Struct is built. It does not read files.
"""

from __future__ import annotations

import json
import math
import re
import types
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec

from emulator.app.scenario.limits import parse_simulated_duration
from emulator.app.scenario.readers import Readers, ScenarioError
from emulator.app.scenario.schema import Priorities, SchedulerConfig
from emulator.base.api.codec import ApiObject
from emulator.base.api.core import LabelSelector, Node, Pod
from emulator.base.api.labelparse import parse_label_selector
from emulator.base.api.quantity import MAX_VALUE, fits_int64_milli, parse_quantity
from emulator.base.inputs import join_path, show
from emulator.base.runtime.clock import format_duration

__all__ = ["SchemaWalker", "describe"]

_DURATION = "a duration like 5ms, 1.5s, 2m or 1h30m"
_QUANTITY = "a quantity like 100Mi, 1Gi or 500M"
_RATE = "a quantity per second like 50Mi or 50Mi/s"
_UNION = (Union, types.UnionType)

Hook = Callable[[Any, dict[str, Any], str], Any]
"""``(struct, raw mapping, path) -> struct``: a check (or defaulting) once a Struct is built."""
Reader = Callable[[Any, str], Any]
"""``(YAML value, path) -> value`` for a type with its own syntax."""


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any float
        return False


def _meta(tp: Any) -> tuple[Any, msgspec.Meta | None]:
    if get_origin(tp) is Annotated:
        base, *extras = get_args(tp)
        return base, next((m for m in extras if isinstance(m, msgspec.Meta)), None)
    return tp, None


def describe(tp: Any) -> str:
    """What a value of type ``tp`` looks like, for "expected ..." messages."""
    base, meta = _meta(tp)
    extra = (meta.extra if meta is not None else None) or {}
    if "expected" in extra:
        return str(extra["expected"])
    if extra.get("format") == "duration":
        return _DURATION
    if extra.get("format") == "quantity":
        return _QUANTITY
    if extra.get("format") == "rate":
        return _RATE
    if extra.get("format") == "milli":
        return _QUANTITY
    if get_origin(base) in _UNION:
        return " or ".join(describe(a) for a in get_args(base) if a is not type(None))
    if get_origin(base) is Literal:
        options = [json.dumps(a) for a in get_args(base)]
        return options[0] if len(options) == 1 else ", ".join(options[:-1]) + " or " + options[-1]
    what = {str: "a string", bool: "true or false", int: "an integer", float: "a number"}.get(base)
    if what is None:
        return "a list" if get_origin(base) is list else "a mapping"
    if meta is not None and meta.ge is not None:
        what += f" >= {meta.ge}"
    if meta is not None and meta.gt is not None:
        what += f" > {meta.gt}"
    if meta is not None and meta.le is not None:
        what += f" and <= {meta.le}" if meta.ge is not None or meta.gt is not None else f" <= {meta.le}"
    return what


class SchemaWalker(Readers):
    """The generic walk; ``after`` and ``readers`` are filled by the scenario's walker."""

    def __init__(self, file: str, base_dir: Path) -> None:
        super().__init__(file, base_dir)
        self.after: dict[type[Any], Hook] = {}
        """Struct type -> hook run on each one built."""
        self.readers: dict[Any, Reader] = {Priorities: self.priorities}
        """Type (``list[Step]``, ``FaultSpec``, ...) -> the reader of its own syntax."""

    def struct(self, cls: type[Any], value: Any, path: str, preset: dict[str, Any] | None = None) -> Any:
        preset = preset or {}
        fields = [f for f in msgspec.structs.fields(cls) if f.name not in preset]
        raw = self.mapping(value, path, [f.encode_name for f in fields], [f.encode_name for f in fields if f.required])
        kwargs = dict(preset)
        for f in fields:
            if f.encode_name in raw:
                kwargs[f.name] = self.value(f.type, raw[f.encode_name], join_path(path, f.encode_name))
        obj = cls(**kwargs)
        hook = self.after.get(cls)
        return obj if hook is None else hook(obj, raw, path)

    def value(self, tp: Any, value: Any, path: str) -> Any:
        base, meta = _meta(tp)
        fmt = ((meta.extra if meta is not None else None) or {}).get("format")
        origin = get_origin(base)
        if fmt == "duration":
            seconds = self.duration(value, path)
            if meta is not None and meta.gt is not None and seconds <= meta.gt:
                self.fail(path, f"expected a duration > {format_duration(meta.gt)}, got {show(value)}")
            return seconds
        if fmt in ("quantity", "rate", "milli"):
            return self.quantity(value, path, rate=fmt == "rate", milli=fmt == "milli")
        if base is Any:
            return value
        if base is LabelSelector:
            return self.selector(value, path)
        if base in (Pod, Node):
            return self.template(base, value, path)
        if base is SchedulerConfig:
            return self.scheduler(value, path)
        if base == list[ApiObject]:
            return self.manifests(value, path)
        reader = self.readers.get(base)
        if reader is not None:
            return reader(value, path)
        if isinstance(base, type) and issubclass(base, msgspec.Struct):
            return self.struct(base, value, path)
        if origin in _UNION:
            return self.union(tp, value, path)
        if origin is Literal:
            if value not in get_args(base) or not isinstance(value, str):
                self.fail(path, f"expected {describe(tp)}, got {show(value)}")
            return value
        if origin is list:
            if not isinstance(value, list):
                self.fail(path, f"expected a list, got {show(value)}")
            if meta is not None and meta.min_length and len(value) < meta.min_length:
                self.fail(path, "expected a non-empty list")
            (item,) = get_args(base)
            return [self.value(item, v, join_path(path, i)) for i, v in enumerate(value)]
        if origin is dict:
            if not isinstance(value, dict):
                self.fail(path, f"expected a mapping, got {show(value)}")
            _, item = get_args(base)
            for k in value:
                if not isinstance(k, str):
                    self.fail(join_path(path, str(k)), f"keys must be strings, got {show(k)}")
            return {k: self.value(item, v, join_path(path, k)) for k, v in value.items()}
        return self.scalar(base, meta, tp, value, path)

    def scalar(self, base: Any, meta: msgspec.Meta | None, tp: Any, value: Any, path: str) -> Any:
        ok = {
            str: isinstance(value, str),
            bool: isinstance(value, bool),
            int: isinstance(value, int) and not isinstance(value, bool),
            float: isinstance(value, int | float) and not isinstance(value, bool),
        }.get(base)
        if ok is None:
            raise TypeError(f"the scenario schema uses an unsupported type {tp!r} at {path}")
        if not ok:
            self.fail(path, f"expected {describe(tp)}, got {show(value)}")
        if base is float and not _finite(value):  # NaN would pass every comparison below
            self.fail(path, f"expected a finite number, got {show(value)}")
        if meta is not None and (
            (meta.ge is not None and value < meta.ge)
            or (meta.gt is not None and value <= meta.gt)
            or (meta.le is not None and value > meta.le)
            or (meta.pattern is not None and not re.search(meta.pattern, value))
        ):
            self.fail(path, f"expected {describe(tp)}, got {show(value)}")
        return float(value) if base is float else value

    def union(self, tp: Any, value: Any, path: str) -> Any:
        options = [a for a in get_args(_meta(tp)[0]) if a is not type(None)]
        if value is None and len(options) < len(get_args(_meta(tp)[0])):
            return None
        if len(options) == 1:
            return self.value(options[0], value, path)
        for option in options:
            try:
                return self.value(option, value, path)
            except ScenarioError:
                continue
        return self.fail(path, f"expected {describe(tp)}, got {show(value)}")

    # values with their own syntax ------------------------------------------------------

    def priorities(self, value: Any, path: str) -> dict[str, list[str]]:
        """The priority expander's table (``autoscaling``): its YAML keys are integer priorities."""
        if not isinstance(value, dict) or any(isinstance(k, bool) or not isinstance(k, int | str) for k in value):
            self.fail(path, f"expected a mapping like {{10: [groupA]}}, got {show(value)}")
        return {str(k): self.value(list[str], v, join_path(path, str(k))) for k, v in value.items()}

    def duration(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.fail(path, f"expected {_DURATION}, got {show(value)}")
        try:
            return parse_simulated_duration(value)  # every duration of a scenario: see limits.py
        except ValueError as err:
            detail = str(err)
            if detail.endswith(repr(value)):
                detail = detail[: -len(repr(value))] + show(value)
            self.fail(path, detail)

    def quantity(self, value: Any, path: str, *, rate: bool = False, milli: bool = False) -> int:
        text = value.removesuffix("/s") if rate and isinstance(value, str) else value
        try:
            q = parse_quantity(text)
        except ValueError:
            self.fail(path, f"expected {_RATE if rate else _QUANTITY}, got {show(value)}")
        if q.milli < 0:
            self.fail(path, f"expected a quantity >= 0, got {show(value)}")
        if not fits_int64_milli(q):  # image sizes reach the scheduler's int64 columns: see limits.py
            self.fail(path, f"expected a quantity of at most {MAX_VALUE} (resource.MaxMilliValue), got {show(value)}")
        return q.milli if milli else q.value

    def selector(self, value: Any, path: str) -> LabelSelector:
        if not isinstance(value, str):
            self.fail(path, f'expected a label selector string like "app=web,tier in (a,b)", got {show(value)}')
        try:
            return parse_label_selector(value)
        except ValueError as err:
            self.fail(path, f"invalid label selector: {err}")
