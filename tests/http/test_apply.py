"""Server-side apply and managedFields (``FieldManagers``), without a server."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.base.http.apply import ApplyConflict, FieldManagers, fields_v1, path_string
from emulator.base.http.resources import find

DEPLOYMENTS = find("apps", "v1", "deployments")
PODS = find("", "v1", "pods")
T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"


def _deployment(replicas: int = 1, image: str = "nginx:1", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "default", "uid": "u1", "labels": {"app": "d", **labels}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": image, "ports": [{"containerPort": 80}]}]},
            },
        },
        "status": {"replicas": replicas},
    }


def _config(**spec: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}}
    if spec:
        config["spec"] = spec
    return config


def _owned(managers: FieldManagers, name: str) -> dict[str, Any]:
    for row in managers.managed_fields("u1"):
        if row["manager"] == name:
            fields: dict[str, Any] = row["fieldsV1"]
            return fields
    raise AssertionError(f"no manager {name}")


@pytest.fixture
def created() -> FieldManagers:
    """A Deployment created by ``kubectl apply`` (client-side): every field Update-owned."""
    managers = FieldManagers()
    managers.update(DEPLOYMENTS, None, _deployment(), manager="kubectl-client-side-apply", operation="Update", time=T0)
    return managers


def test_update_records_the_written_fields_in_fieldsv1(created: FieldManagers) -> None:
    assert created.managed_fields("u1") == [
        {
            "manager": "kubectl-client-side-apply",
            "operation": "Update",
            "apiVersion": "apps/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:selector": {},
                    "f:template": {
                        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                        "f:spec": {
                            "f:containers": {
                                'k:{"name":"c"}': {
                                    ".": {},
                                    "f:image": {},
                                    "f:name": {},
                                    "f:ports": {
                                        'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}
                                    },
                                }
                            }
                        },
                    },
                },
            },
        }
    ]


def test_apply_of_a_field_another_manager_set_differently_conflicts(created: FieldManagers) -> None:
    with pytest.raises(
        ApplyConflict,
        match=r"^Apply failed with 1 conflict: "
        r'conflict with "kubectl-client-side-apply" using apps/v1: \.spec\.replicas$',
    ) as info:
        created.apply(DEPLOYMENTS, _deployment(), _config(replicas=3), manager="kubectl", force=False, time=T1)
    assert info.value.code == 409
    assert info.value.causes == [(".spec.replicas", 'conflict with "kubectl-client-side-apply" using apps/v1')]
    assert [row["manager"] for row in created.managed_fields("u1")] == ["kubectl-client-side-apply"]


def test_conflicts_on_several_fields_are_listed_per_manager(created: FieldManagers) -> None:
    config = _config(
        replicas=3,
        template={"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
    )
    with pytest.raises(ApplyConflict, match=r"^Apply failed with 2 conflicts: conflicts with") as info:
        created.apply(DEPLOYMENTS, _deployment(), config, manager="kubectl", force=False, time=T1)
    assert str(info.value).splitlines() == [
        'Apply failed with 2 conflicts: conflicts with "kubectl-client-side-apply" using apps/v1:',
        "- .spec.replicas",
        '- .spec.template.spec.containers[name="c"].image',
    ]


def test_the_same_value_is_shared_not_a_conflict(created: FieldManagers) -> None:
    out = created.apply(DEPLOYMENTS, _deployment(), _config(replicas=1), manager="kubectl", force=False, time=T1)
    assert out["spec"]["replicas"] == 1
    assert _owned(created, "kubectl") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" in _owned(created, "kubectl-client-side-apply")["f:spec"]


def test_force_takes_the_field_over(created: FieldManagers) -> None:
    out = created.apply(DEPLOYMENTS, _deployment(), _config(replicas=3), manager="kubectl", force=True, time=T1)
    assert out["spec"]["replicas"] == 3
    assert out["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1"
    assert _owned(created, "kubectl") == {"f:spec": {"f:replicas": {}}}
    assert "f:replicas" not in _owned(created, "kubectl-client-side-apply")["f:spec"]
    rows = created.managed_fields("u1")
    assert [(r["manager"], r["operation"]) for r in rows] == [
        ("kubectl", "Apply"),
        ("kubectl-client-side-apply", "Update"),
    ]


def test_apply_creates_and_the_server_hands_the_set_over() -> None:
    managers = FieldManagers()
    config = _config(replicas=2)
    config["metadata"]["namespace"] = "default"
    out = managers.apply(DEPLOYMENTS, None, config, manager="kubectl", force=False, time=T0)
    assert out == config
    assert managers.managed_fields("u1") == []
    stored = {**out, "metadata": {**out["metadata"], "uid": "u1"}}
    managers.update(DEPLOYMENTS, None, stored, manager="kubectl", operation="Apply", time=T0)
    assert managers.managed_fields("u1") == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}},
        }
    ]


def test_fields_no_longer_applied_are_removed_unless_someone_else_owns_them() -> None:
    managers = FieldManagers()
    live = _deployment()
    live["metadata"]["labels"] = {}
    first = {**_config(), "metadata": {"name": "d", "labels": {"a": "1", "b": "2", "c": "3"}}}
    live = managers.apply(DEPLOYMENTS, live, first, manager="kubectl", force=False, time=T0)
    other = copy.deepcopy(live)
    other["metadata"]["labels"]["c"] = "4"
    managers.update(DEPLOYMENTS, live, other, manager="kubectl-label", operation="Update", time=T1)
    second = {**_config(), "metadata": {"name": "d", "labels": {"a": "1"}}}
    out = managers.apply(DEPLOYMENTS, other, second, manager="kubectl", force=False, time=T2)
    assert out["metadata"]["labels"] == {"a": "1", "c": "4"}
    assert _owned(managers, "kubectl") == {"f:metadata": {"f:labels": {"f:a": {}}}}


def test_list_items_merge_by_key_and_unapplied_items_go() -> None:
    managers = FieldManagers()
    live = _deployment()
    two = _config(
        template={"spec": {"containers": [{"name": "c", "image": "nginx:1"}, {"name": "side", "image": "b"}]}}
    )
    live = managers.apply(DEPLOYMENTS, live, two, manager="kubectl", force=False, time=T0)
    names = [c["name"] for c in live["spec"]["template"]["spec"]["containers"]]
    assert names == ["c", "side"]
    assert live["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80}]
    one = _config(template={"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}})
    out = managers.apply(DEPLOYMENTS, live, one, manager="kubectl", force=False, time=T1)
    assert out["spec"]["template"]["spec"]["containers"] == [
        {"name": "c", "image": "nginx:2", "ports": [{"containerPort": 80}]}
    ]


def test_an_update_takes_fields_from_other_managers() -> None:
    managers = FieldManagers()
    live = managers.apply(DEPLOYMENTS, _deployment(), _config(replicas=2), manager="kubectl", force=False, time=T0)
    scaled = copy.deepcopy(live)
    scaled["spec"]["replicas"] = 5
    managers.update(DEPLOYMENTS, live, scaled, manager="kubectl-scale", operation="Update", time=T1)
    assert [r["manager"] for r in managers.managed_fields("u1")] == ["kubectl-scale"]
    out = (
        managers.apply(DEPLOYMENTS, scaled, _config(replicas=2), manager="kubectl", force=False, time=T2)
        if False
        else None
    )
    assert out is None
    with pytest.raises(ApplyConflict, match=r'conflict with "kubectl-scale" using apps/v1: \.spec\.replicas$'):
        managers.apply(DEPLOYMENTS, scaled, _config(replicas=2), manager="kubectl", force=False, time=T2)


def test_status_writes_are_recorded_under_the_status_subresource() -> None:
    managers = FieldManagers()
    old = _deployment()
    new = copy.deepcopy(old)
    new["status"] = {"replicas": 1, "readyReplicas": 1}
    managers.update(
        DEPLOYMENTS, old, new, manager="kube-controller-manager", operation="Update", time=T1, subresource="status"
    )
    assert managers.managed_fields("u1") == [
        {
            "manager": "kube-controller-manager",
            "operation": "Update",
            "apiVersion": "apps/v1",
            "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:status": {"f:readyReplicas": {}}},
            "subresource": "status",
        }
    ]


def test_forget_drops_the_object() -> None:
    managers = FieldManagers()
    managers.update(PODS, None, _deployment(), manager="m", operation="Update", time=T0)
    assert managers.managed_fields("u1")
    managers.forget("u1")
    assert managers.managed_fields("u1") == []


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(("f:spec", "f:replicas"), ".spec.replicas", id="fields"),
        pytest.param(("f:spec", 'k:{"name":"c"}', "f:image"), '.spec[name="c"].image', id="key"),
        pytest.param(
            ("f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'),
            '.ports[containerPort=80,protocol="TCP"]',
            id="two-keys",
        ),
        pytest.param(("f:metadata", "f:finalizers", 'v:"a"'), '.metadata.finalizers[="a"]', id="set-value"),
    ],
)
def test_path_string(path: tuple[str, ...], expected: str) -> None:
    assert path_string(path) == expected


def test_fields_v1_marks_members_with_children() -> None:
    assert fields_v1({("f:a",), ("f:a", "f:b"), ("f:c", "f:d")}) == {
        "f:a": {".": {}, "f:b": {}},
        "f:c": {"f:d": {}},
    }


_label_values = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.text(min_size=1, max_size=2), max_size=3)


@given(_label_values, st.integers(0, 5), st.lists(st.sampled_from(["x", "y", "z"]), unique=True, max_size=3))
def test_applying_the_same_config_twice_is_a_no_op(labels: dict[str, str], replicas: int, names: list[str]) -> None:
    managers = FieldManagers()
    config = {
        **_config(replicas=replicas, template={"spec": {"containers": [{"name": n, "image": n} for n in names]}}),
        "metadata": {"name": "d", "labels": labels},
    }
    live = _deployment()
    once = managers.apply(DEPLOYMENTS, live, config, manager="kubectl", force=False, time=T0)
    assert live == _deployment()
    fields = managers.managed_fields("u1")
    twice = managers.apply(DEPLOYMENTS, once, config, manager="kubectl", force=False, time=T1)
    assert twice == once
    assert managers.managed_fields("u1") == fields


def test_a_port_without_protocol_is_the_live_tcp_port() -> None:
    services = find("", "v1", "services")
    live = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "default", "uid": "u1"},
        "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}], "selector": {"app": "a"}},
    }
    config = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    managers = FieldManagers()
    out = managers.apply(services, live, config, manager="kubectl", force=False, time=T0)
    assert out["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 8080}]
    item = 'k:{"port":80,"protocol":"TCP"}'
    assert _owned(managers, "kubectl") == {"f:spec": {"f:ports": {item: {".": {}, "f:port": {}}}}}


def test_managed_fields_a_request_sets_replace_the_record(created: FieldManagers) -> None:
    migrated = [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "apps/v1",
            "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:replicas": {}}},
        }
    ]
    live = _deployment()
    created.update(
        DEPLOYMENTS, live, live, manager="kubectl-patch", operation="Update", time=T1, managed_fields=migrated
    )
    assert created.managed_fields("u1") == migrated
    out = created.apply(DEPLOYMENTS, live, _config(replicas=4), manager="kubectl", force=False, time=T2)
    assert out["spec"]["replicas"] == 4
    created.update(DEPLOYMENTS, live, live, manager="m", operation="Update", time=T2, managed_fields=[{}])
    assert created.managed_fields("u1") == []


def test_fields_v1_round_trips(created: FieldManagers) -> None:
    rows = created.managed_fields("u1")
    again = FieldManagers()
    live = _deployment()
    again.update(DEPLOYMENTS, live, live, manager="x", operation="Update", time=T0, managed_fields=rows)
    assert again.managed_fields("u1") == rows


@pytest.mark.parametrize(
    "live_selector",
    [
        pytest.param({"matchLabels": {"app": "d", "old": "x"}}, id="replaces-a-live-selector"),
        pytest.param(None, id="sets-a-missing-selector"),
    ],
)
def test_label_selectors_are_atomic(live_selector: dict[str, Any] | None) -> None:
    live = _deployment()
    if live_selector is None:
        del live["spec"]["selector"]
    else:
        live["spec"]["selector"] = live_selector
    managers = FieldManagers()
    selector = {"matchLabels": {"app": "d"}}
    out = managers.apply(DEPLOYMENTS, live, _config(selector=selector), manager="kubectl", force=False, time=T0)
    assert out["spec"]["selector"] == selector
    assert _owned(managers, "kubectl") == {"f:spec": {"f:selector": {}}}


def test_a_migrated_map_member_is_not_removed_while_its_keys_are_applied(created: FieldManagers) -> None:
    """kubectl's migration hands ``kubectl`` an Update-shaped set (``.`` members); re-applying keeps them."""
    rows = created.managed_fields("u1")
    migrated = [{**rows[0], "manager": "kubectl", "operation": "Apply"}]
    live = _deployment()
    created.update(DEPLOYMENTS, live, live, manager="kubectl", operation="Update", time=T1, managed_fields=migrated)
    manifest = {k: v for k, v in _deployment().items() if k != "status"}
    out = created.apply(DEPLOYMENTS, live, manifest, manager="kubectl", force=False, time=T2)
    assert out == live
    config = {**_config(replicas=1), "metadata": {"name": "d", "labels": {"app": "d"}}}
    out = created.apply(DEPLOYMENTS, live, config, manager="kubectl", force=False, time=T2)
    assert out["metadata"]["labels"] == {"app": "d"}
    assert not out["spec"]["template"]["spec"]["containers"]
    assert "selector" not in out["spec"]
    assert live == _deployment()


_leaves = st.one_of(st.integers(0, 3), st.sampled_from(["x", "y"]), st.booleans())
_trees = st.recursive(
    _leaves,
    lambda inner: st.dictionaries(st.sampled_from(["selector", "strategy", "k1", "k2"]), inner, min_size=1, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.sampled_from(["selector", "strategy", "paused", "extra"]), _trees, max_size=3), _trees)
def test_apply_of_any_spec_is_idempotent_and_leaves_the_live_object_alone(spec: dict[str, Any], other: Any) -> None:
    managers = FieldManagers()
    live = _deployment()
    live["spec"]["extra"] = other
    config = _config(**spec)
    once = managers.apply(DEPLOYMENTS, live, config, manager="kubectl", force=True, time=T0)
    rows = managers.managed_fields("u1")
    assert live["spec"]["extra"] == other
    assert managers.apply(DEPLOYMENTS, once, config, manager="kubectl", force=False, time=T1) == once
    assert managers.managed_fields("u1") == rows


def test_the_rendered_record_follows_every_change(created: FieldManagers) -> None:
    rows = created.managed_fields("u1")
    assert created.managed_fields("u1") is rows
    live = _deployment()
    scaled = _deployment(replicas=9)
    created.update(DEPLOYMENTS, live, scaled, manager="kubectl-scale", operation="Update", time=T1, managed_fields=rows)
    assert [r["manager"] for r in created.managed_fields("u1")] == ["kubectl-client-side-apply", "kubectl-scale"]
    created.apply(DEPLOYMENTS, scaled, _config(replicas=9), manager="kubectl", force=False, time=T2)
    assert created.managed_fields("u1")[0]["manager"] == "kubectl"
    created.forget("u1")
    assert created.managed_fields("u1") == []


def test_two_appliers_share_equal_values_and_conflict_on_different_ones() -> None:
    managers = FieldManagers()
    live = managers.apply(DEPLOYMENTS, _deployment(), _config(replicas=2), manager="a", force=False, time=T0)
    live = managers.apply(DEPLOYMENTS, live, _config(replicas=2), manager="b", force=False, time=T1)
    assert [(r["manager"], r["operation"]) for r in managers.managed_fields("u1")] == [("a", "Apply"), ("b", "Apply")]
    with pytest.raises(ApplyConflict, match=r"^Apply failed with 2 conflicts: ") as info:
        managers.apply(DEPLOYMENTS, live, _config(replicas=3, paused=True), manager="c", force=False, time=T2)
    assert str(info.value).splitlines()[1:] == ["- .spec.replicas", 'conflicts with "b":', "- .spec.replicas"]
    assert info.value.causes == [(".spec.replicas", 'conflict with "a"'), (".spec.replicas", 'conflict with "b"')]
    out = managers.apply(DEPLOYMENTS, live, _config(), manager="a", force=False, time=T2)
    assert out["spec"]["replicas"] == 2
