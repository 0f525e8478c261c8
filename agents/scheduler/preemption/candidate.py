"""The types the preemption evaluator and executor share: a ``Candidate`` node with its
``Victims``, and ``pod_priority`` (upstream ``corev1helpers.PodPriority``).

They sit below both ``evaluator.py`` (which finds candidates) and ``executor.py`` (which
prepares the chosen one through the API), so that neither imports the other's module to
reach them. This module owns nothing else: no choosing, no API calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from emulator.base.api.core import Pod

__all__ = ["Candidate", "Victims", "pod_priority"]


def pod_priority(pod: Pod) -> int:
    """``corev1helpers.PodPriority``: ``spec.priority``, 0 when unset."""
    return pod.spec.priority if pod.spec.priority is not None else 0


@dataclass(slots=True)
class Victims:
    """Upstream ``extenderv1.Victims``: pods to evict, most important first."""

    pods: list[Pod] = field(default_factory=list)
    num_pdb_violations: int = 0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node the preemptor could be nominated to, with the victims to evict there."""

    name: str
    victims: Victims
