"""From a found solution to results (the end of upstream ``Allocate`` and ``createNodeSelector``,
``allocator_stable.go`` v1.34).

Per claim: its devices in the order picked; configs — each class's ``spec.config`` once per
class (``FromClass``, naming every request that used the class), then the claim's own configs
(``FromClaim``) that apply to a request or to the picked sub-request; a config naming every
request has its ``requests`` dropped ("empty means all"). The node selector: the first device
from a slice (or, with per-device node selection, a device) with ``nodeName`` pins the claim to
that node (``matchFields metadata.name In [node]``); otherwise the single terms of the slices'
node selectors are merged into one term, requirements deduplicated; nothing → no selector
(the claim can be used on every node).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from emulator.base.api.core import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm

from .allocator_types import AllocationError, ClaimAllocation, ConfigResult, DeviceResult, claim_ref

if TYPE_CHECKING:
    from .allocator import _Run

__all__ = ["build_results", "local_node_selector"]


def local_node_selector(node_name: str) -> NodeSelector:
    return NodeSelector(
        node_selector_terms=[
            NodeSelectorTerm(
                match_fields=[NodeSelectorRequirement(key="metadata.name", operator="In", values=[node_name])]
            )
        ]
    )


def _request_of(claim: Any, name: str, parent: str) -> Any:
    for request in claim.spec.devices.requests:
        if request.name == (parent or name):
            if not parent:
                return request.exactly
            for sub in request.first_available or ():
                if sub.name == name:
                    return sub
    return None


def build_results(run: _Run) -> list[ClaimAllocation]:
    out = []
    for ci, picked in enumerate(run.result):
        claim = run.claims[ci]
        devices = []
        for p in picked:
            req = _request_of(claim, p.request, p.parent)
            devices.append(
                DeviceResult(
                    request=f"{p.parent}/{p.request}" if p.parent else p.request,
                    id=p.id,
                    admin_access=p.admin_access,
                    tolerations=tuple(getattr(req, "tolerations", None) or ()),
                    binding_conditions=tuple(getattr(p.device, "binding_conditions", None) or ())
                    if run.features.device_binding_and_status
                    else (),
                    binding_failure_conditions=tuple(getattr(p.device, "binding_failure_conditions", None) or ())
                    if run.features.device_binding_and_status
                    else (),
                    share_id=_share_id(claim, p) if p.consumed is not None else None,
                    consumed_capacity=p.consumed,
                )
            )
        out.append(
            ClaimAllocation(
                devices=tuple(devices),
                config=_configs(run, ci, claim),
                node_selector=_node_selector(claim, picked),
            )
        )
    return out


def _share_id(claim: Any, p: Any) -> str:
    """A share's ID: upstream draws a random UID; here one derived from the claim, the slot and
    the device, so that runs repeat."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{claim.metadata.uid}/{p.key}/{p.id}"))


def _configs(run: _Run, ci: int, claim: Any) -> tuple[ConfigResult, ...]:
    configs: list[tuple[str, list[str], Any]] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    requests = claim.spec.devices.requests
    for ri, _request in enumerate(requests):
        rd = run.request_data[(ci, ri, 0)]
        if rd.parent is not None:
            rd = run.request_data[(ci, ri, rd.selected_sub)]
        klass = rd.klass
        if klass is None:
            continue
        name = klass.metadata.name
        if name in class_ranges:
            start, end = class_ranges[name]
            for i in range(start, end):
                configs[i][1].append(rd.name())
            continue
        start = len(configs)
        for cfg in klass.spec.config or ():
            configs.append(("FromClass", [rd.name()], _configuration(cfg)))
        class_ranges[name] = (start, len(configs))
    for cfg in claim.spec.devices.config or ():
        names = list(cfg.requests or ())
        if not names:
            configs.append(("FromClaim", names, _configuration(cfg)))
            continue
        for ri, request in enumerate(requests):
            if request.name in names:
                configs.append(("FromClaim", names, _configuration(cfg)))
                continue
            rd = run.request_data[(ci, ri, 0)]
            if rd.parent is None:
                continue
            sub = request.first_available[rd.selected_sub]
            if f"{request.name}/{sub.name}" in names:
                configs.append(("FromClaim", names, _configuration(cfg)))
    return tuple(
        ConfigResult(src, () if len(reqs) == len(requests) else tuple(reqs), conf) for src, reqs, conf in configs
    )


def _configuration(cfg: Any) -> Any:
    """The DeviceConfiguration part of a class or claim config (today only ``opaque``)."""
    return getattr(cfg, "opaque", None)


def _node_selector(claim: Any, picked: list[Any]) -> NodeSelector | None:
    fields: list[NodeSelectorRequirement] = []
    expressions: list[NodeSelectorRequirement] = []
    for p in picked:
        spec = p.slice.spec
        if spec.per_device_node_selection:
            node_name, selector = p.device.node_name, p.device.node_selector
        else:
            node_name, selector = spec.node_name, spec.node_selector
        if node_name:
            return local_node_selector(node_name)
        if selector is not None:
            terms = selector.node_selector_terms
            if len(terms) == 1:
                _merge(terms[0].match_fields, fields)
                _merge(terms[0].match_expressions, expressions)
            elif len(terms) > 1:
                raise AllocationError(
                    f"create NodeSelector for claim {claim_ref(claim)}: unsupported "
                    f"ResourceSlice.NodeSelector with {len(terms)} terms"
                )
    if fields or expressions:
        return NodeSelector(node_selector_terms=[NodeSelectorTerm(match_expressions=expressions, match_fields=fields)])
    return None


def _merge(src: list[NodeSelectorRequirement], dst: list[NodeSelectorRequirement]) -> None:
    for req in src:
        if not any(d.key == req.key and d.operator == req.operator and set(d.values) == set(req.values) for d in dst):
            dst.append(req)
