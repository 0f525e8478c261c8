"""ControllerRevisions (upstream ``pkg/registry/apps/controllerrevision``): ``data`` is required
and, like the whole revision but its metadata and ``revision`` number, immutable
(``ValidateControllerRevisionCreate``/``ValidateControllerRevisionUpdate``, pkg/apis/apps/validation)."""

from __future__ import annotations

from typing import Any

from emulator.base.api.errors import Invalid
from emulator.base.apiserver.registry.strategy import Strategy

__all__ = ["ControllerRevisionStrategy"]


class ControllerRevisionStrategy(Strategy):
    kind = "ControllerRevision"

    def validate(self, obj: Any) -> None:
        super().validate(obj)
        name = obj.metadata.name
        if obj.data is None:
            raise Invalid.at(self.kind, name, "data", "Required value")
        if obj.revision < 0:
            raise Invalid.at(
                self.kind, name, "revision", f"Invalid value: {obj.revision}: must be greater than or equal to 0"
            )

    def validate_update(self, current: Any, candidate: Any) -> None:
        self.validate(candidate)
        if candidate.data != current.data:
            raise Invalid.at(self.kind, candidate.metadata.name, "data", 'Invalid value: "object": field is immutable')
