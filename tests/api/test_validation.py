"""Validation as the apiserver does it: the first bad field, its exact path, upstream wording."""

from __future__ import annotations

from typing import Any

import pytest

from emulator.base.api.codec import convert
from emulator.base.api.core import Event, Namespace, Node, Pod
from emulator.base.api.errors import ApiError, Invalid
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.quantity import EXPECTED
from emulator.base.api.scheduling import PriorityClass
from emulator.base.api.validation import quantity_errors, validate, validate_event

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)


# Hand-built from documents on purpose: the tables set any field, invalid ones included, for validation.
def container(name: str = "c", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "nginx", **extra}


def pod(spec: dict[str, Any] | None = None, *, name: str = "p", **meta: Any) -> Pod:
    body: dict[str, Any] = {"containers": [container()]}
    body.update(spec or {})
    return convert({"metadata": {"name": name, **meta}, "spec": body}, Pod)


def node(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None, *, name: str = "n") -> Node:
    return convert({"metadata": {"name": name}, "spec": spec or {}, "status": status or {}}, Node)


def invalid(obj: object) -> Invalid:
    with pytest.raises(Invalid) as err:
        validate(obj)
    return err.value


# --- valid objects -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(pod(), id="minimal-pod"),
        pytest.param(pod(name="a.b-c.d"), id="dotted-name"),
        pytest.param(pod(name="a" * 253), id="253-char-name"),
        pytest.param(pod(name="0abc"), id="leading-digit"),
        pytest.param(
            pod(
                {
                    "initContainers": [container("init", resources={"requests": {"cpu": "1"}})],
                    "containers": [
                        container("a", resources={"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}),
                        container("b", ports=[{"containerPort": 80, "hostPort": 8080, "protocol": "UDP"}]),
                    ],
                    "tolerations": [
                        {"operator": "Exists"},
                        {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
                        {"key": "k", "value": "v", "effect": "NoExecute", "tolerationSeconds": 5},
                    ],
                    "preemptionPolicy": "Never",
                    "topologySpreadConstraints": [
                        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}
                    ],
                    "terminationGracePeriodSeconds": 0,
                    "overhead": {"cpu": "10m"},
                }
            ),
            id="full-pod",
        ),
        pytest.param(node({"taints": [{"key": "k", "effect": "NoSchedule"}]}, {"capacity": {"cpu": "4"}}), id="node"),
        pytest.param(convert({"metadata": {"name": "team-a"}}, Namespace), id="namespace"),
        pytest.param(convert({"metadata": {"name": "p"}, "value": 1_000_000_000}, PriorityClass), id="pc-max-user"),
        pytest.param(
            convert({"metadata": {"name": "system-x"}, "value": 2_000_000_000}, PriorityClass), id="pc-system"
        ),
    ],
)
def test_valid(obj: object) -> None:
    assert validate(obj) is None


# --- names --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Bad_Name", id="underscore-upper"),
        pytest.param("UPPER", id="upper"),
        pytest.param("-a", id="leading-dash"),
        pytest.param("a-", id="trailing-dash"),
        pytest.param("a..b", id="empty-label"),
        pytest.param("a b", id="space"),
        pytest.param("a" * 254, id="254-chars"),
    ],
)
def test_bad_pod_names(name: str) -> None:
    err = invalid(pod(name=name))
    assert err.field == "metadata.name"
    assert err.message == f'Pod "{name}" is invalid: metadata.name: Invalid value: "{name}": {SUBDOMAIN_MSG}'


def test_missing_name() -> None:
    err = invalid(pod(name=""))
    assert err.message == "Pod is invalid: metadata.name: Required value: name or generateName is required"
    assert (err.field, err.kind, err.name) == ("metadata.name", "Pod", "")


def test_bad_node_name() -> None:
    with pytest.raises(Invalid, match=r'^Node "N_1" is invalid: metadata\.name: Invalid value: "N_1": a lowercase'):
        validate(node(name="N_1"))


def test_bad_namespace_of_a_pod() -> None:
    err = invalid(pod(namespace="a.b"))
    assert err.field == "metadata.namespace"
    assert err.message == 'Pod "p" is invalid: metadata.namespace: Invalid value: "a.b"'


def test_namespace_name_is_a_label() -> None:
    err = invalid(convert({"metadata": {"name": "a.b"}}, Namespace))
    assert err.field == "metadata.name"


# Regression (fixed bug): check_meta checks Namespace names (DNS-1123 labels) against len > 253, so a
# 64..253-character namespace is accepted; upstream IsDNS1123Label caps labels at 63
def test_namespace_name_longer_than_63_rejected() -> None:
    validate(convert({"metadata": {"name": "a" * 63}}, Namespace))
    invalid(convert({"metadata": {"name": "a" * 64}}, Namespace))


# Regression (fixed bug): check_meta reports a bad Namespace name with the RFC 1123 *subdomain* message
# (which says '.' is allowed); upstream uses the label message
def test_namespace_name_error_uses_the_label_message() -> None:
    err = invalid(convert({"metadata": {"name": "a.b"}}, Namespace))
    assert "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'" in err.message


# Regression (fixed bug): check_meta raises 'Required value' when metadata.name is empty even if
# metadata.generateName is set (upstream: name OR generateName is required)
def test_generate_name_without_name_is_valid() -> None:
    validate(pod(name="", generateName="web-"))


# --- pods ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "field", "detail"),
    [
        pytest.param({"containers": []}, "spec.containers", "Required value", id="no-containers"),
        pytest.param(
            {"containers": [container("a"), container("a")]},
            "spec.containers[1].name",
            'Duplicate value: "a"',
            id="duplicate-container-names",
        ),
        pytest.param(
            {"initContainers": [container("a")], "containers": [container("a")]},
            "spec.containers[0].name",
            'Duplicate value: "a"',
            id="duplicate-init-and-regular",
        ),
        pytest.param(
            {"initContainers": [container("x"), container("x")]},
            "spec.initContainers[1].name",
            'Duplicate value: "x"',
            id="duplicate-init-names",
        ),
        pytest.param({"containers": [{"name": ""}]}, "spec.containers[0].name", "Required value", id="empty-name"),
        pytest.param({"containers": [{"name": "c"}]}, "spec.containers[0].image", "Required value", id="no-image"),
        pytest.param(
            {"containers": [container(resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})]},
            "spec.containers[0].resources.requests",
            'Invalid value: "2": must be less than or equal to cpu limit of 1',
            id="request-above-limit",
        ),
        pytest.param(
            {"containers": [container(resources={"requests": {"cpu": "-1"}})]},
            "spec.containers[0].resources.requests.cpu",
            'Invalid value: "-1": must be greater than or equal to 0',
            id="negative-request",
        ),
        pytest.param(
            {"containers": [container(resources={"requests": {"cpu": "1.2.3"}})]},
            "spec.containers[0].resources.requests.cpu",
            f'Invalid value: "1.2.3": {EXPECTED}',
            id="malformed-request",
        ),
        pytest.param(
            {"initContainers": [container("i", resources={"limits": {"memory": "x"}})]},
            "spec.initContainers[0].resources.limits.memory",
            f'Invalid value: "x": {EXPECTED}',
            id="malformed-init-limit",
        ),
        pytest.param(
            {"overhead": {"cpu": "bad"}},
            "spec.overhead.cpu",
            f'Invalid value: "bad": {EXPECTED}',
            id="malformed-overhead",
        ),
        pytest.param(
            {"containers": [container(ports=[{"containerPort": 0}])]},
            "spec.containers[0].ports[0].containerPort",
            "Required value",
            id="container-port-zero",
        ),
        pytest.param(
            {"containers": [container(ports=[{"containerPort": 80, "hostPort": 70000}])]},
            "spec.containers[0].ports[0].hostPort",
            "Invalid value: 70000: must be between 1 and 65535, inclusive",
            id="host-port-too-big",
        ),
        pytest.param(
            {"containers": [container(ports=[{"containerPort": 80, "protocol": "HTTP"}])]},
            "spec.containers[0].ports[0].protocol",
            'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
            id="bad-protocol",
        ),
        pytest.param(
            {"tolerations": [{"key": "k", "operator": "In"}]},
            "spec.tolerations[0].operator",
            'Unsupported value: "In": supported values: "Equal", "Exists"',
            id="toleration-bad-operator",
        ),
        pytest.param(
            {"tolerations": [{"key": "k", "operator": "Exists", "value": "v"}]},
            "spec.tolerations[0].operator",
            'Invalid value: {"key":"k","operator":"Exists","value":"v"}: '
            "value must be empty when `operator` is 'Exists'",
            id="toleration-exists-with-value",
        ),
        pytest.param(
            {"tolerations": [{"key": "k", "operator": "Exists"}, {"key": "k", "effect": "NoRun"}]},
            "spec.tolerations[1].effect",
            'Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
            id="toleration-bad-effect",
        ),
        pytest.param(
            {"preemptionPolicy": "Always"},
            "spec.preemptionPolicy",
            'Unsupported value: "Always"',
            id="bad-preemption-policy",
        ),
        pytest.param(
            {"topologySpreadConstraints": [{"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}]},
            "spec.topologySpreadConstraints[0].maxSkew",
            "Invalid value: 0: must be greater than zero",
            id="tsc-max-skew",
        ),
        pytest.param(
            {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "Maybe"}]},
            "spec.topologySpreadConstraints[0].whenUnsatisfiable",
            'Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"',
            id="tsc-when-unsatisfiable",
        ),
        pytest.param(
            {"terminationGracePeriodSeconds": -1},
            "spec.terminationGracePeriodSeconds",
            "Invalid value: must be >= 0",
            id="negative-grace",
        ),
    ],
)
def test_invalid_pods(spec: dict[str, Any], field: str, detail: str) -> None:
    err = invalid(pod(spec))
    assert err.field == field
    assert err.message == f'Pod "p" is invalid: {field}: {detail}'
    assert (err.code, err.reason, err.kind, err.name) == (422, "Invalid", "Pod", "p")
    assert isinstance(err, ApiError)


def test_first_problem_wins() -> None:
    """Metadata is checked before quantities, quantities before the rest of the spec."""
    bad = pod({"containers": [container(resources={"requests": {"cpu": "x"}})], "preemptionPolicy": "?"}, name="B")
    assert invalid(bad).field == "metadata.name"
    bad = pod({"containers": [container(resources={"requests": {"cpu": "x"}})], "preemptionPolicy": "?"})
    assert invalid(bad).field == "spec.containers[0].resources.requests.cpu"


# Regressions (fixed bugs): both upstream toleration rules were missing from validation._pod.
@pytest.mark.parametrize(
    ("toleration", "field", "detail"),
    [
        pytest.param(
            {"operator": "Equal", "value": "v", "effect": "NoSchedule"},
            "spec.tolerations[0].operator",
            'Invalid value: "Equal": operator must be Exists when `key` is empty, '
            'which means "match all values and all keys"',
            id="empty-key-needs-exists",
        ),
        pytest.param(
            {"value": "v"},
            "spec.tolerations[0].operator",
            'Invalid value: "": operator must be Exists when `key` is empty, '
            'which means "match all values and all keys"',
            id="empty-key-default-operator",
        ),
        pytest.param(
            {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 10},
            "spec.tolerations[0].effect",
            "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
            id="toleration-seconds-needs-noexecute",
        ),
        pytest.param(
            {"key": "k", "operator": "Exists", "tolerationSeconds": 10},
            "spec.tolerations[0].effect",
            "Invalid value: \"\": effect must be 'NoExecute' when `tolerationSeconds` is set",
            id="toleration-seconds-any-effect",
        ),
    ],
)
def test_upstream_toleration_rules(toleration: dict[str, Any], field: str, detail: str) -> None:
    err = invalid(pod({"tolerations": [toleration]}))
    assert err.field == field
    assert err.message == f'Pod "p" is invalid: {field}: {detail}'


# --- nodes, priority classes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "field", "detail"),
    [
        pytest.param(
            node({"taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "k", "effect": "Sometimes"}]}),
            "spec.taints[1].effect",
            'Unsupported value: "Sometimes"',
            id="taint-bad-effect",
        ),
        pytest.param(
            node({"taints": [{"key": "", "effect": "NoExecute"}]}),
            "spec.taints[0].key",
            "Required value",
            id="taint-no-key",
        ),
        pytest.param(
            node(status={"capacity": {"cpu": "four"}}),
            "status.capacity.cpu",
            f'Invalid value: "four": {EXPECTED}',
            id="malformed-capacity",
        ),
        pytest.param(
            node(status={"capacity": {"cpu": "4"}, "allocatable": {"memory": "-1Gi"}}),
            "status.allocatable.memory",
            'Invalid value: "-1Gi": must be greater than or equal to 0',
            id="negative-allocatable",
        ),
    ],
)
def test_invalid_nodes(obj: Node, field: str, detail: str) -> None:
    err = invalid(obj)
    assert err.field == field
    assert err.message == f'Node "n" is invalid: {field}: {detail}'


def test_user_priority_class_value_capped() -> None:
    pc = convert({"metadata": {"name": "huge"}, "value": 1_000_000_001}, PriorityClass)
    with pytest.raises(
        Invalid,
        match=r'^PriorityClass "huge" is invalid: value: Invalid value: must be no greater than 1000000000 '
        r"for user priority classes$",
    ):
        validate(pc)


def test_quantity_errors_lists_every_bad_quantity_with_its_path() -> None:
    bad = pod(
        {
            "initContainers": [container("i", resources={"requests": {"cpu": "-1"}})],
            "containers": [container(resources={"requests": {"cpu": "1", "memory": "lots"}, "limits": {"x": "1"}})],
            "overhead": {"memory": "-5"},
        }
    )
    assert [(path, q.text) for path, q in quantity_errors(bad)] == [
        ("spec.initContainers[0].resources.requests.cpu", "-1"),
        ("spec.containers[0].resources.requests.memory", "lots"),
        ("spec.overhead.memory", "-5"),
    ]
    assert list(quantity_errors(convert({"metadata": {"name": "x"}}, Namespace))) == []


@pytest.mark.parametrize(
    ("name", "namespace"),
    [
        ("web-1.1880a1b2c3d4e5f6", "default"),  # the scheduler's and kubelets' Event names
        ("", ""),  # no name, no generateName
        ("Bad_Name", "default"),
        ("x" * 300, "default"),
        ("ok", "Bad_Namespace"),
        ("ok", ""),
    ],
)
def test_validate_event_is_validate_for_an_event(name: str, namespace: str) -> None:
    """``validate_event`` (the Event strategy's) raises what ``validate`` raises, or nothing."""
    event = Event(
        involved_object=ObjectReference(kind="Pod", name="web-1", namespace="default"),
        metadata=ObjectMeta(name=name, namespace=namespace),
        reason="Scheduled",
        message="Successfully assigned default/web-1 to node-1",
    )
    outcomes = []
    for check in (validate, validate_event):
        try:
            check(event)
            outcomes.append(None)
        except Invalid as err:
            outcomes.append(str(err))
    assert outcomes[0] == outcomes[1]
