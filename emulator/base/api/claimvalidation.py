"""Validation of ResourceClaims and ResourceClaimTemplates (upstream
``pkg/apis/resource/validation``, v1.34), of a claim's status writes, and the helpers every
``resource.k8s.io`` kind's validation shares (names, request references, selectors, opaque
configuration, tolerations), as ``(path, detail)`` problems in upstream's order (the caller
reports the first). Objects are checked as stored, i.e. defaulted (``resourcedefaults``).

Claim spec: at most 32 requests with unique DNS-label names, each exactly one of ``exactly``
and ``firstAvailable`` (at most 8 subrequests, unique names), a device class name, at most 32
selectors each a CEL expression (``validate_cel_selector``), allocation mode ``All`` (no count)
or ``ExactCount`` (count > 0); constraints and configs naming existing requests
(``req`` or ``req/subreq``), constraints a fully qualified ``matchAttribute``, configs an opaque
driver configuration (a driver name, a JSON object of at most 10 KiB).

Status writes: ``reservedFor`` needs an allocation, holds at most 256 consumers with unique
uids, and gains none once the claim is being deleted; ``status.allocation`` once set stays as
it is until it is removed (deallocation), and a new one names existing requests, valid drivers,
pools and devices; ``status.devices`` entries name allocated devices.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator, Mapping
from typing import Any, Final

from emulator.base.api.dracel import CEL_CONSUMABLE_CAPACITY, CelCompileError, compile_selector
from emulator.base.api.labels import (
    _regex_error,
    dns1123_label_errors,
    dns1123_subdomain_errors,
    go_quote,
    label_value_errors,
)
from emulator.base.api.labelselector import label_name_problems
from emulator.base.api.podvalidation import node_selector_problems
from emulator.base.api.resource import (
    ALLOCATION_MODE_ALL,
    ALLOCATION_MODE_EXACT_COUNT,
    ALLOCATION_MODES,
    TAINT_EFFECTS,
    TOLERATION_OPERATORS,
    DeviceClaim,
    DeviceConstraint,
    DeviceSelector,
    OpaqueDeviceConfiguration,
    ResourceClaim,
    ResourceClaimSpec,
)
from emulator.base.api.resourcestatus import CONFIG_SOURCES, AllocationResult, DeviceToleration
from emulator.base.api.volumevalidation import csi_driver_name_problems, go_json, supported

__all__ = [
    "CEL_SELECTOR_EXPRESSION_MAX_LENGTH",
    "RESERVED_FOR_MAX_SIZE",
    "Problem",
    "binding_condition_problems",
    "claim_spec_problems",
    "claim_status_problems",
    "dns_label_problems",
    "invalid",
    "opaque_problems",
    "pool_name_problems",
    "qualified_name_problems",
    "request_names",
    "selector_problems",
    "subdomain_problems",
    "too_long",
    "too_many",
    "unique_name_problems",
    "validate_cel_selector",
]

Problem = tuple[str, str]

DEVICE_REQUESTS_MAX_SIZE: Final = 32
DEVICE_CONSTRAINTS_MAX_SIZE: Final = 32
DEVICE_CONFIG_MAX_SIZE: Final = 32
DEVICE_SELECTORS_MAX_SIZE: Final = 32
FIRST_AVAILABLE_MAX_SIZE: Final = 8
DEVICE_TOLERATIONS_MAX_LENGTH: Final = 16
CEL_SELECTOR_EXPRESSION_MAX_LENGTH: Final = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH: Final = 10 * 1024
RESERVED_FOR_MAX_SIZE: Final = 256
ALLOCATION_RESULTS_MAX_SIZE: Final = 32
DEVICE_MAX_ID_LENGTH: Final = 32
POOL_NAME_MAX_LENGTH: Final = 253
BINDING_CONDITIONS_MAX_SIZE: Final = 4
DEVICE_STATUS_MAX_CONDITIONS: Final = 8
_IMMUTABLE: Final = "field is immutable"
_ONE_OF_REQUEST: Final = "exactly one of `exactly` or `firstAvailable` is required"
_REQUEST_REF: Final = (
    "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
)
_C_IDENTIFIER_FMT: Final = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_RE: Final = re.compile(_C_IDENTIFIER_FMT)
_C_IDENTIFIER_ERR: Final = (
    "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric "
    "characters or '_'"
)


def invalid(value: Any, detail: str) -> str:
    shown = go_quote(value) if isinstance(value, str) else go_json(value)
    return f"Invalid value: {shown}: {detail}"


def too_many(n: int, limit: int) -> str:
    return f"Too many: {n}: must have at most {limit} items"


def too_long(limit: int) -> str:
    return f"Too long: may not be more than {limit} bytes"


def validate_cel_selector(expr: str, path: str) -> Iterator[Problem]:
    """A device selector's CEL expression (upstream ``validateCELSelector``): at most 10 KiB,
    then compiled in upstream's DRA CEL environment (``dracel.compile_selector``; compiled once
    per distinct expression, the allocator reuses the result): a compile error is ``Invalid
    value: "<expr>": compilation failed: ERROR: <input>:L:C: ...`` at ``path``."""
    if len(expr.encode()) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        yield path, too_long(CEL_SELECTOR_EXPRESSION_MAX_LENGTH)
        return
    if not expr:
        yield path, "Required value"
        return
    try:
        compile_selector(expr, consumable_capacity=CEL_CONSUMABLE_CAPACITY.get())
    except CelCompileError as err:
        yield path, str(err) if err.too_long else invalid(expr, str(err))


# --- names ------------------------------------------------------------------------------------


def dns_label_problems(name: str, path: str) -> Iterator[Problem]:
    """``ValidateDNS1123Label`` (request, device and counter names)."""
    if not name:
        yield path, "Required value"
        return
    for msg in dns1123_label_errors(name):
        yield path, invalid(name, msg)


def subdomain_problems(name: str, path: str) -> Iterator[Problem]:
    for msg in dns1123_subdomain_errors(name):
        yield path, invalid(name, msg)


def pool_name_problems(name: str, path: str) -> Iterator[Problem]:
    if not name:
        yield path, "Required value"
        return
    if len(name) > POOL_NAME_MAX_LENGTH:
        yield path, too_long(POOL_NAME_MAX_LENGTH)
    for part in name.split("/"):
        yield from subdomain_problems(part, path)


def _uid(uid: str, path: str) -> Iterator[Problem]:
    try:
        uuid.UUID(uid)
    except ValueError as err:
        yield path, invalid(uid, f"error validating uid: {err}")
        return
    if len(uid) != 36 or uid != uid.lower():
        detail = (
            "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase "
            "hexadecimal characters"
        )
        yield path, invalid(uid, detail)


def _c_identifier(ident: str, path: str) -> Iterator[Problem]:
    if len(ident) > DEVICE_MAX_ID_LENGTH:
        yield path, too_long(DEVICE_MAX_ID_LENGTH)
    if _C_IDENTIFIER_RE.fullmatch(ident) is None:
        yield path, invalid(ident, _regex_error(_C_IDENTIFIER_ERR, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName"))


def qualified_name_problems(name: str, path: str) -> Iterator[Problem]:
    """``validateQualifiedName``: a C identifier, optionally after a driver-name domain and ``/``."""
    parts = name.split("/")
    if len(parts) == 1:
        yield from _c_identifier(parts[0], path)
    elif len(parts) == 2:
        domain, ident = parts
        if not domain:
            yield path, invalid("", "the domain must not be empty")
        else:
            yield from csi_driver_name_problems(domain, path)
        if not ident:
            yield path, invalid("", "the name must not be empty")
        else:
            yield from _c_identifier(ident, path)
    else:
        yield path, invalid(name, "must not contain more than one slash")


def _fully_qualified(name: str, path: str) -> Iterator[Problem]:
    yield from qualified_name_problems(name, path)
    if "/" not in name:
        yield path, invalid(name, "a fully qualified name must be a domain and a name separated by a slash")


# --- claims -----------------------------------------------------------------------------------


def request_names(claim: DeviceClaim) -> dict[str, list[str] | None]:
    """Request name → its subrequest names (None: an ``exactly`` request)."""
    return {r.name: ([s.name for s in r.first_available] if r.first_available else None) for r in claim.requests}


def _has_request(names: Mapping[str, list[str] | None], ref: str) -> bool:
    segments = ref.split("/")
    if len(segments) > 2 or segments[0] not in names:
        return False
    subs = names[segments[0]]
    return len(segments) == 1 or (subs is not None and segments[1] in subs)


def _request_ref(ref: str, path: str, names: Mapping[str, list[str] | None]) -> Iterator[Problem]:
    segments = ref.split("/")
    if len(segments) > 2:
        yield path, invalid(ref, _REQUEST_REF)
        return
    for seg in segments:
        yield from dns_label_problems(seg, path)
    if not _has_request(names, ref):
        yield path, invalid(ref, _REQUEST_REF)


def _request_refs(refs: list[str], path: str, names: Mapping[str, list[str] | None]) -> Iterator[Problem]:
    if len(refs) > DEVICE_REQUESTS_MAX_SIZE:
        yield path, too_many(len(refs), DEVICE_REQUESTS_MAX_SIZE)
        return
    seen: set[str] = set()
    for i, ref in enumerate(refs):
        yield from _request_ref(ref, f"{path}[{i}]", names)
    for i, ref in enumerate(refs):
        if ref in seen:
            yield f"{path}[{i}]", f"Duplicate value: {go_quote(ref)}"
        seen.add(ref)


def selector_problems(selectors: list[DeviceSelector], path: str) -> Iterator[Problem]:
    if len(selectors) > DEVICE_SELECTORS_MAX_SIZE:
        yield path, too_many(len(selectors), DEVICE_SELECTORS_MAX_SIZE)
        return
    for i, sel in enumerate(selectors):
        if sel.cel is None:
            yield f"{path}[{i}].cel", "Required value"
        else:
            yield from validate_cel_selector(sel.cel.expression, f"{path}[{i}].cel.expression")


def _allocation_mode(mode: str, count: int, path: str) -> Iterator[Problem]:
    if mode == ALLOCATION_MODE_ALL:
        if count != 0:
            yield f"{path}.count", f"Invalid value: {count}: must not be specified when allocationMode is 'All'"
    elif mode == ALLOCATION_MODE_EXACT_COUNT:
        if count <= 0:
            yield f"{path}.count", f"Invalid value: {count}: must be greater than zero"
    else:
        yield f"{path}.allocationMode", supported(mode, ALLOCATION_MODES)


def _toleration(t: DeviceToleration, path: str) -> Iterator[Problem]:
    if t.key:
        yield from label_name_problems(t.key, f"{path}.key")
    if t.operator == "Exists":
        if t.value:
            yield f"{path}.value", invalid(t.value, "must be empty for operator `Exists`")
    elif t.operator == "Equal":
        for msg in label_value_errors(t.value):
            yield f"{path}.value", invalid(t.value, msg)
    elif not t.operator:
        yield f"{path}.operator", "Required value"
    else:
        yield f"{path}.operator", supported(t.operator, TOLERATION_OPERATORS)
    if t.effect and t.effect not in TAINT_EFFECTS:
        yield f"{path}.effect", supported(t.effect, TAINT_EFFECTS)


def _device_class_name(name: str, path: str) -> Iterator[Problem]:
    if not name:
        yield path, "Required value"
    else:
        yield from subdomain_problems(name, path)


def _request_body(r: Any, path: str) -> Iterator[Problem]:
    """What ``exactly`` and a ``firstAvailable`` entry share."""
    yield from _device_class_name(r.device_class_name, f"{path}.deviceClassName")
    yield from selector_problems(r.selectors, f"{path}.selectors")
    yield from _allocation_mode(r.allocation_mode, r.count, path)
    for i, t in enumerate(r.tolerations):
        yield from _toleration(t, f"{path}.tolerations[{i}]")


def unique_name_problems(items: list[Any], path: str) -> Iterator[Problem]:
    seen: set[str] = set()
    for i, item in enumerate(items):
        if item.name in seen:
            yield f"{path}[{i}]", f"Duplicate value: {go_quote(item.name)}"
        seen.add(item.name)


def _device_claim(claim: DeviceClaim, path: str) -> Iterator[Problem]:
    names = request_names(claim)
    rpath = f"{path}.requests"
    if len(claim.requests) > DEVICE_REQUESTS_MAX_SIZE:
        yield rpath, too_many(len(claim.requests), DEVICE_REQUESTS_MAX_SIZE)
    else:
        for i, r in enumerate(claim.requests):
            p = f"{rpath}[{i}]"
            yield from dns_label_problems(r.name, f"{p}.name")
            if r.exactly is None and not r.first_available:
                yield p, f"Required value: {_ONE_OF_REQUEST}"
            elif r.exactly is not None and r.first_available:
                yield p, f"Invalid value: null: {_ONE_OF_REQUEST}, but multiple fields are set"
            elif r.first_available:
                fpath = f"{p}.firstAvailable"
                if len(r.first_available) > FIRST_AVAILABLE_MAX_SIZE:
                    yield fpath, too_many(len(r.first_available), FIRST_AVAILABLE_MAX_SIZE)
                    continue
                for j, s in enumerate(r.first_available):
                    yield from dns_label_problems(s.name, f"{fpath}[{j}].name")
                    yield from _request_body(s, f"{fpath}[{j}]")
                yield from unique_name_problems(r.first_available, fpath)
            elif r.exactly is not None:
                yield from _request_body(r.exactly, f"{p}.exactly")
        yield from unique_name_problems(claim.requests, rpath)
    yield from _constraints(claim.constraints, f"{path}.constraints", names)
    cpath = f"{path}.config"
    if len(claim.config) > DEVICE_CONFIG_MAX_SIZE:
        yield cpath, too_many(len(claim.config), DEVICE_CONFIG_MAX_SIZE)
        return
    for i, c in enumerate(claim.config):
        yield from _request_refs(c.requests, f"{cpath}[{i}].requests", names)
        yield from opaque_problems(c.opaque, f"{cpath}[{i}]", stored=False)


def _constraints(constraints: list[DeviceConstraint], path: str, names: Mapping[str, Any]) -> Iterator[Problem]:
    if len(constraints) > DEVICE_CONSTRAINTS_MAX_SIZE:
        yield path, too_many(len(constraints), DEVICE_CONSTRAINTS_MAX_SIZE)
        return
    for i, c in enumerate(constraints):
        p = f"{path}[{i}]"
        yield from _request_refs(c.requests, f"{p}.requests", names)
        if c.match_attribute is not None:
            yield from _fully_qualified(c.match_attribute, f"{p}.matchAttribute")
        elif c.distinct_attribute is not None:
            yield from _fully_qualified(c.distinct_attribute, f"{p}.distinctAttribute")
        else:
            yield f"{p}.matchAttribute", "Required value"


def _raw_json(value: Any, path: str, *, stored: bool, limit: int) -> Iterator[Problem]:
    if value is None:
        yield path, "Required value"
        return
    raw = json.dumps(value, separators=(",", ":"))
    if not stored and len(raw.encode()) > limit:
        yield path, too_long(limit)
    elif not isinstance(value, dict):
        yield path, 'Invalid value: "<value omitted>": must be a valid JSON object'


def opaque_problems(opaque: OpaqueDeviceConfiguration | None, path: str, *, stored: bool) -> Iterator[Problem]:
    if opaque is None:
        yield f"{path}.opaque", "Required value"
        return
    yield from csi_driver_name_problems(opaque.driver, f"{path}.opaque.driver")
    yield from _raw_json(
        opaque.parameters, f"{path}.opaque.parameters", stored=stored, limit=OPAQUE_PARAMETERS_MAX_LENGTH
    )


def claim_spec_problems(spec: ResourceClaimSpec, path: str = "spec") -> Iterator[Problem]:
    yield from _device_claim(spec.devices, f"{path}.devices")


def binding_condition_problems(conds: list[str], failures: list[str], path: str) -> Iterator[Problem]:
    for field, items in (("bindingConditions", conds), ("bindingFailureConditions", failures)):
        if len(items) > BINDING_CONDITIONS_MAX_SIZE:
            yield f"{path}.{field}", too_many(len(items), BINDING_CONDITIONS_MAX_SIZE)
            continue
        seen: set[str] = set()
        for i, c in enumerate(items):
            yield from label_name_problems(c, f"{path}.{field}[{i}]")
            if c in seen:
                yield f"{path}.{field}[{i}]", f"Duplicate value: {go_quote(c)}"
            seen.add(c)
            if field == "bindingFailureConditions" and c in conds:
                detail = "bindingFailureConditions must not overlap with bindingConditions"
                yield f"{path}.{field}[{i}]", invalid(c, detail)
    if not conds and failures:
        yield (
            f"{path}.bindingConditions",
            invalid(conds, "bindingConditions are required to use bindingFailureConditions"),
        )
    if not failures and conds:
        detail = "bindingFailureConditions are required to use bindingConditions"
        yield f"{path}.bindingFailureConditions", invalid(failures, detail)


# --- claim status -------------------------------------------------------------------------------


def _allocation(a: AllocationResult, path: str, names: Mapping[str, Any]) -> Iterator[Problem]:
    rpath = f"{path}.devices.results"
    if len(a.devices.results) > ALLOCATION_RESULTS_MAX_SIZE:
        yield rpath, too_many(len(a.devices.results), ALLOCATION_RESULTS_MAX_SIZE)
    else:
        for i, r in enumerate(a.devices.results):
            p = f"{rpath}[{i}]"
            yield from _request_ref(r.request, f"{p}.request", names)
            yield from csi_driver_name_problems(r.driver, f"{p}.driver")
            yield from pool_name_problems(r.pool, f"{p}.pool")
            yield from dns_label_problems(r.device, f"{p}.device")
            yield from binding_condition_problems(r.binding_conditions, r.binding_failure_conditions, p)
            for j, t in enumerate(r.tolerations):
                yield from _toleration(t, f"{p}.tolerations[{j}]")
            if r.share_id is not None:
                yield from _uid(r.share_id, f"{p}.shareID")
    cpath = f"{path}.devices.config"
    if len(a.devices.config) > 2 * DEVICE_CONFIG_MAX_SIZE:
        yield cpath, too_many(len(a.devices.config), 2 * DEVICE_CONFIG_MAX_SIZE)
    else:
        for i, c in enumerate(a.devices.config):
            p = f"{cpath}[{i}]"
            if not c.source:
                yield f"{p}.source", "Required value"
            elif c.source not in CONFIG_SOURCES:
                yield f"{p}.source", supported(c.source, CONFIG_SOURCES)
            yield from _request_refs(c.requests, f"{p}.requests", names)
            yield from opaque_problems(c.opaque, p, stored=False)
    if a.node_selector is not None:
        yield from node_selector_problems(a.node_selector, f"{path}.nodeSelector")


def claim_status_problems(current: ResourceClaim, candidate: ResourceClaim) -> Iterator[Problem]:
    """``validateResourceClaimStatusUpdate``: a status write of ``candidate`` over ``current``."""
    status, old = candidate.status, current.status
    names = request_names(candidate.spec.devices)
    rpath = "status.reservedFor"
    if len(status.reserved_for) > RESERVED_FOR_MAX_SIZE:
        yield rpath, too_many(len(status.reserved_for), RESERVED_FOR_MAX_SIZE)
    else:
        uids: set[str] = set()
        for i, ref in enumerate(status.reserved_for):
            for attr in ("resource", "name", "uid"):
                if not getattr(ref, attr):
                    yield f"{rpath}[{i}].{attr}", "Required value"
            if ref.uid in uids:
                yield f"{rpath}[{i}]", f"Duplicate value: {go_quote(ref.uid)}"
            uids.add(ref.uid)
    allocated: set[tuple[str, str, str, str | None]] = set()
    if status.allocation is not None:
        allocated = {(r.driver, r.pool, r.device, r.share_id) for r in status.allocation.devices.results}
    seen_devices: set[tuple[str, str, str, str | None]] = set()
    for i, d in enumerate(status.devices):
        p = f"status.devices[{i}]"
        yield from csi_driver_name_problems(d.driver, f"{p}.driver")
        yield from pool_name_problems(d.pool, f"{p}.pool")
        yield from dns_label_problems(d.device, f"{p}.device")
        key = (d.driver, d.pool, d.device, d.share_id)
        shown = f"{d.driver}/{d.pool}/{d.device}" + (f"/{d.share_id}" if d.share_id else "")
        if key not in allocated:
            yield p, invalid(shown, "must be an allocated device in the claim")
        if len(d.conditions) > DEVICE_STATUS_MAX_CONDITIONS:
            yield f"{p}.conditions", too_many(len(d.conditions), DEVICE_STATUS_MAX_CONDITIONS)
        if key in seen_devices:
            yield p, f"Duplicate value: {go_quote(shown)}"
        seen_devices.add(key)
    if status.reserved_for:
        if status.allocation is None:
            yield rpath, "Forbidden: may not be specified when `allocated` is not set"
        elif candidate.metadata.deletion_timestamp is not None:
            before = {r.uid for r in old.reserved_for}
            if any(r.uid not in before for r in status.reserved_for):
                yield (
                    rpath,
                    (
                        "Forbidden: new entries may not be added while `deallocationRequested` or `deletionTimestamp` "
                        "are set"
                    ),
                )
    if old.allocation is not None and status.allocation is not None:
        if status.allocation != old.allocation:
            yield "status.allocation", invalid(status.allocation, _IMMUTABLE)
    elif status.allocation is not None:
        yield from _allocation(status.allocation, "status.allocation", names)
