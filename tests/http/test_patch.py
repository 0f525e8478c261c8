"""Strategic merge, JSON merge and JSON patch as upstream's apiserver applies them (no server)."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.api.errors import BadRequest, Invalid, UnsupportedMediaType
from emulator.base.api.mergepatch import merge_patch
from emulator.base.http.jsonpatch import go_repr, json_patch
from emulator.base.http.patch import SCHEMAS, MergeFailed, apply_patch, field_schema, strategic_merge
from emulator.base.http.resources import find

PODS = find("", "v1", "pods")
SMP = "application/strategic-merge-patch+json"


def _pod(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"}, "spec": spec}


C = {"name": "c", "image": "nginx:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]}
D = {"name": "d", "image": "busybox"}
A1, B2, B3 = ({"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "B", "value": "3"})
READY, NOT_READY, SCHEDULED = (
    {"type": "Ready", "status": "True"},
    {"type": "Ready", "status": "False"},
    {"type": "PodScheduled", "status": "True"},
)
IP1, IP2, HOST = (
    {"type": "InternalIP", "address": "10.0.0.1"},
    {"type": "InternalIP", "address": "10.0.0.2"},
    {"type": "Hostname", "address": "n"},
)
JSON_PATCH = "application/json-patch+json"


@pytest.mark.parametrize(
    ("kind", "original", "patch", "expected"),
    [
        pytest.param(
            "Pod",
            {"spec": {"containers": [C, D]}},
            {
                "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
                "spec": {
                    "$setElementOrder/containers": [{"name": "c"}, {"name": "d"}],
                    "containers": [{"image": "nginx:2", "name": "c"}],
                },
            },
            {
                "metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
                "spec": {"containers": [{**C, "image": "nginx:2"}, D]},
            },
            id="kubectl-apply-changes-one-container-keeps-its-other-fields",
        ),
        pytest.param(
            "Pod",
            {"spec": {"containers": [C]}},
            {"spec": {"containers": [D]}},
            {"spec": {"containers": [D, C]}},
            id="new-item-without-order-goes-first",
        ),
        pytest.param(
            "Pod",
            {"spec": {"containers": [C]}},
            {"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "d"}], "containers": [D]}},
            {"spec": {"containers": [C, D]}},
            id="setElementOrder-puts-new-item-last",
        ),
        pytest.param(
            "Pod",
            {"spec": {"containers": [C, D]}},
            {"spec": {"$setElementOrder/containers": [{"name": "d"}, {"name": "c"}]}},
            {"spec": {"containers": [D, C]}},
            id="setElementOrder-alone-reorders",
        ),
        pytest.param(
            "Pod",
            {"spec": {"containers": [C, D]}},
            {"spec": {"containers": [{"name": "c", "$patch": "delete"}]}},
            {"spec": {"containers": [D]}},
            id="patch-delete-removes-the-keyed-item",
        ),
        pytest.param(
            "Pod",
            {"spec": {"containers": [C, D]}},
            {"spec": {"containers": [{"name": "e", "image": "e"}, {"$patch": "replace"}]}},
            {"spec": {"containers": [{"name": "e", "image": "e"}]}},
            id="patch-replace-in-a-list-replaces-it",
        ),
        pytest.param(
            "Pod",
            {"metadata": {"labels": {"a": "1", "b": "2"}}},
            {"metadata": {"labels": {"$patch": "replace", "c": "3"}}},
            {"metadata": {"labels": {"c": "3"}}},
            id="patch-replace-in-a-map-replaces-it",
        ),
        pytest.param(
            "Pod",
            {"metadata": {"labels": {"a": "1"}, "name": "x"}},
            {"metadata": {"labels": {"$patch": "delete"}}},
            {"metadata": {"labels": {}, "name": "x"}},
            id="patch-delete-in-a-map-empties-it",
        ),
        pytest.param(
            "Node",
            {"spec": {"unschedulable": True, "podCIDR": "10.0.0.0/24"}},
            {"spec": {"unschedulable": None}},
            {"spec": {"podCIDR": "10.0.0.0/24"}},
            id="uncordon-null-deletes",
        ),
        pytest.param(
            "Node",
            {"spec": {}},
            {"spec": {"unschedulable": True}},
            {"spec": {"unschedulable": True}},
            id="cordon",
        ),
        pytest.param(
            "Pod",
            {"metadata": {"finalizers": ["a"]}},
            {"metadata": {"finalizers": ["b", "a"]}},
            {"metadata": {"finalizers": ["b", "a"]}},
            id="finalizers-merge-as-a-set",
        ),
        pytest.param(
            "Pod",
            {"metadata": {"finalizers": ["a", "b", "c"]}},
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}},
            {"metadata": {"finalizers": ["a", "c"]}},
            id="deleteFromPrimitiveList",
        ),
        pytest.param(
            "Pod",
            {"metadata": {"finalizers": ["a", "b"]}},
            {
                "metadata": {
                    "$setElementOrder/finalizers": ["b", "c"],
                    "$deleteFromPrimitiveList/finalizers": ["a"],
                    "finalizers": ["c"],
                }
            },
            {"metadata": {"finalizers": ["b", "c"]}},
            id="kubectl-apply-replaces-a-finalizer",
        ),
        pytest.param(
            "Deployment",
            {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
            {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
            {"spec": {"strategy": {"type": "Recreate"}}},
            id="retainKeys-drops-the-others",
        ),
        pytest.param(
            "Pod",
            {"spec": {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {}}]}},
            {"spec": {"volumes": [{"$retainKeys": ["configMap", "name"], "name": "v", "configMap": {"name": "cm"}}]}},
            {"spec": {"volumes": [{"name": "v", "configMap": {"name": "cm"}}, {"name": "w", "emptyDir": {}}]}},
            id="volume-source-swapped-with-retainKeys",
        ),
        pytest.param(
            "Pod",
            {"spec": {"tolerations": [{"key": "a", "operator": "Exists"}]}},
            {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
            {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}},
            id="tolerations-are-atomic",
        ),
        pytest.param(
            "Node",
            {"spec": {"taints": [{"key": "a", "effect": "NoSchedule"}]}},
            {"spec": {"taints": [{"key": "b", "effect": "NoSchedule"}]}},
            {"spec": {"taints": [{"key": "b", "effect": "NoSchedule"}]}},
            id="taints-are-atomic",
        ),
        pytest.param(
            "Pod",
            {"spec": {"containers": [{"name": "c", "env": [A1, B2]}]}},
            {"spec": {"containers": [{"name": "c", "env": [B3]}]}},
            {"spec": {"containers": [{"name": "c", "env": [A1, B3]}]}},
            id="env-by-name",
        ),
        pytest.param(
            "Pod",
            {"spec": {"containers": [{"name": "c", "volumeMounts": [{"name": "v", "mountPath": "/a"}]}]}},
            {"spec": {"containers": [{"name": "c", "volumeMounts": [{"name": "w", "mountPath": "/a"}]}]}},
            {"spec": {"containers": [{"name": "c", "volumeMounts": [{"name": "w", "mountPath": "/a"}]}]}},
            id="volumeMounts-by-mountPath",
        ),
        pytest.param(
            "Pod",
            {"spec": {"containers": [C]}},
            {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "name": "http"}]}]}},
            {"spec": {"containers": [{**C, "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}]}]}},
            id="container-ports-by-containerPort",
        ),
        pytest.param(
            "Service",
            {"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}},
            {"spec": {"ports": [{"port": 80, "targetPort": 9090}]}},
            {"spec": {"ports": [{"port": 80, "targetPort": 9090}, {"port": 443}]}},
            id="service-ports-by-port",
        ),
        pytest.param(
            "Pod",
            {"status": {"conditions": [NOT_READY, SCHEDULED]}},
            {"status": {"conditions": [READY]}},
            {"status": {"conditions": [READY, SCHEDULED]}},
            id="pod-conditions-by-type",
        ),
        pytest.param(
            "Node",
            {"status": {"addresses": [IP1, HOST]}},
            {"status": {"addresses": [IP2]}},
            {"status": {"addresses": [IP2, HOST]}},
            id="node-addresses-by-type",
        ),
        pytest.param(
            "ReplicaSet",
            {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}]}},
            {"metadata": {"ownerReferences": [{"uid": "2", "$patch": "delete"}]}},
            {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}]}},
            id="ownerReferences-by-uid",
        ),
        pytest.param(
            "Deployment",
            {"spec": {"template": {"spec": {"containers": [C]}}}},
            {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}}}},
            {"spec": {"template": {"spec": {"containers": [{**C, "image": "nginx:2"}]}}}},
            id="deployment-template-containers-by-name",
        ),
        pytest.param(
            "CronJob",
            {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [C]}}}}}},
            {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}}},
            {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{**C, "image": "x"}]}}}}}},
            id="cronjob-job-template-containers-by-name",
        ),
        pytest.param(
            "Pod",
            {"spec": {}},
            {"spec": {"$setElementOrder/containers": [{"name": "c"}], "containers": [{"name": "c", "image": "a"}]}},
            {"spec": {"containers": [{"name": "c", "image": "a"}]}},
            id="new-list-carries-no-directives",
        ),
        pytest.param(
            "Pod",
            {"spec": {"containers": [{"name": "c", "args": ["a", "b"]}]}},
            {"spec": {"containers": [{"name": "c", "args": ["c"]}]}},
            {"spec": {"containers": [{"name": "c", "args": ["c"]}]}},
            id="args-are-atomic",
        ),
    ],
)
def test_strategic_merge(kind: str, original: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(original)
    assert strategic_merge(kind, original, patch) == expected
    assert original == before


@pytest.mark.parametrize(
    ("patch", "error", "match"),
    [
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}},
            MergeFailed,
            r"^map: map\[image:x\] does not contain declared merge key: name$",
            id="item-without-merge-key",
        ),
        pytest.param(
            {"metadata": {"labels": {"$patch": "merge"}}},
            MergeFailed,
            r"^unknown patch type: merge in map: map\[\$patch:merge\]$",
            id="merge-directive-in-a-map",
        ),
        pytest.param(
            {"spec": {"template": {"spec": {"containers": [{"$patch": "merge"}]}}}},
            MergeFailed,
            r"^merging lists cannot yet be specified in the patch$",
            id="merge-directive-in-a-list",
        ),
        pytest.param(
            {
                "spec": {
                    "template": {
                        "spec": {"$setElementOrder/containers": [{"name": "c"}], "containers": [{"name": "d"}]}
                    }
                }
            },
            MergeFailed,
            r"doesn't match \$setElementOrder list",
            id="setElementOrder-missing-a-patched-item",
        ),
        pytest.param(
            {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}},
            BadRequest,
            r"^invalid patch format of retainKeys$",
            id="retainKeys-missing-a-patched-key",
        ),
        pytest.param(
            {"metadata": {"$deleteFromPrimitiveList/finalizers": "a"}},
            BadRequest,
            r"^invalid patch format of primitive list$",
            id="deleteFromPrimitiveList-not-a-list",
        ),
        pytest.param(
            {"metadata": {"finalizers": [["a"]]}},
            Invalid,
            r"^lists of lists are not supported$",
            id="list-of-lists",
        ),
    ],
)
def test_strategic_merge_errors(patch: dict[str, Any], error: type[Exception], match: str) -> None:
    assert MergeFailed.code == 500
    assert MergeFailed.reason == ""
    original = {
        "metadata": {"finalizers": ["z"]},
        "spec": {"template": {"spec": {"containers": [C]}}, "strategy": {"type": "Recreate"}},
    }
    with pytest.raises(error, match=match):
        strategic_merge("Deployment", original, patch)


@pytest.mark.parametrize(
    ("body", "content_type", "error", "match"),
    [
        pytest.param(b"[]", SMP, BadRequest, r"cannot unmarshal array into Go value of type map", id="smp-array"),
        pytest.param(b"{", SMP, BadRequest, r"^error decoding patch", id="smp-not-json"),
        pytest.param(b"{", "application/merge-patch+json", BadRequest, r"^Invalid JSON Patch$", id="merge-not-json"),
        pytest.param(b"{}", JSON_PATCH, BadRequest, r"cannot unmarshal object", id="json-patch-object"),
        pytest.param(
            b"{}",
            "application/vnd.kubernetes.protobuf",
            UnsupportedMediaType,
            r"^the body of the request was in an unknown format - accepted media types include: "
            r"application/json-patch\+json, application/merge-patch\+json, "
            r"application/strategic-merge-patch\+json, application/apply-patch\+yaml$",
            id="unknown-type",
        ),
    ],
)
def test_apply_patch_rejects(body: bytes, content_type: str, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        apply_patch(PODS, _pod(), body, content_type)


@pytest.mark.parametrize(
    ("content_type", "body", "expected_labels"),
    [
        pytest.param(SMP, {"metadata": {"labels": {"a": "b"}}}, {"a": "b", "k": "v"}, id="strategic"),
        pytest.param("application/merge-patch+json", {"metadata": {"labels": {"k": None}}}, {}, id="merge"),
        pytest.param(
            "application/json-patch+json",
            [{"op": "add", "path": "/metadata/labels/a~1b", "value": "c"}],
            {"k": "v", "a/b": "c"},
            id="json-patch-escaped-key",
        ),
    ],
)
def test_apply_patch_dispatches(content_type: str, body: Any, expected_labels: dict[str, str]) -> None:
    pod = _pod()
    pod["metadata"]["labels"] = {"k": "v"}
    out = apply_patch(PODS, pod, json.dumps(body).encode(), content_type)
    assert out["metadata"].get("labels", {}) == expected_labels
    assert pod["metadata"]["labels"] == {"k": "v"}


def test_schema_table_covers_the_served_kinds() -> None:
    assert field_schema("Pod", "spec.containers").merge_key == "name"
    assert field_schema("Pod", "spec.containers.*.volumeMounts").merge_key == "mountPath"
    assert field_schema("Pod", "spec.tolerations").strategy == ""
    assert field_schema("StatefulSet", "spec.template.spec.initContainers.*.env").merge_key == "name"
    assert {"Pod", "Node", "Service", "Deployment", "Job", "CronJob", "PodDisruptionBudget", "Lease"} <= SCHEMAS.keys()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"b": 1, "a": "x"}, "map[a:x b:1]", id="map-sorted"),
        pytest.param(["a", None, True], "[a <nil> true]", id="list"),
    ],
)
def test_go_repr(value: Any, expected: str) -> None:
    assert go_repr(value) == expected


# --------------------------------------------------------------------------- JSON patch
# (JSON merge patch, RFC 7386: tests/api/test_mergepatch.py)

_scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=3))
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=12,
)
_objects = st.dictionaries(st.text(max_size=3), _json, max_size=4)

DOC = {"a": {"b": [1, 2, 3], "c~d": "x", "e/f": "y"}, "s": "t"}


@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        pytest.param([{"op": "add", "path": "/n", "value": 1}], {**DOC, "n": 1}, id="add-member"),
        pytest.param(
            [{"op": "add", "path": "/a/b/-", "value": 4}],
            {**DOC, "a": {**DOC["a"], "b": [1, 2, 3, 4]}},
            id="add-append-dash",
        ),
        pytest.param(
            [{"op": "add", "path": "/a/b/0", "value": 0}],
            {**DOC, "a": {**DOC["a"], "b": [0, 1, 2, 3]}},
            id="add-inserts",
        ),
        pytest.param([{"op": "remove", "path": "/s"}], {"a": DOC["a"]}, id="remove"),
        pytest.param(
            [{"op": "replace", "path": "/a/c~0d", "value": "z"}],
            {**DOC, "a": {**DOC["a"], "c~d": "z"}},
            id="replace-tilde-escape",
        ),
        pytest.param(
            [{"op": "move", "from": "/a/e~1f", "path": "/g"}],
            {"a": {"b": [1, 2, 3], "c~d": "x"}, "s": "t", "g": "y"},
            id="move-slash-escape",
        ),
        pytest.param(
            [{"op": "copy", "from": "/a/b/1", "path": "/h"}],
            {**DOC, "h": 2},
            id="copy",
        ),
        pytest.param(
            [{"op": "test", "path": "/s", "value": "t"}, {"op": "remove", "path": "/a"}],
            {"s": "t"},
            id="test-passes",
        ),
    ],
)
def test_json_patch(ops: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    before = copy.deepcopy(DOC)
    assert json_patch(DOC, ops) == expected
    assert before == DOC


@pytest.mark.parametrize(
    ("ops", "detail"),
    [
        pytest.param([{"op": "test", "path": "/s", "value": "u"}], r"^testing value /s failed: test failed$", id="t"),
        pytest.param(
            [{"op": "test", "path": "/a/b/0", "value": True}],
            r"^testing value /a/b/0 failed: test failed$",
            id="test-true-is-not-1",
        ),
        pytest.param(
            [{"op": "remove", "path": "/nope"}], r"^Unable to remove nonexistent key: nope: missing value$", id="remove"
        ),
        pytest.param(
            [{"op": "replace", "path": "/nope", "value": 1}],
            r"^replace operation does not apply: doc is missing key: /nope: missing value$",
            id="replace",
        ),
        pytest.param(
            [{"op": "add", "path": "/x/y", "value": 1}],
            r'^add operation does not apply: doc is missing path: "/x/y": missing value$',
            id="add-missing-parent",
        ),
        pytest.param(
            [{"op": "add", "path": "/a/b/9", "value": 1}],
            r"^Unable to access invalid index: 9: invalid index referenced$",
            id="bad-index",
        ),
        pytest.param([{"op": "frob", "path": "/s"}], r"^Unexpected kind: frob$", id="unknown-op"),
    ],
)
def test_json_patch_failures_are_422(ops: list[dict[str, Any]], detail: str) -> None:
    with pytest.raises(Invalid, match=r"^the server rejected our request due to an error in our request$") as info:
        json_patch(DOC, ops)
    assert info.value.code == 422
    assert re.match(detail, info.value.detail), info.value.detail


@given(_objects, st.text(max_size=3), _json)
def test_a_failed_test_leaves_the_input_unchanged(doc: dict[str, Any], key: str, value: Any) -> None:
    doc = {**doc, key: "present"}
    before = copy.deepcopy(doc)
    ops = [
        {"op": "remove", "path": "/" + key.replace("~", "~0").replace("/", "~1")},
        {"op": "add", "path": "/added", "value": value},
        {"op": "test", "path": "/added", "value": [value]},
    ]
    with pytest.raises(Invalid, match="rejected"):
        json_patch(doc, ops)
    assert doc == before


_maps_only = st.recursive(
    _scalars,
    lambda inner: st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=3),
    max_leaves=10,
)
_map_docs = st.dictionaries(st.sampled_from(["x", "y", "z"]), _maps_only, max_size=3)
_map_patches = st.recursive(
    st.none() | _scalars,
    lambda inner: st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=3),
    max_leaves=10,
)


@given(_map_docs, st.dictionaries(st.sampled_from(["x", "y", "z"]), _map_patches, max_size=3))
def test_strategic_merge_without_lists_or_directives_is_a_merge_patch(
    doc: dict[str, Any], patch: dict[str, Any]
) -> None:
    assert strategic_merge("Lease", doc, patch) == merge_patch(doc, patch)


_containers = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(["a", "b", "c", "d"]), "image": st.sampled_from(["1", "2"])}),
    unique_by=lambda c: c["name"],
    max_size=4,
)


@given(_containers, _containers)
def test_merging_containers_keeps_every_name_once_with_the_patch_value(
    live: list[dict[str, Any]], patch: list[dict[str, Any]]
) -> None:
    out = strategic_merge("Pod", {"spec": {"containers": live}}, {"spec": {"containers": patch}})
    merged = out["spec"]["containers"]
    assert sorted(c["name"] for c in merged) == sorted({c["name"] for c in live + patch})
    by_name = {c["name"]: c for c in merged}
    assert all(by_name[c["name"]] == c for c in patch)
    order = [c["name"] for c in merged if c["name"] in {p["name"] for p in patch}]
    assert order == [c["name"] for c in patch]
