"""Builders for DRA objects in the shapes of upstream's ``allocatortesting`` helpers
(``class``, ``claim``, ``request``, ``slice_with_devices``, ``device``, ...), and a stand-in CEL
backend understanding the few expression forms those tests use (the real one is
``emulator.base.api.dracel``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace as NS
from typing import Any

from emulator.base.api.core import Node, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from emulator.base.api.meta import ObjectMeta
from emulator.base.api.quantity import parse_quantity

REGION1, REGION2 = "region-1", "region-2"
NODE1, NODE2 = "node-1", "node-2"
CLASS_A, CLASS_B = "class-a", "class-b"
DRIVER_A, DRIVER_B = "driver-a", "driver-b"
POOL1, POOL2, POOL3 = "pool-1", "pool-2", "pool-3"
REQ0, REQ1, REQ2 = "req-0", "req-1", "req-2"
SUB0, SUB1 = "subReq-0", "subReq-1"
CLAIM0, CLAIM1 = "claim-0", "claim-1"
SLICE1, SLICE2 = "slice-1", "slice-2"
DEV0, DEV1, DEV2, DEV3 = "device-0", "device-1", "device-2", "device-3"


def node(name: str, region: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={"region": region, "planet": "earth"}))


def selector(expr: str) -> Any:
    return NS(cel=NS(expression=expr))


def device_class(name: str, driver: str, config: list[Any] | None = None) -> Any:
    return NS(
        metadata=ObjectMeta(name=name),
        spec=NS(selectors=[selector(f'device.driver == "{driver}"')], config=config or []),
    )


def exactly(
    cls: str,
    count: int = 1,
    mode: str = "ExactCount",
    selectors: list[Any] | None = None,
    admin: bool | None = None,
    tolerations: list[Any] | None = None,
) -> Any:
    return NS(
        device_class_name=cls,
        selectors=selectors or [],
        allocation_mode=mode,
        count=count,
        admin_access=admin,
        tolerations=tolerations or [],
        capacity=None,
    )


def request(
    name: str,
    cls: str,
    count: int = 1,
    *selectors: Any,
    admin: bool | None = None,
    tolerations: list[Any] | None = None,
) -> Any:
    ex = exactly(cls, count, selectors=list(selectors), admin=admin, tolerations=tolerations)
    return NS(name=name, exactly=ex, first_available=[])


def all_request(name: str, cls: str) -> Any:
    return NS(name=name, exactly=exactly(cls, 0, mode="All"), first_available=[])


def sub_request(name: str, cls: str, count: int = 1, *selectors: Any) -> Any:
    return NS(
        name=name,
        device_class_name=cls,
        selectors=list(selectors),
        allocation_mode="ExactCount",
        count=count,
        tolerations=[],
        capacity=None,
    )


def prioritized(name: str, *subs: Any) -> Any:
    return NS(name=name, exactly=None, first_available=list(subs))


def match_attribute(attr: str, *requests: str) -> Any:
    return NS(requests=list(requests), match_attribute=attr, distinct_attribute=None)


def claim(
    name: str,
    *requests: Any,
    constraints: list[Any] | None = None,
    config: list[Any] | None = None,
    namespace: str = "",
) -> Any:
    return NS(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=NS(devices=NS(requests=list(requests), constraints=constraints or [], config=config or [])),
    )


def claim_with_request(name: str, req: str, cls: str, *constraints: Any) -> Any:
    return claim(name, request(req, cls, 1), constraints=list(constraints))


def attr(value: Any) -> Any:
    kinds = {bool: "bool_value", int: "int_value", str: "string_value"}
    a = dict.fromkeys(("int_value", "bool_value", "string_value", "version_value"))
    if isinstance(value, tuple):  # ("version", "1.0.0")
        a["version_value"] = value[1]
    else:
        a[kinds[type(value)]] = value
    return NS(**a)


def device(
    name: str, capacity: dict[str, str] | None = None, attributes: dict[str, Any] | None = None, **kw: Any
) -> Any:
    d = {
        "name": name,
        "attributes": {k: attr(v) for k, v in (attributes or {}).items()},
        "capacity": {k: NS(value=parse_quantity(v), request_policy=None) for k, v in (capacity or {}).items()},
        "consumes_counters": [],
        "node_name": None,
        "node_selector": None,
        "all_nodes": None,
        "taints": [],
        "binds_to_node": None,
        "binding_conditions": [],
        "binding_failure_conditions": [],
        "allow_multiple_allocations": None,
    }
    d.update(kw)
    return NS(**d)


def node_label_selector(key: str, value: str) -> NodeSelector:
    return NodeSelector(
        node_selector_terms=[
            NodeSelectorTerm(match_expressions=[NodeSelectorRequirement(key=key, operator="In", values=[value])])
        ]
    )


def slice_with_devices(
    name: str,
    node_selection: Any,
    pool: str | tuple[str, int],
    driver: str,
    *devices: Any,
    count: int = 1,
    per_device: bool | None = None,
    shared_counters: list[Any] | None = None,
) -> Any:
    pool_name, generation = (pool, 1) if isinstance(pool, str) else pool
    spec = {
        "driver": driver,
        "pool": NS(name=pool_name, generation=generation, resource_slice_count=count),
        "node_name": None,
        "node_selector": None,
        "all_nodes": None,
        "devices": list(devices),
        "per_device_node_selection": per_device,
        "shared_counters": shared_counters or [],
    }
    if isinstance(node_selection, NodeSelector):
        spec["node_selector"] = node_selection
    elif node_selection == "all":
        spec["all_nodes"] = True
    elif node_selection:
        spec["node_name"] = node_selection
    return NS(metadata=ObjectMeta(name=name), spec=NS(**spec))


def slice_with_one_device(name: str, node_selection: Any, pool: str, driver: str) -> Any:
    return slice_with_devices(name, node_selection, pool, driver, device(DEV1))


# --- a stand-in CEL backend -------------------------------------------------------------


class FakeCel:
    """``compile`` / ``view`` for ``device.driver == "x"``, ``device.attributes["d"].n == v``,
    ``device.capacity["d"].n.compareTo(quantity("q")) >= 0``, ``true``/``false`` and ``&&``."""

    def __init__(self) -> None:
        self.compiled: dict[str, Any] = {}

    def compile(self, expression: str) -> Any:
        got = self.compiled.get(expression)
        if got is None:
            parts = [_part(p.strip()) for p in expression.split("&&")]
            got = self.compiled[expression] = NS(matches=lambda v, ps=parts: all(p(v) for p in ps))
        return got

    def view(self, driver: str, dev: Any) -> Any:
        def qualify(name: str) -> tuple[str, str]:
            domain, sep, ident = name.rpartition("/")
            return (domain, ident) if sep else (driver, name)

        attrs: dict[str, dict[str, Any]] = {}
        for k, a in dev.attributes.items():
            d, n = qualify(k)
            attrs.setdefault(d, {})[n] = next(
                v for v in (a.int_value, a.bool_value, a.string_value, a.version_value) if v is not None
            )
        caps: dict[str, dict[str, Any]] = {}
        for k, c in dev.capacity.items():
            d, n = qualify(k)
            caps.setdefault(d, {})[n] = c.value.milli
        return NS(driver=driver, attributes=attrs, capacity=caps)


def _literal(text: str) -> Any:
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"'):
        return text.strip('"')
    return int(text)


def _part(expr: str) -> Callable[[Any], bool]:
    if expr in ("true", "false"):
        return lambda v: expr == "true"
    if m := re.fullmatch(r'device\.driver == "([^"]+)"', expr):
        return lambda v: v.driver == m[1]
    if m := re.fullmatch(r'device\.attributes\["([^"]+)"\]\.(\w+) == (.+)', expr):
        want = _literal(m[3])
        return lambda v: _raise_missing(v.attributes.get(m[1], {}), m[2]) == want
    if m := re.fullmatch(r'device\.capacity\["([^"]+)"\]\.(\w+)\.compareTo\(quantity\("([^"]+)"\)\) >= 0', expr):
        q = parse_quantity(m[3]).milli
        return lambda v: _raise_missing(v.capacity.get(m[1], {}), m[2]) >= q
    if expr == "error":
        raise ValueError("ERROR: <input>:1:1: undeclared reference to 'error'")
    raise AssertionError(f"FakeCel does not know {expr!r}")


def _raise_missing(d: dict[str, Any], key: str) -> Any:
    if key not in d:
        raise KeyError(f"no such key: {key}")
    return d[key]


def local_selector(node_name: str) -> NodeSelector:
    return NodeSelector(
        node_selector_terms=[
            NodeSelectorTerm(
                match_fields=[NodeSelectorRequirement(key="metadata.name", operator="In", values=[node_name])]
            )
        ]
    )


def consumes(counter_set: str, memory: str) -> Any:
    return NS(counter_set=counter_set, counters={"memory": NS(value=parse_quantity(memory))})


def counter_set(name: str, memory: str) -> Any:
    return NS(name=name, counters={"memory": NS(value=parse_quantity(memory))})


def request_with_capacity(name: str, cls: str, memory: str) -> Any:
    req = request(name, cls, 1)
    req.exactly.capacity = NS(requests={"memory": parse_quantity(memory)})
    return req


def all_sub_request(name: str, cls: str) -> Any:
    sub = sub_request(name, cls, 0)
    sub.allocation_mode = "All"
    return sub


def shared_device(name: str, memory: str, policy: Any = None, attributes: dict[str, Any] | None = None) -> Any:
    """A device with ``allowMultipleAllocations`` and one ``memory`` capacity."""
    d = device(name, None, attributes, allow_multiple_allocations=True)
    d.capacity = {"memory": NS(value=parse_quantity(memory), request_policy=policy)}
    return d


def range_policy(default: str, lo: str, step: str, hi: str) -> Any:
    q = parse_quantity
    return NS(default=q(default), valid_values=[], valid_range=NS(min=q(lo), step=q(step), max=q(hi)))


def distinct_attribute(attr: str, *requests: str) -> Any:
    return NS(requests=list(requests), match_attribute=None, distinct_attribute=attr)


def taint(effect: str, key: str = "example.com/taint", value: str = "x") -> Any:
    return NS(key=key, value=value, effect=effect, time_added=None)


def toleration(operator: str, key: str = "example.com/taint", value: str = "", effect: str = "") -> Any:
    return NS(key=key, operator=operator, value=value, effect=effect, toleration_seconds=None)
