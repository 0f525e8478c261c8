"""The verbs behind the HTTP door: one request → one ``ApiServer`` call → an answer.

Owns what each method on each target means (upstream's REST handlers and generic registry
store): the dispatch of a ``Call`` (``calls``) to its verb, get, list (selectors, paging,
resourceVersion, Tables), create (201, ``generateName``, ``dryRun``), update (PUT), patch
(the three patch types through ``patch.apply_patch``; server-side apply through
``apply.FieldManagers``, which creates an absent object), delete (DeleteOptions from the
body or the query, all checked before the object is read; the object or a success
``Status`` as upstream's registries answer), deletecollection (the items as listed), and
the ``status`` and ``log`` subresources; ``binding``, ``eviction`` and ``scale`` are
``subresources``'. Every write runs with
``ApiServer.agent`` set to the caller's User-Agent product, so the trace names it. It is
synchronous, as the store is: it does not own sockets, watch streams or auth (``server``).

``dryRun=All`` never reaches the store's write path: the object is decoded, defaulted where
the store would default it and validated, and answered without a revision; a dry-run
delete makes the real delete's checks (``propagationPolicy``, the preconditions, NotFound)
and gives upstream's answer (``ApiServer.plan_delete``, ``ApiServer.dry_run_removal``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from msgspec.structs import replace

from emulator.base.api.errors import BadRequest, NotFound
from emulator.base.api.karpenterignored import karpenter_ignored
from emulator.base.api.podresize import resize_candidate
from emulator.base.api.resourcedefaults import dropped_fields
from emulator.base.api.unknownfields import prune_unknown, warning_texts
from emulator.base.api.validation import validate
from emulator.base.apiserver.deletion import check_delete_options
from emulator.base.apiserver.registry.leases import check_lease_times
from emulator.base.apiserver.server import ApiServer
from emulator.base.http import logs, tables
from emulator.base.http.apply import FieldManagers
from emulator.base.http.calls import (
    APPLY,
    Answer,
    Call,
    check_dry_run,
    check_field_manager,
    check_managed_fields,
    check_verb,
    dry_run,
    verb_of,
)
from emulator.base.http.codec import (
    decode_body,
    decode_object,
    encode,
    encode_list,
    encode_object,
    media_type,
    object_dict,
)
from emulator.base.http.extras import UnmodelledFields
from emulator.base.http.patch import apply_patch
from emulator.base.http.query import ListOptions, check_list_version, page, parse_list_options
from emulator.base.http.resources import Resource
from emulator.base.http.routing import Target
from emulator.base.http.status import success_status
from emulator.base.http.subresources import Subresources

__all__ = ["Verbs"]

ManagedFields = list[dict[str, Any]]
"""``metadata.managedFields`` as a write carries it (``Verbs.list`` shadows ``list`` in the class)."""

_FIELD_VALIDATION: Final = frozenset({"Ignore", "Warn", "Strict"})
"""Upstream's ``fieldValidation`` values (``metav1.FieldValidation*``)."""

RETURNS_DELETED: Final = frozenset({"Pod", "Service", "Namespace"})
"""Kinds whose upstream registry sets ``ReturnDeletedObject``: a delete answers the object;
the others answer ``Status{Success, details{name, group, kind, uid}}`` once removed."""


def dry_run_object(resource: Resource, obj: Any, current: Any | None, sub: str = "") -> Any:
    """What the store would keep of ``obj`` on a write, for a dry run to validate and answer
    (upstream's PrepareForCreate/PrepareForUpdate): a write to the main resource of a kind
    with a ``status`` subresource keeps the current status (none on create); a write to
    ``/status`` keeps everything of the current object but its status."""
    if resource.subresource("status") is None or not hasattr(obj, "status"):
        return obj
    if sub == "resize" and current is not None:
        return resize_candidate(current, obj)
    if sub == "status":
        return obj if current is None else replace(current, status=obj.status)
    return replace(obj, status=type(obj.status)() if current is None else current.status)


class Verbs:
    """The synchronous verbs over one ``ApiServer`` and its field managers."""

    def __init__(self, api: ApiServer, managers: FieldManagers, *, extras: UnmodelledFields | None = None) -> None:
        self.api = api
        self.managers = managers
        self.extras = extras if extras is not None else UnmodelledFields()
        self.subresources = Subresources(api, record=self._recorded)
        self.warnings: list[str] = []
        """The ``Warning`` texts of the call being handled (``handle`` is synchronous)."""

    def encoded(self, obj: Any) -> bytes:
        return encode_object(obj, self.managers.managed_fields(obj.metadata.uid), extras=self.extras)

    def served(self, obj: Any) -> dict[str, Any]:
        """The stored struct as served: its wire dict with the fields it does not model."""
        return object_dict(obj, extras=self.extras)

    def _dry_run_answer(self, call: Call, code: int, obj: Any, written: Any, current: Any | None) -> Answer:
        """A dry-run write's answer: the validated object as it would be stored
        (``dry_run_object``) and served (with what the client wrote that the struct drops)."""
        obj = dry_run_object(call.target.resource, obj, current, call.target.sub or "")
        validate(obj)
        out = object_dict(obj)
        return Answer(code, encode(self.extras.preview(written, out) if isinstance(written, dict) else out))

    def _remember(self, call: Call, written: Any, new: Any) -> None:
        """Keep what the client wrote and the struct dropped (``extras``)."""
        if isinstance(written, dict):
            self.extras.remember(new.metadata.uid, written, object_dict(new), subresource=call.target.sub or "")

    def _recorded(
        self,
        res: Resource,
        old: Any,
        new: Any,
        call: Call,
        operation: str = "Update",
        managed_fields: ManagedFields | None = None,
    ) -> None:
        manager = call.query.get("fieldManager") or call.agent
        old_dict = None if old is None else self.served(old)
        carried: dict[str, Any] = {} if managed_fields is None else {"managed_fields": managed_fields}
        self.managers.update(
            res,
            old_dict,
            self.served(new),
            manager=manager,
            operation=operation,
            time=self.api.clock.timestamp(),
            **carried,
        )

    # --- dispatch -------------------------------------------------------------------------

    def handle(self, call: Call) -> Answer:
        """The answer to ``call``, with the ``Warning`` texts its handling recorded."""
        self.warnings = []
        answer = self._handle(call)
        if self.warnings:
            answer = dataclasses.replace(answer, warnings=tuple(dict.fromkeys(self.warnings)))
        return answer

    def _handle(self, call: Call) -> Answer:
        t = call.target
        verb = verb_of(call.method, t, watch=False)
        check_verb(t, verb)
        if verb in ("create", "update", "patch"):
            check_field_manager(call.query.get("fieldManager", ""), call.method)
        if t.sub in logs.STREAMS:
            logs.refuse_stream(self._get(t), t.sub, call.query)
        if verb == "get":
            return self.get(call)
        if verb == "list":
            return self.list(call)
        if verb == "create":
            if t.sub == "binding" or (t.resource.name == "bindings"):
                return self.subresources.bind(call)
            if t.sub == "eviction":
                return self.subresources.evict(call)
            return self.create(call)
        if verb == "update":
            if t.sub == "scale":
                return self.subresources.scale_update(call, self._get(t))
            return self.update(call)
        if verb == "patch":
            return self.patch(call)
        if verb == "delete":
            return self.delete(call)
        return self.delete_collection(call)

    def _namespace(self, t: Target) -> str:
        return t.namespace or ""

    def _get(self, t: Target) -> Any:
        return self.api.get(t.resource.kind, t.name, self._namespace(t))

    # --- reads ----------------------------------------------------------------------------

    def get(self, call: Call) -> Answer:
        t = call.target
        obj = self._get(t)
        if t.sub == "scale":
            return self.subresources.scale(obj)
        if t.sub == "log":
            return Answer(200, logs.pod_log(obj, call.query), logs.CONTENT_TYPE)
        if call.as_table:
            opts = parse_list_options(t.resource.kind, call.query)
            return self._table(t.resource, [obj], opts, obj.metadata.resource_version)
        return Answer(200, self.encoded(obj))

    def _table(
        self, resource: Resource, objects: list[Any], opts: ListOptions, resource_version: str, token: str = ""
    ) -> Answer:
        """The Table of ``objects``, their rows' objects with their unmodelled fields."""
        tab = tables.table(
            resource,
            objects,
            now=self.api.clock.now(),
            include_object=opts.include_object,
            resource_version=resource_version,
            continue_token=token,
        )
        if opts.include_object == "Object":
            self.extras.merge_table(tab)
        return Answer(200, encode(tab))

    def list_objects(self, t: Target, opts: ListOptions) -> tuple[list[Any], int]:
        return self.api.list(
            t.resource.kind,
            namespace=t.namespace,
            label_match=opts.label_match,
            fields={"metadata.name": opts.name} if opts.name is not None else None,
            predicate=opts.predicate,
        )

    def list(self, call: Call) -> Answer:
        t = call.target
        opts = parse_list_options(t.resource.kind, call.query)
        items, rev = self.list_objects(t, opts)
        check_list_version(opts, rev)
        items, token, remaining, rv = page(items, opts, rev)
        if call.as_table:
            return self._table(t.resource, items, opts, str(rv), token)
        body = encode_list(
            t.resource,
            items,
            resource_version=rv,
            continue_token=token,
            remaining=remaining,
            managed=self.managers.managed_fields,
            extras=self.extras,
        )
        return Answer(200, body)

    # --- writes ---------------------------------------------------------------------------

    def _decode(self, call: Call, data: Any) -> tuple[Any, Any]:
        """The struct ``data`` decodes to, and ``data`` without the fields upstream's schema
        does not have (dropped; warned about per ``fieldValidation``, see ``unknownfields``)."""
        t = call.target
        data = self._check_fields(call, data)
        obj = decode_object(t.resource, data)
        for at, gate in dropped_fields(obj):  # resource.k8s.io fields of v1.34's off alpha gates
            self.warnings.append(f"{at}: dropped: the feature gate {gate} is off in v1.34 (alpha)")
        self.warnings.extend(f"{at}: {text}" for at, text in karpenter_ignored(obj))
        if t.resource.kind == "Lease":
            check_lease_times(obj)
        meta = obj.metadata
        if t.resource.namespaced:
            if meta.namespace and meta.namespace != t.namespace:
                raise BadRequest(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            if not meta.namespace:
                obj = replace(obj, metadata=replace(meta, namespace=t.namespace or ""))
        if t.name and obj.metadata.name != t.name:
            if not obj.metadata.name:
                obj = replace(obj, metadata=replace(obj.metadata, name=t.name))
            else:
                raise BadRequest(
                    f"the name of the object ({obj.metadata.name}) does not match the name on the URL ({t.name})"
                )
        return obj, data

    def _check_fields(self, call: Call, data: Any) -> Any:
        """Upstream's ``fieldValidation``: ``Strict`` refuses unknown fields (400, the strict
        decoder's message), ``Warn`` (the default) answers with a ``Warning`` per field,
        ``Ignore`` drops them quietly; any other value is a 400."""
        mode = call.query.get("fieldValidation", "") or "Warn"
        if mode not in _FIELD_VALIDATION:
            raise BadRequest(f'fieldValidation parameter unsupported: "{mode}"')
        pruned, found = prune_unknown(data)
        if found and mode == "Strict":
            kind = call.target.resource.kind
            version = call.target.resource.group_version.rsplit("/", 1)[-1]
            texts = ", ".join(warning_texts(found))
            raise BadRequest(
                f'{kind} in version "{version}" cannot be handled as a {kind}: strict decoding error: {texts}'
            )
        if found and mode == "Warn":
            self.warnings.extend(warning_texts(found))
        return pruned

    def create(self, call: Call) -> Answer:
        obj, data = self._decode(call, decode_body(call.body, call.content_type))
        if dry_run(call.query, call.method):
            with self.api.acting_as(call.agent):  # every check of a real create (422, 404, 409...)
                checked = self.api.create(obj, dry_run=True)
            return self._dry_run_answer(call, 201, checked, data, None)
        return self._create(call, obj, data)

    def _create(self, call: Call, obj: Any, written: Any, operation: str = "Update") -> Answer:
        """Create ``obj`` (decoded from ``written``); its fields are the request's manager's,
        with ``operation``; 201 and the result."""
        with self.api.acting_as(call.agent):
            new = self.api.create(obj)
        self._remember(call, written, new)
        self._recorded(call.target.resource, None, new, call, operation=operation)
        return Answer(201, self.encoded(new))

    def _store(self, call: Call, obj: Any) -> Any:
        """Update ``obj``, or only its status on ``/status``; the stored result."""
        sub = call.target.sub
        with self.api.acting_as(call.agent):
            if sub == "resize":
                return self.api.update_resize(obj)
            return self.api.update_status(obj) if sub == "status" else self.api.update(obj)

    def _write(
        self, call: Call, obj: Any, current: Any, written: Any, managed_fields: ManagedFields | None = None
    ) -> Answer:
        """Update (or, for ``/status``, update the status of) ``obj`` (decoded from ``written``);
        200 and the result. ``managed_fields``: a changed ``metadata.managedFields`` the write
        carried (kubectl's client-side to server-side apply migration patches them)."""
        if dry_run(call.query, call.method):
            return self._dry_run_answer(call, 200, obj, written, current)
        new = self._store(call, obj)
        self._remember(call, written, new)
        if new is not current or managed_fields is not None:
            self._recorded(call.target.resource, current, new, call, managed_fields=managed_fields)
        return Answer(200, self.encoded(new))

    def update(self, call: Call) -> Answer:
        obj, data = self._decode(call, decode_body(call.body, call.content_type))
        current = self._get(call.target)
        return self._write(call, obj, current, data)

    def patch(self, call: Call) -> Answer:
        t = call.target
        if t.sub == "scale":
            return self.subresources.scale_patch(call, self._get(t))
        mt = media_type(call.content_type)
        if mt == APPLY:
            return self.server_side_apply(call)
        current = self._get(t)
        base = self.served(current)
        managed = self.managers.managed_fields(current.metadata.uid)
        if managed:  # as upstream, a patch applies to the object with its managedFields
            base["metadata"] = {**base.get("metadata", {}), "managedFields": managed}
        patched = apply_patch(t.resource, base, call.body, mt)
        carried = (patched.get("metadata") or {}).get("managedFields")
        obj, patched = self._decode(call, patched)
        changed = carried if isinstance(carried, list) and carried != managed else None
        if changed is not None:
            check_managed_fields(changed, t.resource.kind, t.name)
        return self._write(call, obj, current, patched, managed_fields=changed)

    def server_side_apply(self, call: Call) -> Answer:
        t = call.target
        manager = call.query.get("fieldManager", "")
        if not manager:
            raise BadRequest("PATCH, fieldManager is required for apply requests")
        force = call.query.get("force", "") in ("true", "1")
        applied = decode_body(call.body, call.content_type)
        if not isinstance(applied, dict):
            raise BadRequest("the object provided is unrecognized: expected a mapping")
        try:
            current = self._get(t)
        except NotFound:
            current = None
        merged = self.managers.apply(
            t.resource,
            None if current is None else self.served(current),
            applied,
            manager=manager,
            force=force,
            time=self.api.clock.timestamp(),
        )
        obj, merged = self._decode(call, merged)
        if dry_run(call.query, call.method):
            return self._dry_run_answer(call, 201 if current is None else 200, obj, merged, current)
        if current is None:
            # the object had no uid when ``apply`` ran: the created object is handed over with
            # the apply's manager and operation "Apply" so its ownership is kept under the new uid
            return self._create(call, obj, merged, operation="Apply")
        new = self._store(call, obj)
        self._remember(call, merged, new)
        return Answer(200, self.encoded(new))

    # --- delete ---------------------------------------------------------------------------

    def _delete_options(self, call: Call) -> dict[str, Any]:
        body = decode_body(call.body, call.content_type) if call.body.strip() else None
        opts: dict[str, Any] = dict(body) if isinstance(body, dict) else {}
        q = call.query
        if "gracePeriodSeconds" in q and "gracePeriodSeconds" not in opts:
            try:
                opts["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
            except ValueError:
                raise BadRequest(f'invalid gracePeriodSeconds "{q["gracePeriodSeconds"]}"') from None
        grace = opts.get("gracePeriodSeconds")
        if grace is not None and not isinstance(grace, int):
            raise BadRequest("gracePeriodSeconds must be an integer")
        if "propagationPolicy" in q and "propagationPolicy" not in opts:
            opts["propagationPolicy"] = q["propagationPolicy"]
        orphan = opts.get("orphanDependents")
        check_delete_options(opts.get("propagationPolicy"), orphan_dependents=orphan)
        if orphan is not None and opts.get("propagationPolicy") is None:
            opts["propagationPolicy"] = "Orphan" if orphan else "Background"
        if "dryRun" in q and "dryRun" not in opts:
            opts["dryRun"] = [q["dryRun"]]
        if opts.get("dryRun") is not None:
            dry = opts["dryRun"]
            check_dry_run(dry if isinstance(dry, list) else [dry], "DELETE")
        return opts

    def _delete_one(self, res: Resource, obj: Any, opts: dict[str, Any], call: Call) -> tuple[Any, bool]:
        """Delete ``obj``; (the answer object, removed at once)."""
        pre = opts.get("preconditions") or {}
        grace = opts.get("gracePeriodSeconds")
        meta = obj.metadata
        if opts.get("dryRun"):  # the real delete's checks and answer, nothing written
            current, left = self.api.plan_delete(
                res.kind,
                meta.name,
                meta.namespace,
                grace_period_seconds=grace,
                uid=pre.get("uid") or "",
                propagation_policy=opts.get("propagationPolicy"),
                resource_version=pre.get("resourceVersion") or "",
            )
            return (self.api.dry_run_removal(res.kind, current), True) if left is None else (left, False)
        with self.api.acting_as(call.agent):
            result = self.api.delete(
                res.kind,
                meta.name,
                meta.namespace,
                grace_period_seconds=grace,
                uid=pre.get("uid") or "",
                propagation_policy=opts.get("propagationPolicy"),
                resource_version=pre.get("resourceVersion") or "",
            )
        try:
            still = self.api.get(res.kind, meta.name, meta.namespace)
            removed = still.metadata.uid != meta.uid
        except NotFound:
            removed = True
        if removed:
            self.managers.forget(meta.uid)
        return result, removed

    def delete(self, call: Call) -> Answer:
        t = call.target
        res = t.resource
        opts = self._delete_options(call)
        current = self._get(t)
        result, removed = self._delete_one(res, current, opts, call)
        if removed and res.kind not in RETURNS_DELETED:
            details: dict[str, Any] = {"name": t.name}
            if res.group:
                details["group"] = res.group
            details.update(kind=res.name, uid=current.metadata.uid)
            return Answer(200, encode(success_status(details=details)))
        return Answer(200, self.encoded(result))

    def delete_collection(self, call: Call) -> Answer:
        t = call.target
        res = t.resource
        lopts = parse_list_options(res.kind, call.query)
        opts = self._delete_options(call)
        items, rev = self.list_objects(t, lopts)
        # upstream's Store.DeleteCollection answers the list as listed (before the deletes, which
        # forget the managed fields), for a dry run and a real delete alike; an item gone
        # meanwhile (NotFound) is skipped
        body = encode_list(res, items, resource_version=rev, managed=self.managers.managed_fields, extras=self.extras)
        for obj in items:
            try:
                self._delete_one(res, obj, opts, call)
            except NotFound:
                continue
        return Answer(200, body)
