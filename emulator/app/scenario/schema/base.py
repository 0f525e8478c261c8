"""The base of every scenario Struct and the value types the sections share.

Owns ``Spec`` (camelCase keys, unknown fields refused, frozen), the annotated types that
carry units and bounds (``Duration``, ``Bytes``, ``ByteRate``, ``Count``, ...: the loader
reads their ``msgspec.Meta``), and ``generated_name``, the one rule for the names of
generated nodes and pods. The sections are ``cluster``, ``steps``, ``faults`` and
``expect``; the package's ``__init__`` has the overview and the ``Scenario``.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec

from emulator.app.scenario.limits import MAX_SECONDS

__all__ = [
    "RUN_DURATION_ANNOTATION",
    "ByteRate",
    "Bytes",
    "Count",
    "Delay",
    "Duration",
    "GpuSharing",
    "ImportPath",
    "NonNegativeInt",
    "PositiveDuration",
    "PositiveInt",
    "Probability",
    "Spec",
    "generated_name",
]

Duration = Annotated[float, msgspec.Meta(ge=0, le=MAX_SECONDS, extra={"format": "duration"})]
"""Seconds; written as a Go duration ("5ms", "1.5s", "1h30m") or a number of seconds; at most
a day (``limits.MAX_SECONDS``, like every other limit: see ``limits.py`` and ``totals.py``)."""
Bytes = Annotated[int, msgspec.Meta(ge=0, extra={"format": "quantity"})]
"""Bytes; written as a Kubernetes quantity ("100Mi", "1G", 5e6)."""
ByteRate = Annotated[int, msgspec.Meta(ge=0, extra={"format": "rate"})]
"""Bytes per second; written as a quantity ("50Mi"), optionally with "/s" ("50Mi/s")."""
PositiveDuration = Annotated[float, msgspec.Meta(gt=0, le=MAX_SECONDS, extra={"format": "duration"})]
"""A duration greater than zero."""
PositiveInt = Annotated[int, msgspec.Meta(ge=1)]
Probability = Annotated[float, msgspec.Meta(ge=0, le=1)]
"""A probability in [0, 1]."""
NonNegativeInt = Annotated[int, msgspec.Meta(ge=0)]
Count = NonNegativeInt | Literal["all"]
"""A number of pods, or every pod the selector matches."""
ImportPath = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$",
        extra={"expected": 'an import path like "package.module:Class"'},
    ),
]

GpuSharing = Literal["device-plugin", "dra"]
"""How an ``alibaba-gpu-2023`` trace's GPUs are requested: whole ``nvidia.com/gpu`` devices of
a device plugin (the default), or DRA devices with shares as consumable capacity
(``emulator/app/scenario/trace_gpus.py``)."""

RUN_DURATION_ANNOTATION: Final = "emulator.k8s.io/run-duration"


class Spec(msgspec.Struct, forbid_unknown_fields=True, rename="camel", kw_only=True, frozen=True):
    """Base of every scenario Struct."""


class Delay(Spec, frozen=True, kw_only=True):
    """A random delay: ``mean`` plus uniform noise in ``[-jitter, +jitter]`` (never below 0)."""

    mean: Duration = 0.0
    jitter: Duration = 0.0


def generated_name(prefix: str, i: int) -> str:
    """The name of generated object ``i``: ``prefix-i``, or ``prefix + i`` if it ends with ``-``."""
    return f"{prefix}{i}" if prefix.endswith("-") else f"{prefix}-{i}"
