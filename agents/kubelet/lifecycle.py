"""What a pod's annotations and ``restartPolicy`` ask of its containers: ``Lifecycle``.

This module owns reading a pod into a ``Lifecycle`` (``lifecycle_of``: run and init
durations, exit codes, readiness delay, the restart policies), memoised for the common
pod. It does not run containers: ``podrun.py`` is the state machine that plays a
``Lifecycle`` over time.

Annotations (all optional; per pod, every regular container behaves alike):

============================  =====================================================  ========
annotation                    meaning                                                default
============================  =====================================================  ========
``run-duration``              the regular containers exit this long after starting   never
``exit-code``                 ... with this exit code (an integer 0..255)            0
``ready-after``               a started container turns ready this long after it     0s
                              started (a readiness-probe stand-in)
``init-duration``             each regular init container runs this long             0s
``init-exit-code``            ... and exits with this code (so the first one fails   0
                              when it is not 0: the later ones never run)
``liveness-fails-after``      the liveness probe fails from this long after the      never
                              container started (``prober.py``); likewise
``readiness-fails-after``,    the readiness and startup probes (a readiness probe
``startup-fails-after``       also fails before ``ready-after``)
============================  =====================================================  ========

(each prefixed ``emulator.k8s.io/``). The API server refuses a pod whose ``exit-code``,
``ready-after``, ``init-duration`` or ``init-exit-code`` does not parse
(``emulator.base.api.podvalidation``); ``run-duration`` is checked where scenarios are read. A
value that does not parse all the same is ignored and counted by the kubelet
(``invalid_annotations``, ``invalid_run_duration``).

Deviation (kept so that scenarios written before restarts existed run as they did): a pod
that no controller owns (no ``ownerReferences`` entry with ``controller: true``), whose
``restartPolicy`` is ``Always`` (the API server's default) and which has no ``exit-code``
annotation, succeeds after its run duration as if its policy were ``Never``: the run
duration models a finite workload. Give it an ``exit-code`` (even ``"0"``) to get
upstream's restarts. A failed init container always follows the spec's policy.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from emulator.base.api.core import Pod
from emulator.base.api.podvalidation import (
    EXIT_CODE_ANNOTATION,
    INIT_DURATION_ANNOTATION,
    INIT_EXIT_CODE_ANNOTATION,
    LIVENESS_FAILS_AFTER_ANNOTATION,
    READINESS_FAILS_AFTER_ANNOTATION,
    READY_AFTER_ANNOTATION,
    STARTUP_FAILS_AFTER_ANNOTATION,
    parse_exit_code,
)
from emulator.base.runtime.clock import parse_duration

__all__ = [
    "EXIT_CODE_ANNOTATION",
    "INIT_DURATION_ANNOTATION",
    "INIT_EXIT_CODE_ANNOTATION",
    "READY_AFTER_ANNOTATION",
    "RUN_DURATION_ANNOTATION",
    "Lifecycle",
    "effective_restart_policy",
    "lifecycle_of",
    "parse_exit_code",
]

RUN_DURATION_ANNOTATION: Final = "emulator.k8s.io/run-duration"


def effective_restart_policy(pod: Pod) -> str:
    """What the regular containers' exit follows: ``spec.restartPolicy`` (``Always`` when
    empty), but ``Never`` for a bare pod that kept the default ``Always`` and gave no exit
    code (the deviation in the module docstring; init containers follow the spec's)."""
    policy = pod.spec.restart_policy or "Always"
    if policy == "Always" and EXIT_CODE_ANNOTATION not in pod.metadata.annotations:
        for ref in pod.metadata.owner_references:  # a loop, not ``any()``: no generator per pod
            if ref.controller:
                return policy
        return "Never"
    return policy


@dataclass(frozen=True, slots=True, kw_only=True)
class Lifecycle:
    """What a pod's annotations and ``restartPolicy`` ask of its containers."""

    run_duration: float | None = None
    exit_code: int = 0
    ready_after: float = 0.0
    init_duration: float = 0.0
    init_exit_code: int = 0
    restart_policy: str = "Never"
    """What the regular containers' exit follows (``effective_restart_policy``)."""
    init_restart_policy: str = "Never"
    """What a failed init container follows: the spec's ``restartPolicy``."""
    liveness_fails_after: float | None = None
    readiness_fails_after: float | None = None
    startup_fails_after: float | None = None
    """When each probe starts failing, after the container started (``prober.py``)."""


_LIFECYCLE_ANNOTATIONS: Final = (
    EXIT_CODE_ANNOTATION,
    READY_AFTER_ANNOTATION,
    INIT_DURATION_ANNOTATION,
    INIT_EXIT_CODE_ANNOTATION,
    LIVENESS_FAILS_AFTER_ANNOTATION,
    READINESS_FAILS_AFTER_ANNOTATION,
    STARTUP_FAILS_AFTER_ANNOTATION,
)


def _duration(notes: Mapping[str, str], name: str, bad: list[str]) -> float | None:
    text = notes.get(name)
    if text is None:
        return None
    try:
        return parse_duration(text)
    except ValueError:
        bad.append(name)
        return None


def _code(notes: Mapping[str, str], name: str, bad: list[str]) -> int:
    text = notes.get(name)
    if text is None:
        return 0
    try:
        return parse_exit_code(text)
    except ValueError:
        bad.append(name)
        return 0


@functools.lru_cache(maxsize=1024)
def _plain_lifecycle(run_duration: str | None, policy: str, init_policy: str) -> tuple[Lifecycle, tuple[str, ...]]:
    """``lifecycle_of`` a pod with no lifecycle annotation but ``run-duration``: one frozen
    value per (run-duration text, policies), built once (every churn pod asks for the same)."""
    bad: list[str] = []
    notes = {} if run_duration is None else {RUN_DURATION_ANNOTATION: run_duration}
    seconds = _duration(notes, RUN_DURATION_ANNOTATION, bad)
    return Lifecycle(run_duration=seconds, restart_policy=policy, init_restart_policy=init_policy), tuple(bad)


def lifecycle_of(pod: Pod) -> tuple[Lifecycle, tuple[str, ...]]:
    """The pod's ``Lifecycle`` and the annotations that did not parse (ignored)."""
    notes = pod.metadata.annotations
    policy, init_policy = effective_restart_policy(pod), pod.spec.restart_policy or "Always"
    if notes.keys().isdisjoint(_LIFECYCLE_ANNOTATIONS):  # the common case: memoised
        return _plain_lifecycle(notes.get(RUN_DURATION_ANNOTATION), policy, init_policy)
    bad: list[str] = []
    run_duration = _duration(notes, RUN_DURATION_ANNOTATION, bad)
    life = Lifecycle(
        run_duration=run_duration,
        exit_code=_code(notes, EXIT_CODE_ANNOTATION, bad),
        ready_after=_duration(notes, READY_AFTER_ANNOTATION, bad) or 0.0,
        init_duration=_duration(notes, INIT_DURATION_ANNOTATION, bad) or 0.0,
        init_exit_code=_code(notes, INIT_EXIT_CODE_ANNOTATION, bad),
        liveness_fails_after=_duration(notes, LIVENESS_FAILS_AFTER_ANNOTATION, bad),
        readiness_fails_after=_duration(notes, READINESS_FAILS_AFTER_ANNOTATION, bad),
        startup_fails_after=_duration(notes, STARTUP_FAILS_AFTER_ANNOTATION, bad),
        restart_policy=policy,
        init_restart_policy=init_policy,
    )
    return life, tuple(bad)
