"""Manifests in, builtins out: multi-document YAML, ``kind: List``, unknown fields ignored,
types checked, and every error names the source, the path and what was expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.base.api.codec import (
    KINDS,
    ManifestError,
    convert,
    load_manifest_file,
    load_manifests,
    object_from_dict,
    to_builtins,
)
from emulator.base.api.core import Binding, Event, Namespace, Node, Pod
from emulator.base.api.quantity import EXPECTED
from emulator.base.api.scheduling import Lease, PriorityClass

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: web}}
spec:
  containers:
  - name: c
    image: nginx
    resources:
      requests: {{cpu: {cpu}, memory: 1Gi}}
"""
NODE = """\
apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
"""


def names(objs: list[object]) -> list[tuple[str, str]]:
    return [(type(o).__name__, o.metadata.name) for o in objs]  # type: ignore[attr-defined]


# --- what is accepted -------------------------------------------------------------------------


def test_single_document() -> None:
    (pod,) = load_manifests(POD.format(name="a", cpu="100m"), source="t")
    assert isinstance(pod, Pod)
    assert pod.metadata.labels == {"app": "web"}
    assert pod.spec.containers[0].resources.requests["cpu"].milli == 100
    assert pod.spec.containers[0].resources.requests["memory"].value == 1 << 30


def test_multi_document_yaml_keeps_order_and_skips_empty_documents() -> None:
    text = "---\n" + POD.format(name="a", cpu="1") + "---\n---\n" + NODE + "---\n" + POD.format(name="b", cpu="2")
    assert names(load_manifests(text, source="t")) == [("Pod", "a"), ("Node", "node-1"), ("Pod", "b")]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("---\n---\n", id="only-separators"),
        pytest.param("# just a comment\n", id="comment"),
    ],
)
def test_no_objects(text: str) -> None:
    assert load_manifests(text, source="t") == []


def test_kind_list_is_flattened() -> None:
    text = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
- apiVersion: v1
  kind: Pod
  metadata: {name: p, namespace: team-a}
  spec: {containers: [{name: c, image: i}]}
"""
    objs = load_manifests(text, source="t")
    assert names(objs) == [("Namespace", "team-a"), ("Pod", "p")]


def test_typed_list_kind_is_flattened() -> None:
    text = "apiVersion: v1\nkind: PodList\nitems:\n" + "".join(
        f"- {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}}}, spec: {{containers: [{{name: c, image: i}}]}}}}\n"
        for i in range(3)
    )
    assert names(load_manifests(text, source="t")) == [("Pod", "p0"), ("Pod", "p1"), ("Pod", "p2")]


def test_json_is_accepted() -> None:
    text = '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "j"}}'
    (ns,) = load_manifests(text, source="t")
    assert isinstance(ns, Namespace)
    assert ns.metadata.name == "j"


def test_unknown_fields_are_ignored() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: a, managedFields: [{x: 1}], futureField: 7}
someTopLevelThing: {a: b}
spec:
  dnsPolicy: ClusterFirst
  containers:
  - name: c
    image: i
    livenessProbe: {httpGet: {path: /, port: 80}}
    env: [{name: A, value: b}]
status: {podIPs: [{ip: 10.0.0.1}]}
"""
    (pod,) = load_manifests(text, source="t")
    assert isinstance(pod, Pod)
    assert pod.spec.containers[0].name == "c"


@pytest.mark.parametrize(
    ("text", "tp"),
    [
        pytest.param(POD.format(name="a", cpu="1"), Pod, id="pod"),
        pytest.param(NODE, Node, id="node"),
        pytest.param("apiVersion: v1\nkind: Namespace\nmetadata: {name: ns}\n", Namespace, id="namespace"),
        pytest.param(
            "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 1000\n",
            PriorityClass,
            id="priorityclass",
        ),
        pytest.param(
            "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: l, namespace: kube-node-lease}\n",
            Lease,
            id="lease",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Binding\nmetadata: {name: p}\ntarget: {kind: Node, name: node-1}\n",
            Binding,
            id="binding",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Event\nmetadata: {name: e}\ninvolvedObject: {kind: Pod, name: p}\n",
            Event,
            id="event",
        ),
    ],
)
def test_every_kind_decodes(text: str, tp: type) -> None:
    (obj,) = load_manifests(text, source="t")
    assert type(obj) is tp


def test_kinds_table() -> None:
    assert sorted(KINDS) == [
        ("apps/v1", "ControllerRevision"),
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
        ("batch/v1", "CronJob"),
        ("batch/v1", "Job"),
        ("coordination.k8s.io/v1", "Lease"),
        ("karpenter.sh/v1", "NodeClaim"),
        ("karpenter.sh/v1", "NodePool"),
        ("policy/v1", "PodDisruptionBudget"),
        ("resource.k8s.io/v1", "DeviceClass"),
        ("resource.k8s.io/v1", "ResourceClaim"),
        ("resource.k8s.io/v1", "ResourceClaimTemplate"),
        ("resource.k8s.io/v1", "ResourceSlice"),
        ("scheduling.k8s.io/v1", "PriorityClass"),
        ("storage.k8s.io/v1", "CSIDriver"),
        ("storage.k8s.io/v1", "CSINode"),
        ("storage.k8s.io/v1", "CSIStorageCapacity"),
        ("storage.k8s.io/v1", "StorageClass"),
        ("storage.k8s.io/v1", "VolumeAttachment"),
        ("v1", "Binding"),
        ("v1", "ConfigMap"),
        ("v1", "Event"),
        ("v1", "Namespace"),
        ("v1", "Node"),
        ("v1", "PersistentVolume"),
        ("v1", "PersistentVolumeClaim"),
        ("v1", "Pod"),
        ("v1", "Secret"),
        ("v1", "Service"),
    ]


def test_builtins_round_trip_uses_wire_names() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  priorityClassName: high
  nodeSelector: {disk: ssd}
  containers:
  - name: c
    image: i
    ports: [{containerPort: 80, hostPort: 8080, hostIP: 1.2.3.4}]
    resources: {limits: {cpu: 0.5}}
"""
    (pod,) = load_manifests(text, source="t")
    wire = to_builtins(pod)
    assert wire["spec"]["priorityClassName"] == "high"
    assert wire["spec"]["containers"][0]["ports"][0] == {"containerPort": 80, "hostPort": 8080, "hostIP": "1.2.3.4"}
    assert wire["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "0.5"}}
    assert "status" not in wire["spec"]  # defaults omitted
    assert convert(wire, Pod) == pod


def test_load_manifest_file(tmp_path: Path) -> None:
    f = tmp_path / "pods.yaml"
    f.write_text(POD.format(name="a", cpu="1") + "---\n" + NODE, encoding="utf-8")
    assert names(load_manifest_file(f)) == [("Pod", "a"), ("Node", "node-1")]


def test_load_manifest_file_missing(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ManifestError, match=r"nope\.yaml: cannot read file: No such file or directory$") as err:
        load_manifest_file(missing)
    assert err.value.source == str(missing)
    assert err.value.path == ""


# --- what is rejected, and how it is reported -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "detail"),
    [
        pytest.param(
            POD.format(name="a", cpu="abc"),
            "spec.containers[0].resources.requests.cpu",
            f'Invalid value: "abc": {EXPECTED}',
            id="malformed-quantity",
        ),
        pytest.param(
            POD.format(name="a", cpu="1") + "---\n" + POD.format(name="b", cpu="1.2.3"),
            "documents[1].spec.containers[0].resources.requests.cpu",
            f'Invalid value: "1.2.3": {EXPECTED}',
            id="malformed-quantity-second-document",
        ),
        pytest.param(
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Namespace, metadata: {name: x}}\n"
            "- {apiVersion: v1, kind: Node, metadata: {name: n}, status: {capacity: {memory: 1Q}}}\n",
            "items[1].status.capacity.memory",
            f'Invalid value: "1Q": {EXPECTED}',
            id="list-item-path",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\n"
            "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {}}\n",
            "documents[1].items[0].spec.containers",
            "Required value",
            id="list-in-second-document",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n"
            "spec: {containers: [{name: c, image: i, ports: [{containerPort: http}]}]}\n",
            "spec.containers[0].ports[0].containerPort",
            "Expected `int`, got `str`",
            id="wrong-type-int",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Node\nmetadata: {name: a}\nspec: {unschedulable: 3}\n",
            "spec.unschedulable",
            "Expected `bool`, got `int`",
            id="wrong-type-bool",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: web}\n",
            "spec.containers",
            "Expected `array`, got `str`",
            id="wrong-type-array",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: 5}\nspec: {containers: [{name: c, image: i}]}\n",
            "metadata.name",
            "Expected `str`, got `int`",
            id="wrong-type-name",
        ),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{image: i}]}\n",
            "spec.containers[0]",
            "Object missing required field `name`",
            id="missing-required-field",
        ),
        pytest.param(
            "kind: Pod\nmetadata: {name: a}\n",
            "apiVersion",
            "required field missing (e.g. apiVersion: v1)",
            id="missing-apiVersion",
        ),
        pytest.param(
            "apiVersion: v1\nmetadata: {name: a}\n",
            "kind",
            "required field missing (e.g. kind: Pod)",
            id="missing-kind",
        ),
        pytest.param(
            NODE + "---\nkind: Pod\n",
            "documents[1].apiVersion",
            "required field missing (e.g. apiVersion: v1)",
            id="missing-apiVersion-second-document",
        ),
        pytest.param(
            "apiVersion: v1\nkind: List\nitems: 3\n",
            "items",
            "expected a list of objects",
            id="list-items-not-a-list",
        ),
        pytest.param(
            "apiVersion: v1\nkind: List\nitems: [hello]\n",
            "items[0]",
            "expected a Kubernetes object (a mapping), got str",
            id="list-item-not-a-mapping",
        ),
        pytest.param("hello\n", "", "expected a Kubernetes object (a mapping), got str", id="scalar-document"),
        pytest.param("- a\n- b\n", "", "expected a Kubernetes object (a mapping), got list", id="list-document"),
        pytest.param(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: c, image: i}]}\n",
            "metadata.name",
            'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
            "characters, '-' or '.', and must start and end with an alphanumeric character",
            id="validation-error-after-decode",
        ),
    ],
)
def test_errors_name_source_path_and_detail(text: str, path: str, detail: str) -> None:
    with pytest.raises(ManifestError) as err:
        load_manifests(text, source="m.yaml")
    assert (err.value.source, err.value.path, err.value.detail) == ("m.yaml", path, detail)
    where = f"m.yaml: {path}" if path else "m.yaml"
    assert str(err.value) == f"{where}: {detail}"


_NEW_KINDS = (
    ", ReplicaSet (apps/v1), StatefulSet (apps/v1), DaemonSet (apps/v1), Job (batch/v1), CronJob (batch/v1),"
    " Service (v1), PodDisruptionBudget (policy/v1), ControllerRevision (apps/v1), ConfigMap (v1), Secret (v1),"
    " PersistentVolume (v1), PersistentVolumeClaim (v1), StorageClass (storage.k8s.io/v1),"
    " CSIDriver (storage.k8s.io/v1), CSINode (storage.k8s.io/v1), CSIStorageCapacity (storage.k8s.io/v1),"
    " VolumeAttachment (storage.k8s.io/v1), DeviceClass (resource.k8s.io/v1), ResourceClaim (resource.k8s.io/v1),"
    " ResourceClaimTemplate (resource.k8s.io/v1), ResourceSlice (resource.k8s.io/v1),"
    " HorizontalPodAutoscaler (autoscaling/v2), NodePool (karpenter.sh/v1), NodeClaim (karpenter.sh/v1)"
)


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        pytest.param("v1", "ReplicationController", id="unknown-kind"),
        pytest.param("v2", "Pod", id="unknown-version"),
        pytest.param("scheduling.k8s.io/v1", "Pod", id="wrong-group"),
        pytest.param("v1", "PriorityClass", id="kind-in-wrong-group"),
    ],
)
def test_unsupported_api_version_kind(api_version: str, kind: str) -> None:
    text = f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: a}}\n"
    with pytest.raises(
        ManifestError,
        match=rf'^m\.yaml: unsupported apiVersion/kind "{api_version}/{kind}"; expected one of: Pod \(v1\), ',
    ) as err:
        load_manifests(text, source="m.yaml")
    assert err.value.path == ""
    assert err.value.detail.endswith("Lease (coordination.k8s.io/v1), Deployment (apps/v1)" + _NEW_KINDS)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("apiVersion: v1\nkind: Pod\nmetadata: {name: a\nspec: [\n", id="unclosed-flow-mapping"),
        pytest.param("a: b\n c: d\n  - e\n", id="bad-indentation"),
        pytest.param("a: [1, 2\n", id="unclosed-sequence"),
        pytest.param('a: "unterminated\n', id="unterminated-string"),
    ],
)
def test_yaml_syntax_error_is_one_clear_line(text: str) -> None:
    with pytest.raises(ManifestError, match=r"^m\.yaml: not valid YAML: .*line \d+, column \d+") as err:
        load_manifests(text, source="m.yaml")
    assert "\n" not in str(err.value)
    assert "  " not in err.value.detail
    assert err.value.path == ""


def test_object_from_dict_with_prefix() -> None:
    with pytest.raises(ManifestError) as err:
        object_from_dict({"apiVersion": "v1", "kind": "Pod", "spec": {}}, source="s", path="steps[3].object")
    # The pod has no name: validation reports metadata.name under the given prefix.
    assert err.value.path == "steps[3].object.metadata.name"
    assert err.value.detail == "Required value: name or generateName is required"


def test_object_from_dict_rejects_non_mapping() -> None:
    with pytest.raises(ManifestError, match=r"^s: x: expected a Kubernetes object \(a mapping\), got int$"):
        object_from_dict(3, source="s", path="x")


# Regression (fixed bug): check_meta required metadata.name even with generateName, so kubectl-valid
# manifests with only generateName were rejected.
def test_generate_name_manifest_is_accepted() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\nspec: {containers: [{name: c, image: i}]}\n"
    (pod,) = load_manifests(text, source="t")
    assert isinstance(pod, Pod)
    assert (pod.metadata.name, pod.metadata.generate_name) == ("", "web-")


# Regression (fixed bug): codec.object_from_dict rebuilds the detail with err.message.split(': ', 2), which
# breaks when the object name contains ': ' (the path is then printed twice)
def test_detail_is_not_confused_by_colons_in_the_name() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: 'a: b'}\nspec: {containers: [{name: c, image: i}]}\n"
    with pytest.raises(ManifestError) as err:
        load_manifests(text, source="t")
    assert err.value.path == "metadata.name"
    assert err.value.detail.startswith('Invalid value: "a: b": a lowercase RFC 1123 subdomain')
