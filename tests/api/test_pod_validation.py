"""Pod fields the scheduler reads, validated as upstream's ``ValidatePod`` does (issue 10, item 5).

The API server refuses what upstream's refuses, with upstream's field path and message, so the
scheduler only ever sees pods a real cluster would store. End-to-end: ``validate`` and ``run``
refuse a scenario whose pod template is such a pod with exit 2 and one ``error:`` line naming the
file and the field path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from emulator.base.api.codec import convert
from emulator.base.api.core import Namespace, Pod
from emulator.base.api.errors import Invalid
from emulator.base.api.labelselector import compile_selector
from emulator.base.api.nodeaffinity import term_errors
from emulator.base.api.validation import validate
from emulator.cli import main

REQ = "requiredDuringSchedulingIgnoredDuringExecution"
PREF = "preferredDuringSchedulingIgnoredDuringExecution"
NA = f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms[0]"
PA = f"spec.affinity.podAffinity.{REQ}[0]"
QNAME_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


# Hand-built from a spec document on purpose: the tables hold invalid pods for validation to refuse.
def pod_of(spec: dict[str, Any]) -> Pod:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}], **spec}
    return convert({"metadata": {"name": "p"}, "spec": body}, Pod)


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def node_required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {REQ: {"nodeSelectorTerms": list(terms)}}}}


def node_preferred(weight: int, term: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": {PREF: [{"weight": weight, "preference": term}]}}}


def pod_term(selector: dict[str, Any] | None = None, topology: str = "zone", **extra: Any) -> dict[str, Any]:
    term: dict[str, Any] = {"topologyKey": topology, **extra}
    if selector is not None:
        term["labelSelector"] = selector
    return term


def pod_affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"affinity": {"podAffinity": {REQ: list(terms)}}}


def spread(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    return {**base, **fields}


VALID = [
    pytest.param({"nodeSelector": {"disk": "ssd", "example.com/gpu": ""}}, id="node-selector"),
    pytest.param(
        node_required(
            {"matchExpressions": [expr("zone", "In", "a"), expr("cpus", "Gt", "4"), expr("spot", "DoesNotExist")]},
            {"matchFields": [expr("metadata.name", "NotIn", "node-1")]},
        ),
        id="node-affinity-every-operator-shape",
    ),
    pytest.param(node_preferred(100, {"matchExpressions": [expr("zone", "Exists")]}), id="preferred-weight-100"),
    pytest.param(node_preferred(1, {}), id="preferred-empty-term"),
    pytest.param(
        pod_affinity(pod_term({"matchLabels": {"app": "db"}}, matchLabelKeys=["rev"], mismatchLabelKeys=["team"])),
        id="pod-affinity-label-keys",
    ),
    pytest.param(
        {
            "affinity": {
                "podAntiAffinity": {
                    PREF: [{"weight": 50, "podAffinityTerm": pod_term({}, namespaces=["a"], namespaceSelector={})}]
                }
            }
        },
        id="weighted-anti-affinity",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                spread(minDomains=3, nodeAffinityPolicy="Ignore", nodeTaintsPolicy="Honor"),
                spread(whenUnsatisfiable="ScheduleAnyway", labelSelector={}, matchLabelKeys=["rev"]),
            ]
        },
        id="spread-constraints",
    ),
    pytest.param({"tolerations": [{"key": "example.com/k", "operator": "Equal", "value": "v"}]}, id="toleration"),
]


@pytest.mark.parametrize("spec", VALID)
def test_valid_pods_pass(spec: dict[str, Any]) -> None:
    validate(pod_of(spec))


INVALID = [
    # nodeSelector
    pytest.param(
        {"nodeSelector": {"-bad": "x"}},
        "spec.nodeSelector",
        f'Invalid value: "-bad": {QNAME_MSG}',
        id="node-selector-key",
    ),
    # node affinity
    pytest.param(
        node_required({"matchExpressions": [expr("zone", "Foo", "a")]}),
        f"{NA}.matchExpressions[0].operator",
        'Invalid value: "Foo": not a valid selector operator',
        id="node-affinity-operator-Foo",
    ),
    pytest.param(
        node_required({"matchExpressions": [expr("zone", "In")]}),
        f"{NA}.matchExpressions[0].values",
        "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        id="node-affinity-in-without-values",
    ),
    pytest.param(
        node_required({"matchExpressions": [expr("zone", "Exists", "a")]}),
        f"{NA}.matchExpressions[0].values",
        "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        id="node-affinity-exists-with-values",
    ),
    pytest.param(
        node_required({"matchExpressions": [expr("cpus", "Gt", "1", "2")]}),
        f"{NA}.matchExpressions[0].values",
        "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        id="node-affinity-gt-two-values",
    ),
    pytest.param(
        node_required({"matchExpressions": [expr("a/b/c", "Exists")]}),
        f"{NA}.matchExpressions[0].key",
        "Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
        "subdomain prefix and '/' (e.g. 'example.com/MyName')",
        id="node-affinity-bad-key",
    ),
    pytest.param(
        node_required(),
        f"spec.affinity.nodeAffinity.{REQ}.nodeSelectorTerms",
        "Required value: must have at least one node selector term",
        id="node-affinity-no-terms",
    ),
    pytest.param(
        node_required({"matchFields": [expr("metadata.labels", "In", "x")]}),
        f"{NA}.matchFields[0].key",
        'Invalid value: "metadata.labels": not a valid field selector key',
        id="match-fields-other-field",
    ),
    pytest.param(
        node_required({"matchFields": [expr("metadata.name", "Exists")]}),
        f"{NA}.matchFields[0].operator",
        'Invalid value: "Exists": not a valid selector operator',
        id="match-fields-exists",
    ),
    pytest.param(
        node_required({"matchFields": [expr("metadata.name", "In", "a", "b")]}),
        f"{NA}.matchFields[0].values",
        "Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        id="match-fields-two-values",
    ),
    pytest.param(
        node_preferred(1000, {"matchExpressions": [expr("zone", "Exists")]}),
        f"spec.affinity.nodeAffinity.{PREF}[0].weight",
        "Invalid value: 1000: must be in the range 1-100",
        id="preferred-weight-1000",
    ),
    pytest.param(
        node_preferred(0, {"matchExpressions": [expr("zone", "Exists")]}),
        f"spec.affinity.nodeAffinity.{PREF}[0].weight",
        "Invalid value: 0: must be in the range 1-100",
        id="preferred-weight-0",
    ),
    pytest.param(
        node_preferred(5, {"matchExpressions": [expr("zone", "Lt")]}),
        f"spec.affinity.nodeAffinity.{PREF}[0].preference.matchExpressions[0].values",
        "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        id="preferred-term-checked",
    ),
    # pod (anti-)affinity
    pytest.param(
        pod_affinity(pod_term({"matchExpressions": [expr("app", "Within", "db")]})),
        f"{PA}.labelSelector.matchExpressions[0].operator",
        'Invalid value: "Within": not a valid selector operator',
        id="pod-affinity-operator-Within",
    ),
    pytest.param(
        pod_affinity(pod_term({"matchExpressions": [expr("app", "In", "{{x}}")]})),
        f"{PA}.labelSelector.matchExpressions[0].values[0]",
        'Invalid value: "{{x}}": a valid label must be an empty string or consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        id="pod-affinity-bad-value",
    ),
    pytest.param(
        pod_affinity(pod_term({}, namespaceSelector={"matchExpressions": [expr("team", "NotIn")]})),
        f"{PA}.namespaceSelector.matchExpressions[0].values",
        "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        id="namespace-selector",
    ),
    pytest.param(
        pod_affinity(pod_term({}, topology="")),
        f"{PA}.topologyKey",
        "Required value: can not be empty",
        id="topology-key-empty",
    ),
    pytest.param(
        pod_affinity(pod_term({}, topology="-zone")),
        f"{PA}.topologyKey",
        f'Invalid value: "-zone": {QNAME_MSG}',
        id="topology-key-not-qualified",
    ),
    pytest.param(
        pod_affinity(pod_term({}, namespaces=["Team_A"])),
        f"{PA}.namespace",
        'Invalid value: "Team_A": a lowercase RFC 1123 label must consist of lower case alphanumeric '
        "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        id="namespaces-entry",
    ),
    pytest.param(
        pod_affinity(pod_term(None, matchLabelKeys=["rev"])),
        f"{PA}.matchLabelKeys",
        "Forbidden: must not be specified when labelSelector is not set",
        id="match-label-keys-without-selector",
    ),
    pytest.param(
        pod_affinity(pod_term({}, matchLabelKeys=["rev"], mismatchLabelKeys=["rev"])),
        f"{PA}.matchLabelKeys[0]",
        'Invalid value: "rev": exists in both matchLabelKeys and mismatchLabelKeys',
        id="match-and-mismatch-same-key",
    ),
    pytest.param(
        {"affinity": {"podAntiAffinity": {PREF: [{"weight": 101, "podAffinityTerm": pod_term({})}]}}},
        f"spec.affinity.podAntiAffinity.{PREF}[0].weight",
        "Invalid value: 101: must be in the range 1-100",
        id="anti-affinity-weight-101",
    ),
    # topology spread constraints
    pytest.param(
        {"topologySpreadConstraints": [spread(topologyKey="")]},
        "spec.topologySpreadConstraints[0].topologyKey",
        "Required value: can not be empty",
        id="spread-no-topology-key",
    ),
    pytest.param(
        {"topologySpreadConstraints": [spread(), spread(maxSkew=2)]},
        "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}",
        'Duplicate value: "{zone, DoNotSchedule}"',
        id="spread-duplicate",
    ),
    pytest.param(
        {"topologySpreadConstraints": [spread(minDomains=0)]},
        "spec.topologySpreadConstraints[0].minDomains",
        "Invalid value: 0: must be greater than zero",
        id="spread-min-domains-zero",
    ),
    pytest.param(
        {"topologySpreadConstraints": [spread(minDomains=2, whenUnsatisfiable="ScheduleAnyway")]},
        "spec.topologySpreadConstraints[0].minDomains",
        "Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        id="spread-min-domains-schedule-anyway",
    ),
    pytest.param(
        {"topologySpreadConstraints": [spread(nodeTaintsPolicy="Respect")]},
        "spec.topologySpreadConstraints[0].nodeTaintsPolicy",
        'Unsupported value: "Respect": supported values: "Honor", "Ignore"',
        id="spread-taints-policy",
    ),
    pytest.param(
        {"topologySpreadConstraints": [spread(labelSelector={"matchExpressions": [expr("app", "Gt", "1")]})]},
        "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].operator",
        'Invalid value: "Gt": not a valid selector operator',
        id="spread-selector-operator",
    ),
    pytest.param(
        {"topologySpreadConstraints": [spread(matchLabelKeys=["rev"])]},
        "spec.topologySpreadConstraints[0].matchLabelKeys",
        "Forbidden: must not be specified when labelSelector is not set",
        id="spread-match-label-keys-without-selector",
    ),
    # tolerations, host ports
    pytest.param(
        {"tolerations": [{"key": "k", "operator": "Equal", "value": "a b"}]},
        "spec.tolerations[0].operator",
        'Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '
        "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        id="toleration-bad-value",
    ),
    pytest.param(
        {"tolerations": [{"key": "k k", "operator": "Exists"}]},
        "spec.tolerations[0].key",
        f'Invalid value: "k k": {QNAME_MSG}',
        id="toleration-bad-key",
    ),
    pytest.param(
        {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": -1}]}]},
        "spec.containers[0].ports[0].hostPort",
        "Invalid value: -1: must be between 1 and 65535, inclusive",
        id="host-port-negative",
    ),
]


@pytest.mark.parametrize(("spec", "field", "detail"), INVALID)
def test_invalid_pods_are_refused_with_upstream_path_and_message(spec: dict[str, Any], field: str, detail: str) -> None:
    with pytest.raises(Invalid) as info:
        validate(pod_of(spec))
    assert (info.value.field, info.value.detail) == (field, detail)
    assert str(info.value) == f'Pod "p" is invalid: {field}: {detail}'


@pytest.mark.parametrize("spec", VALID)
def test_what_validation_accepts_the_scheduler_parses(spec: dict[str, Any]) -> None:
    """The API server is the stricter of the two: a pod it stores never trips the scheduler's
    own parse errors (``LabelSelectorAsSelector``, ``NewNodeSelector``)."""
    pod = pod_of(spec)
    affinity = pod.spec.affinity
    if affinity is None:
        return
    if affinity.node_affinity is not None:
        required = affinity.node_affinity.required_during_scheduling_ignored_during_execution
        for term in required.node_selector_terms if required is not None else []:
            assert term_errors(term, "") == []
        for pref in affinity.node_affinity.preferred_during_scheduling_ignored_during_execution:
            assert term_errors(pref.preference, "") == []
    for pa in (affinity.pod_affinity, affinity.pod_anti_affinity):
        if pa is None:
            continue
        terms = [*pa.required_during_scheduling_ignored_during_execution]
        terms += [w.pod_affinity_term for w in pa.preferred_during_scheduling_ignored_during_execution]
        for term in terms:
            compile_selector(term.label_selector)
            compile_selector(term.namespace_selector)


def test_namespace_name_with_a_trailing_newline_is_refused() -> None:
    """Regression: ``re.match`` with ``$`` accepted ``"team-a\\n"``; names are matched whole now."""
    with pytest.raises(Invalid, match=r"metadata\.name"):
        validate(convert({"metadata": {"name": "team-a\n"}}, Namespace))


# --- end to end: validate and run refuse such pods with exit 2 -----------------------------------


def _scenario(template_spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "refused",
        "nodes": [{"count": 1, "namePrefix": "n", "template": {"status": {"capacity": {"cpu": "2", "pods": "110"}}}}],
        "steps": [
            {
                "createPods": {
                    "count": 1,
                    "namePrefix": "web",
                    "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}], **template_spec}},
                }
            }
        ],
    }


CLI_CASES = [
    pytest.param(
        node_required({"matchExpressions": [expr("zone", "Foo", "a")]}),
        f"{NA}.matchExpressions[0].operator",
        id="node-affinity-operator-Foo",
    ),
    pytest.param(
        pod_affinity(pod_term({"matchExpressions": [expr("app", "Within", "db")]})),
        f"{PA}.labelSelector.matchExpressions[0].operator",
        id="pod-affinity-operator-Within",
    ),
    pytest.param(
        node_preferred(1000, {"matchExpressions": [expr("zone", "Exists")]}),
        f"spec.affinity.nodeAffinity.{PREF}[0].weight",
        id="preferred-weight-1000",
    ),
]


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(("spec", "field"), CLI_CASES)
def test_cli_refuses_the_scenario(
    command: str, spec: dict[str, Any], field: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(_scenario(spec)))
    assert main([command, str(path)]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    assert str(path) in lines[0]
    assert f"steps[0].createPods.template.{field}: " in lines[0]
    assert "Traceback" not in err
