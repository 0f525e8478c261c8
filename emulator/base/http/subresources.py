"""The subresources written through their own verbs: ``binding``, ``eviction`` and ``scale``.

Owns what a call on each means (upstream's ``BindingREST``, ``EvictionREST`` and the
workloads' ``ScaleREST``): a Binding (``pods/<name>/binding`` or the legacy ``bindings``
resource) is ``ApiServer.bind``; an Eviction is ``ApiServer.evict`` (its PDB checks and 429s
are the store's); a Scale (``autoscaling/v1``) is read from and written to the workload's
``spec.replicas`` (get, update, the three patch types, apply merging its one writable
field). ``dryRun`` answers without writing. The main resources' verbs, ``status`` and
``log`` are ``verbs``'; a Scale's write is recorded to the field managers through
``record``, given at construction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from msgspec.structs import replace

from emulator.base.api.core import Binding
from emulator.base.api.errors import BadRequest, Conflict
from emulator.base.api.labelparse import format_label_selector
from emulator.base.apiserver.server import ApiServer
from emulator.base.http.calls import APPLY, Answer, Call, dry_run
from emulator.base.http.codec import decode_body, decode_object, encode, media_type
from emulator.base.http.patch import apply_patch
from emulator.base.http.resources import Resource
from emulator.base.http.status import success_status

__all__ = ["Record", "Subresources", "scale_dict"]

Record = Callable[[Resource, Any, Any, Call], None]
"""Record a write to the field managers: (resource, old object, new object, the call)."""


class Subresources:
    """The binding, eviction and scale verbs over one ``ApiServer``."""

    def __init__(self, api: ApiServer, *, record: Record) -> None:
        self.api = api
        self.record = record

    def bind(self, call: Call) -> Answer:
        t = call.target
        data = decode_body(call.body, call.content_type)
        binding: Binding = decode_object(t.resource, data, kind="Binding", api_version="v1")
        meta = binding.metadata
        if meta.namespace and meta.namespace != t.namespace:
            raise BadRequest("the namespace of the provided object does not match the namespace sent on the request")
        if t.sub == "binding" and meta.name and meta.name != t.name:
            raise BadRequest(f"the name of the object ({meta.name}) does not match the name on the URL ({t.name})")
        binding = replace(binding, metadata=replace(meta, namespace=t.namespace or "", name=meta.name or t.name))
        if not dry_run(call.query, call.method):
            with self.api.acting_as(call.agent):
                self.api.bind(binding)
        return Answer(201, encode(success_status(code=201)))

    def evict(self, call: Call) -> Answer:
        t = call.target
        data = decode_body(call.body, call.content_type)
        if not isinstance(data, dict):
            raise BadRequest("the object provided is unrecognized: expected an Eviction")
        name = (data.get("metadata") or {}).get("name") or t.name
        if name != t.name:
            raise BadRequest("name in URL does not match name in Eviction object")
        options = data.get("deleteOptions") or {}
        grace = options.get("gracePeriodSeconds")
        uid = (options.get("preconditions") or {}).get("uid") or ""
        if not dry_run(call.query, call.method) and not options.get("dryRun"):
            with self.api.acting_as(call.agent):
                self.api.evict(t.namespace or "", t.name, grace_period_seconds=grace, uid=uid)
        return Answer(201, encode(success_status(code=201)))

    def scale(self, current: Any) -> Answer:
        """GET: the Scale of ``current``."""
        return Answer(200, encode(scale_dict(current)))

    def scale_update(self, call: Call, current: Any) -> Answer:
        """PUT: ``current`` scaled to the Scale in the body."""
        data = decode_body(call.body, call.content_type)
        if not isinstance(data, dict):
            raise BadRequest("the object provided is unrecognized: expected a Scale")
        return self._scale_to(call, current, data)

    def scale_patch(self, call: Call, current: Any) -> Answer:
        """PATCH: the patch applied to the Scale of ``current``."""
        mt = media_type(call.content_type)
        if mt == APPLY:  # a Scale has one writable field: applying it is merging it
            applied = decode_body(call.body, call.content_type)
            if not isinstance(applied, dict):
                raise BadRequest("the object provided is unrecognized: expected a Scale")
            spec = {**scale_dict(current)["spec"], **(applied.get("spec") or {})}
            return self._scale_to(call, current, {**scale_dict(current), "spec": spec})
        patched = apply_patch(call.target.resource, scale_dict(current), call.body, mt)
        return self._scale_to(call, current, patched)

    def _scale_to(self, call: Call, current: Any, scale: dict[str, Any]) -> Answer:
        rv = (scale.get("metadata") or {}).get("resourceVersion") or ""
        if rv and rv != current.metadata.resource_version:
            raise Conflict.stale(current.kind, current.metadata.name)
        replicas = (scale.get("spec") or {}).get("replicas", 0)
        if not isinstance(replicas, int) or isinstance(replicas, bool):
            raise BadRequest('Scale in version "v1" cannot be handled as a Scale: spec.replicas must be an integer')
        obj = replace(current, spec=replace(current.spec, replicas=replicas))
        if dry_run(call.query, call.method):
            return Answer(200, encode(scale_dict(obj)))
        with self.api.acting_as(call.agent):
            new = self.api.update(obj)
        if new is not current:
            self.record(call.target.resource, current, new, call)
        return Answer(200, encode(scale_dict(new)))


def scale_dict(obj: Any) -> dict[str, Any]:
    """The ``autoscaling/v1`` Scale of a deployment, replica set or stateful set."""
    meta = obj.metadata
    m: dict[str, Any] = {
        "name": meta.name,
        "namespace": meta.namespace,
        "uid": meta.uid,
        "resourceVersion": meta.resource_version,
    }
    if meta.creation_timestamp:
        m["creationTimestamp"] = meta.creation_timestamp
    spec: dict[str, Any] = {}
    if obj.spec.replicas:
        spec["replicas"] = obj.spec.replicas
    status: dict[str, Any] = {"replicas": obj.status.replicas}
    selector = obj.spec.selector
    if selector is not None:
        text = format_label_selector(selector)
        if text:
            status["selector"] = text
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": m, "spec": spec, "status": status}
