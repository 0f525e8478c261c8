"""PriorityClasses (upstream ``pkg/registry/scheduling/priorityclass`` and the ``Priority``
admission plugin): cluster-scoped; one class at most is the global default; the value is
immutable."""

from __future__ import annotations

from typing import Any

from emulator.base.api.errors import Invalid
from emulator.base.api.validation import validate_update
from emulator.base.apiserver.registry.strategy import Strategy

__all__ = ["PriorityClassStrategy"]


class PriorityClassStrategy(Strategy):
    kind = "PriorityClass"
    namespaced = False

    def _refuse_second_default(self, name: str) -> None:
        other = next((p for p in self.store.table("PriorityClass").values() if p.global_default), None)
        if other is not None:
            raise Invalid.at(
                "PriorityClass",
                name,
                "globalDefault",
                f"Forbidden: PriorityClass {other.metadata.name} is already marked as default",
            )

    def check_create(self, obj: Any) -> None:
        if obj.global_default:
            self._refuse_second_default(obj.metadata.name)

    def validate_update(self, current: Any, candidate: Any) -> None:
        name = current.metadata.name
        if candidate.value != current.value:
            raise Invalid.at("PriorityClass", name, "value", "Forbidden: may not be changed in an update.")
        if candidate.global_default and not current.global_default:
            self._refuse_second_default(name)
        validate_update(candidate)
