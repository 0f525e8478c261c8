"""awslabs/operatorpkg ``status/condition_set.go`` (``ConditionTypes.For``, ``ConditionSet.Set``
and ``recomputeRootCondition``) over one object's conditions, as Karpenter v1.9.1 writes them.

- ``For``: the root and its dependents are set Unknown (``AwaitingReconciliation``, "object is
  awaiting reconciliation") when missing, the root first.
- ``set``: the condition gets the object's generation as ``observedGeneration``; it keeps its
  ``lastTransitionTime`` while its status does not change, a new one takes the clock's time (the
  root or a dependent first set: the object's creation time, ``IsDependentCondition``).
  Setting what is already there changes nothing. On an object being deleted, every other
  condition's ``observedGeneration`` is bumped to the generation (the deletion bumped it).
  Conditions are kept in transition order, the root last (a stable sort).
- The root is recomputed after any other condition is set: True once every dependent is True
  at the object's generation, else Unknown (``ReconcilingDependents``) or, when one is False at
  that generation, False (``UnhealthyDependents``), the message ``Type=Status`` of the unhealthy
  ones, newest first.
- ``clear``: a condition that is neither the root nor a dependent is removed; the others are
  then sorted by type (``sort.Slice``: types are unique, so any sort gives that order).

``nodeclaim_conditions`` is the set of a NodeClaim (``pkg/apis/v1/nodeclaim_status.go``: root
``Ready``, dependents ``Launched``, ``Registered``, ``Initialized``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from msgspec.structs import replace

from emulator.base.api.karpenter import NodeClaim
from emulator.base.api.meta import Condition

__all__ = ["NODECLAIM_DEPENDENTS", "ConditionSet", "nodeclaim_conditions"]

NODECLAIM_DEPENDENTS: Final = ("Launched", "Registered", "Initialized")


class ConditionSet:
    """One object's conditions under operatorpkg's rules (module docstring); ``items`` the
    conditions as they stand, ``changed`` whether any ``set`` modified them."""

    def __init__(
        self,
        conditions: Sequence[Condition],
        *,
        root: str,
        dependents: Sequence[str],
        generation: int,
        created: str | None,
        deleting: bool,
        now: Callable[[], str],
    ) -> None:
        self.items = list(conditions)
        self.root, self.dependents = root, tuple(dependents)
        self.generation, self.created, self.deleting, self.now = generation, created, deleting, now
        self.changed = False
        for type_ in (root, *self.dependents):
            if self.get(type_) is None:
                self.set(type_, "Unknown", "AwaitingReconciliation", "object is awaiting reconciliation")

    def get(self, type_: str) -> Condition | None:
        return next((c for c in self.items if c.type == type_), None)

    def is_true(self, type_: str) -> bool:
        c = self.get(type_)
        return c is not None and c.status == "True"

    def set_true(self, type_: str) -> bool:
        return self.set(type_, "True", type_)

    def set(self, type_: str, status: str, reason: str, message: str = "") -> bool:
        """``Set``; whether it modified the conditions."""
        old = self.get(type_)
        if old is not None:
            when = old.last_transition_time if old.status == status else self.now()
        else:
            when = self.created if type_ == self.root or type_ in self.dependents else self.now()
        new = Condition(type=type_, status=status, observed_generation=self.generation,
                        last_transition_time=when, reason=reason, message=message)  # fmt: skip
        if new == old:
            return False
        gen = self.generation
        kept = [
            replace(c, observed_generation=gen) if self.deleting and c.observed_generation != gen else c
            for c in self.items
            if c.type != type_
        ]
        self.items = sorted([*kept, new], key=lambda c: (c.type == self.root, c.last_transition_time or ""))
        self.changed = True
        if type_ != self.root:
            self._root()
        return True

    def set_unknown(self, type_: str, reason: str = "AwaitingReconciliation",
                    message: str = "object is awaiting reconciliation") -> bool:  # fmt: skip
        return self.set(type_, "Unknown", reason, message)

    def refresh(self, type_: str) -> bool:
        """``Set(*cond)``: the condition as it is, at the object's generation."""
        c = self.get(type_)
        return c is not None and self.set(type_, c.status, c.reason, c.message)

    def clear(self, type_: str) -> bool:
        """``Clear``; whether it removed the condition. The root and dependents cannot be
        cleared (upstream returns an error)."""
        if type_ == self.root or type_ in self.dependents:
            raise ValueError(f"clearing dependent condition {type_!r} not implemented")
        if self.get(type_) is None:
            return False
        self.items = sorted((c for c in self.items if c.type != type_), key=lambda c: c.type)
        self.changed = True
        return True

    def _root(self) -> None:
        unhealthy = [
            c
            for c in self.items
            if c.type in self.dependents and (c.status != "True" or c.observed_generation != self.generation)
        ]
        if not unhealthy:
            self.set_true(self.root)
            return
        unhealthy.sort(key=lambda c: c.last_transition_time or "", reverse=True)
        false = any(c.status == "False" and c.observed_generation == self.generation for c in unhealthy)
        message = ", ".join(f"{c.type}={c.status}" for c in unhealthy)
        if false:
            self.set(self.root, "False", "UnhealthyDependents", message)
        else:
            self.set(self.root, "Unknown", "ReconcilingDependents", message)


def nodeclaim_conditions(claim: NodeClaim, now: Callable[[], str]) -> ConditionSet:
    """``NodeClaim.StatusConditions()``: the set over ``claim``'s conditions."""
    meta = claim.metadata
    return ConditionSet(
        claim.status.conditions,
        root="Ready",
        dependents=NODECLAIM_DEPENDENTS,
        generation=meta.generation,
        created=meta.creation_timestamp,
        deleting=meta.deletion_timestamp is not None,
        now=now,
    )
