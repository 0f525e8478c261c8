"""The protobuf tables, reader and writer without a server: the generator's parsing on small
upstream-shaped sources, every served kind having a message, and JSON → protobuf → JSON round
trips (hand-written objects with every special message, and hypothesis-made ones)."""

from __future__ import annotations

import base64
import struct
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.base.http import protobuf_schema as ps
from emulator.base.http.protobuf import MAGIC, decode, envelope_parts, fields, go_duration
from emulator.base.http.protobuf_encode import encode_envelope, parse_duration, watch_frame
from emulator.base.http.protobuf_gen import _go_fields, _proto
from emulator.base.http.resources import RESOURCES

PROTO = """
package k8s.io.api.demo.v1;

message Widget {
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;

  optional WidgetSource widgetSource = 2;

  map<string, string> labels = 3;

  repeated string names = 4;

  optional int32 replicas = 5;
}

// +protobuf.nullable=true
message Extra {
  repeated string items = 1;
}
"""
GO = """
type Widget struct {
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	WidgetSource `json:",inline" protobuf:"bytes,2,opt,name=widgetSource"`
	Labels map[string]string `json:"labels,omitempty" protobuf:"bytes,3,rep,name=labels"`
	// Names names. protobuf:"bytes,9,rep,name=ignored"
	Names []string `json:"names" protobuf:"bytes,4,rep,name=names"`
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,5,opt,name=replicas"`
}
"""


def test_generator_reads_proto_and_go_tags() -> None:
    messages: dict[str, Any] = {}
    lists: list[str] = []
    pkg = _proto(PROTO, _go_fields(GO), messages, lists)
    assert pkg == "k8s.io.api.demo.v1"
    assert messages["k8s.io.api.demo.v1.Widget"] == [
        [1, "metadata", "m", "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta", 0],
        [2, "widgetSource", "m", "k8s.io.api.demo.v1.WidgetSource", 4],  # inline
        [3, "labels", "M", ["s", "s", ""], 0],
        [4, "names", "s", "", 1],  # repeated
        [5, "replicas", "i", "", 2],  # pointer
    ]
    assert lists == ["k8s.io.api.demo.v1.Extra"]


@pytest.mark.parametrize("resource", [r for r in RESOURCES if r.group != "karpenter.sh"], ids=lambda r: r.name)
def test_every_served_kind_and_its_list_has_a_message(resource: Any) -> None:
    """Built-in kinds only: custom resources (karpenter.sh) have no protobuf, JSON is served."""
    gv = f"{resource.group}/{resource.version}" if resource.group else resource.version
    assert ps.message_of(gv, resource.kind) is not None
    if "list" in resource.verbs:
        assert ps.message_of(gv, f"{resource.kind}List") is not None


def test_every_referenced_message_is_in_the_tables() -> None:
    for name in ps._tables()["messages"]:
        schema = ps.schema(name)
        assert schema is not None
        for f in schema.values():
            assert not f.ref or ps.schema(f.ref) is not None, (name, f.name, f.ref)


def test_meta_kinds_from_any_group() -> None:
    assert ps.message_of("v1", "Status") == "k8s.io.apimachinery.pkg.apis.meta.v1.Status"
    assert ps.message_of("apps/v1", "DeleteOptions") == "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions"
    assert ps.message_of("example.com/v1", "Widget") is None


POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "namespace": "default",
        "uid": "u",
        "resourceVersion": "7",
        "generation": 2,
        "creationTimestamp": "2024-05-06T07:08:09Z",
        "deletionTimestamp": "2024-05-06T07:08:10Z",
        "deletionGracePeriodSeconds": 0,
        "labels": {"z": "1", "a": "2"},
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "x", "controller": True}
        ],
        "managedFields": [
            {
                "manager": "m",
                "operation": "Apply",
                "apiVersion": "v1",
                "time": "2024-05-06T07:08:09Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}},
            }
        ],
    },
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "i",
                "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 3},
                "readinessProbe": {"tcpSocket": {"port": 8080}},
            }
        ],
        "volumes": [{"name": "v", "configMap": {"name": "cm", "defaultMode": 420}}],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": -5}],
        "nodeName": "n1",
        "priority": 0,
    },
    "status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-06T07:08:09Z"}],
        "startTime": "2024-05-06T07:08:09Z",
    },
}
LEASE: dict[str, Any] = {
    "apiVersion": "coordination.k8s.io/v1",
    "kind": "Lease",
    "metadata": {"name": "l", "namespace": "kube-node-lease"},
    "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40, "renewTime": "2024-05-06T07:08:09.123456Z"},
}
REVIEW: dict[str, Any] = {
    "apiVersion": "authentication.k8s.io/v1",
    "kind": "SelfSubjectReview",
    "metadata": {"creationTimestamp": "2024-05-06T07:08:09Z"},
    "status": {"userInfo": {"username": "admin", "groups": ["system:masters"], "extra": {"k": ["a", "b"]}}},
}
REVISION: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "ControllerRevision",
    "metadata": {"name": "r"},
    "data": {"spec": {"template": {"x": [1, "two", None]}}},
    "revision": 3,
}
STATUS: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Status",
    "metadata": {},
    "status": "Failure",
    "message": 'pods "x" not found',
    "reason": "NotFound",
    "details": {"name": "x", "kind": "pods"},
    "code": 404,
}


def _no_empty(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if v != {}}


@pytest.mark.parametrize("obj", [POD, LEASE, REVIEW, REVISION, STATUS], ids=lambda o: o["kind"])
def test_round_trip(obj: dict[str, Any]) -> None:
    body = encode_envelope(obj)
    assert body is not None
    assert body.startswith(MAGIC)
    assert envelope_parts(body)[:2] == (obj["apiVersion"], obj["kind"])
    assert decode(body) == _no_empty(obj)


def test_pod_list_round_trip_and_ordering() -> None:
    other = {**POD, "metadata": {**POD["metadata"], "name": "q"}}
    pods = {"apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "9"}, "items": [POD, other]}
    body = encode_envelope(pods)
    assert body is not None
    back = decode(body)
    assert back is not None
    assert [p["metadata"]["name"] for p in back["items"]] == ["p", "q"]
    assert back["items"][0] == {k: v for k, v in POD.items() if k not in ("apiVersion", "kind")}
    raw = envelope_parts(body)[2]
    numbers = [n for n, _ in fields(raw)]
    assert numbers == sorted(numbers)
    # labels as Go writes a map: entries sorted by key
    first_pod = dict(fields(raw))[2]
    assert isinstance(first_pod, bytes)
    meta = dict(fields(first_pod))[1]
    assert isinstance(meta, bytes)
    assert [v for n, v in fields(meta) if n == 11] == [b"\n\x01a\x12\x012", b"\n\x01z\x12\x011"]


def test_encoding_details() -> None:
    assert encode_envelope({"apiVersion": "example.com/v1", "kind": "Widget"}) is None
    # a negative int32 is a 10-byte varint, as Go writes it
    body = encode_envelope({"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": -1})
    assert body is not None
    assert envelope_parts(body)[2] == b"\x08" + b"\xff" * 9 + b"\x01"
    frame = watch_frame("ADDED", b"k8s\x00xy")
    (size,) = struct.unpack(">I", frame[:4])
    assert size == len(frame) - 4
    event = dict(fields(frame[4:]))
    assert event[1] == b"ADDED"
    assert isinstance(event[2], bytes)
    assert dict(fields(event[2]))[1] == b"k8s\x00xy"


def test_a_value_of_the_wrong_type_is_left_out() -> None:
    obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": "not-a-map", "generation": "x"},
        "spec": {"containers": "nope", "nodeName": "n1", "priority": {"a": 1}},
        "status": [],
    }
    body = encode_envelope(obj)
    assert body is not None
    assert decode(body) == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "n1"}}


@pytest.mark.parametrize(
    ("text", "nanos"),
    [("0s", 0), ("1h2m3.5s", 3723_500_000_000), ("1.5ms", 1_500_000), ("-2m0s", -120_000_000_000), ("300ns", 300)],
)
def test_go_durations(text: str, nanos: int) -> None:
    assert parse_duration(text) == nanos
    assert go_duration(nanos) == text


_names = st.text(alphabet="abcxyz-./", min_size=1, max_size=8)
_labels = st.dictionaries(_names, st.text(max_size=5), max_size=3)
_int32 = st.integers(-(2**31), 2**31 - 1).filter(bool)


@settings(max_examples=60, deadline=None)
@given(
    name=_names,
    labels=_labels,
    replicas=st.integers(0, 2**31 - 1),
    surge=st.one_of(_int32, st.just("25%")),
    ports=st.lists(st.integers(1, 65535), max_size=3),
    finalizers=st.lists(_names, max_size=2),
    paused=st.booleans(),
)
def test_deployment_round_trip(
    name: str,
    labels: dict[str, str],
    replicas: int,
    surge: int | str,
    ports: list[int],
    finalizers: list[str],
    paused: bool,
) -> None:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    if finalizers:
        meta["finalizers"] = finalizers
    container: dict[str, Any] = {"name": "c", "image": "nginx"}
    if ports:
        container["ports"] = [{"containerPort": p} for p in ports]
    spec: dict[str, Any] = {
        "replicas": replicas,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge}},
        "template": {"spec": {"containers": [container]}},
    }
    if paused:
        spec["paused"] = True
    obj = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}
    body = encode_envelope(obj)
    assert body is not None
    assert decode(body) == obj


_TIMES = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1))


_SPECIALS = (ps.TIME, ps.MICRO_TIME, ps.QUANTITY, ps.INT_OR_STRING, ps.DURATION, ps.RAW_EXTENSION, ps.FIELDS_V1)


def _special(ref: str) -> st.SearchStrategy[Any]:
    if ref == ps.TIME:
        return _TIMES.map(lambda t: t.strftime("%Y-%m-%dT%H:%M:%SZ"))
    if ref == ps.MICRO_TIME:
        return _TIMES.map(lambda t: t.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))
    if ref == ps.QUANTITY:
        return st.sampled_from(["1", "250m", "64Mi", "1Gi", "0"])
    if ref == ps.INT_OR_STRING:
        return st.one_of(_int32, st.sampled_from(["25%", "http"]))
    if ref == ps.DURATION:
        return st.sampled_from(["1s", "1h2m3s", "1.5ms"])
    return st.dictionaries(_names, st.one_of(st.integers(-5, 5), _names), min_size=1, max_size=2)


def _scalar_strategy(kind: str, *, zero: bool) -> st.SearchStrategy[Any]:
    """A JSON value of a scalar type; a zero one only when it survives (a pointer, an item)."""
    values: dict[str, st.SearchStrategy[Any]] = {
        "s": st.text(max_size=6),
        "i": st.integers(-(2**63), 2**63 - 1),
        "u": st.integers(0, 2**64 - 1),
        "?": st.booleans(),
        "y": st.binary(max_size=4).map(lambda b: base64.b64encode(b).decode()),
        "d": st.floats(allow_nan=False, allow_infinity=False),
        "f": st.sampled_from([0.5, -2.0, 1024.0]),
    }
    strategy = values[kind]
    return strategy if zero else strategy.filter(lambda v: v not in ("", 0, False))


def _field_strategy(f: ps.Field, depth: int) -> st.SearchStrategy[Any]:
    if f.type == "M":
        entry = ps.Field(0, "", f.value, f.ref, ptr=True)
        return st.dictionaries(_names, _field_strategy(entry, depth), min_size=1, max_size=2)
    if f.type == "m":
        if f.ref in _SPECIALS:
            one = _special(f.ref)
        elif ps.is_list(f.ref):
            one = st.lists(_names, max_size=2)
        else:
            one = _message_strategy(f.ref, depth + 1)
            if not f.ptr and not f.repeated:
                one = one.filter(bool)  # an empty non-pointer message is left out
    else:
        one = _scalar_strategy(f.type, zero=f.ptr or f.repeated)
    return st.lists(one, min_size=1, max_size=2) if f.repeated else one


_CACHE: dict[tuple[str, int], st.SearchStrategy[dict[str, Any]]] = {}


def _message_strategy(name: str, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object of a message that decodes back to itself (depth-limited)."""
    if (name, depth) in _CACHE:
        return _CACHE[(name, depth)]
    schema = ps.schema(name)
    assert schema is not None
    if depth > 3:
        strategy: st.SearchStrategy[dict[str, Any]] = st.just({})
    else:
        plain = {f.name: _field_strategy(f, depth) for f in schema.values() if not f.inline}
        inline = [_message_strategy(f.ref, depth + 1) for f in schema.values() if f.inline]
        strategy = st.fixed_dictionaries({}, optional=plain)
        for part in inline:
            strategy = st.tuples(strategy, part).map(lambda pair: {**pair[1], **pair[0]})
    _CACHE[(name, depth)] = strategy
    return strategy


@pytest.mark.parametrize(
    "resource", [r for r in RESOURCES if r.stored and r.group != "karpenter.sh"], ids=lambda r: r.name
)  # custom resources (karpenter.sh) have no protobuf message
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_kind_round_trips(resource: Any, data: st.DataObject) -> None:
    gv = f"{resource.group}/{resource.version}" if resource.group else resource.version
    name = ps.message_of(gv, resource.kind)
    assert name is not None
    obj = {"apiVersion": gv, "kind": resource.kind, **data.draw(_message_strategy(name))}
    body = encode_envelope(obj)
    assert body is not None
    assert decode(body) == obj
