"""Events (upstream ``pkg/registry/core/event``): no rules of their own besides their
selectable fields, and a TTL: the store deletes an Event ``ServerSettings.event_ttl`` after
its last write (``emulator.base.apiserver.eventttl``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from emulator.base.api.validation import validate_event
from emulator.base.apiserver.registry.strategy import FieldGetter, Strategy

__all__ = ["EventStrategy"]

_FIELDS: Final[Mapping[str, FieldGetter]] = {
    "involvedObject.kind": lambda ev: ev.involved_object.kind,
    "involvedObject.namespace": lambda ev: ev.involved_object.namespace,
    "involvedObject.name": lambda ev: ev.involved_object.name,
    "involvedObject.uid": lambda ev: ev.involved_object.uid,
    "involvedObject.apiVersion": lambda ev: ev.involved_object.api_version,
    "involvedObject.resourceVersion": lambda ev: ev.involved_object.resource_version,
    "involvedObject.fieldPath": lambda ev: ev.involved_object.field_path,
    "reason": lambda ev: ev.reason,
    "reportingComponent": lambda ev: ev.reporting_component,
    "source": lambda ev: ev.source.component,
    "type": lambda ev: ev.type,
}


class EventStrategy(Strategy):
    kind = "Event"
    fields = _FIELDS
    ttl = True

    def validate(self, obj: Any) -> None:
        validate_event(obj)  # ``validate(obj)``'s part that concerns an Event
