"""UnmodelledFields: extras computed from written vs stored, grafted back on serving, kept
apart from status, replaced by a later write, inherited through controller templates."""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.base.api.apps import Deployment
from emulator.base.api.codec import convert, to_builtins
from emulator.base.api.core import Pod
from emulator.base.apiserver.server import WriteRecord
from emulator.base.http.extras import RETIRED_OWNERS, UnmodelledFields, write_listener
from tests.controllers.appsworld import apps_world

UID = "u-1"


def pod(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": UID},
        "spec": {"containers": containers, **spec},
    }


def stored_of(written: dict[str, Any], kind: type[Any] = Pod) -> dict[str, Any]:
    """What the store serves for ``written``: its Struct round trip."""
    out: dict[str, Any] = to_builtins(convert(written, kind))
    return out


WEB = {"name": "web", "image": "nginx", "args": ["--a=1"], "imagePullPolicy": "Always"}
SIDE = {"name": "side", "image": "busybox", "command": ["sleep", "1d"]}


@pytest.mark.parametrize(
    ("written", "served", "expected"),
    [
        pytest.param(
            pod([{"name": "web", "image": "nginx"}], dnsPolicy="None", securityContext={"runAsUser": 1}),
            None,
            {"dnsPolicy": "None", "securityContext": {"runAsUser": 1}},
            id="map-keys-absent-from-the-struct",
        ),
        pytest.param(
            pod([dict(WEB), dict(SIDE)]),
            None,
            {"containers": [dict(WEB), dict(SIDE)]},
            id="keyed-list-items-keep-their-fields",
        ),
        pytest.param(
            pod([dict(WEB), dict(SIDE)]),
            lambda s: {**s, "spec": {**s["spec"], "containers": s["spec"]["containers"][::-1]}},
            {"containers": [dict(SIDE), dict(WEB)]},
            id="reordered-list-matched-by-name-not-position",
        ),
        pytest.param(
            pod([dict(WEB), dict(SIDE)]),
            lambda s: {
                **s,
                "spec": {**s["spec"], "containers": [{"name": "other", "image": "x"}, *s["spec"]["containers"][1:]]},
            },
            {"containers": [{"name": "other", "image": "x"}, dict(SIDE)]},
            id="item-gone-from-the-served-list-gets-nothing",
        ),
        pytest.param(
            pod(
                [
                    {
                        "name": "web",
                        "image": "nginx",
                        "ports": [{"containerPort": 80, "name": "http", "hostIP": "1.2.3.4"}],
                    }
                ]
            ),
            None,
            {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx",
                        "ports": [{"containerPort": 80, "name": "http", "hostIP": "1.2.3.4"}],
                    }
                ]
            },
            id="ports-keyed-by-container-port",
        ),
        pytest.param(
            pod([{"name": "web", "image": "nginx"}], nodeName="n1"),
            lambda s: {**s, "spec": {**s["spec"], "nodeName": "n2"}},
            {"containers": [{"name": "web", "image": "nginx"}], "nodeName": "n2"},
            id="a-served-value-wins",
        ),
    ],
)
def test_merge_serves_what_the_struct_dropped(written: dict[str, Any], served: Any, expected: dict[str, Any]) -> None:
    extras = UnmodelledFields()
    stored = stored_of(written)
    extras.remember(UID, copy.deepcopy(written), stored)
    out = extras.merge(served(stored) if served else stored)
    for key, value in expected.items():
        assert out["spec"][key] == value


def test_merge_leaves_its_input_alone_and_returns_plain_objects_as_they_are() -> None:
    extras = UnmodelledFields()
    written = pod([dict(WEB)])
    stored = stored_of(written)
    before = copy.deepcopy(stored)
    extras.remember(UID, written, stored)
    assert extras.merge(stored)["spec"]["containers"][0]["args"] == WEB["args"]
    assert stored == before
    other = {**stored, "metadata": {**stored["metadata"], "uid": "u-2"}}
    assert extras.merge(other) is other


def test_a_later_write_replaces_the_extras() -> None:
    extras = UnmodelledFields()
    first = pod([dict(WEB)], dnsPolicy="None")
    extras.remember(UID, first, stored_of(first))
    second = pod([{"name": "web", "image": "nginx", "imagePullPolicy": "Never"}])
    stored = stored_of(second)
    extras.remember(UID, second, stored)
    out = extras.merge(stored)
    assert "dnsPolicy" not in out["spec"]
    assert out["spec"]["containers"] == [{"name": "web", "image": "nginx", "imagePullPolicy": "Never"}]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("uid", "client-uid", id="uid"),
        pytest.param("resourceVersion", "7", id="resourceVersion"),
        pytest.param("managedFields", [{"manager": "kubectl"}], id="managedFields"),
        pytest.param("creationTimestamp", "2020-01-01T00:00:00Z", id="creationTimestamp"),
    ],
)
def test_server_set_metadata_is_never_an_extra(field: str, value: Any) -> None:
    extras = UnmodelledFields()
    written = pod([{"name": "web", "image": "nginx"}])
    stored = stored_of(written)
    stored["metadata"].pop(field, None)
    written["metadata"][field] = value
    extras.remember(UID, written, stored)
    assert field not in extras.merge(stored)["metadata"] or field == "uid"
    assert not extras.has(UID)


def test_status_of_a_main_write_is_ignored_and_a_status_write_keeps_the_spec_extras() -> None:
    extras = UnmodelledFields()
    written = pod([dict(WEB)])
    written["status"] = {"phase": "Running", "qosClass": "BestEffort"}
    stored = stored_of(written)
    stored["status"] = {}
    extras.remember(UID, written, stored)
    assert "qosClass" not in extras.merge(stored)["status"]
    status_write = {**stored, "status": {"phase": "Running", "nominatedNodeName": "n", "resize": "Proposed"}}
    status_stored = {**stored, "status": {"phase": "Running"}}
    extras.remember(UID, status_write, status_stored, subresource="status")
    out = extras.merge(status_stored)
    assert out["status"] == {"phase": "Running", "nominatedNodeName": "n", "resize": "Proposed"}
    assert out["spec"]["containers"][0]["args"] == WEB["args"]
    main_again = pod([{"name": "web", "image": "nginx"}])
    extras.remember(UID, main_again, stored_of(main_again))
    assert extras.merge(status_stored)["status"]["resize"] == "Proposed"


def record(verb: str, kind: str, old: Any, new: Any) -> WriteRecord:
    return WriteRecord(revision=1, time=0.0, verb=verb, kind=kind, old=old, new=new)  # type: ignore[arg-type]


def test_the_write_listener_forgets_deleted_objects_only_once_they_are_gone() -> None:
    extras = UnmodelledFields()
    written = pod([dict(WEB)])
    struct = convert(written, Pod)
    extras.remember(UID, written, to_builtins(struct))
    listener = write_listener(extras)
    listener(record("delete", "Pod", struct, struct))
    assert extras.has(UID)
    listener(record("delete", "Pod", struct, None))
    assert not extras.has(UID)


# --------------------------------------------------------------------------- templates

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:1.27",
                        "imagePullPolicy": "IfNotPresent",
                        "env": [{"name": "MODE", "value": "prod"}],
                        "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
                    }
                ],
                "serviceAccountName": "web",
            },
        },
    },
}


@pytest.mark.asyncio
async def test_templates_propagate_deployment_to_replicaset_to_pods() -> None:
    async with apps_world() as w:
        server = w.cluster.server
        extras = UnmodelledFields()
        server.add_write_listener(write_listener(extras))
        written = copy.deepcopy(DEPLOYMENT)
        created = server.create(convert(written, Deployment))
        extras.remember(created.metadata.uid, written, to_builtins(created))
        await w.cluster.at(10.0)
        container = DEPLOYMENT["spec"]["template"]["spec"]["containers"][0]
        (rs,), _ = server.list("ReplicaSet", namespace="default")
        rs_out = extras.merge(to_builtins(rs))
        assert rs_out["spec"]["template"]["spec"]["containers"][0] == container
        pods = w.pods("web-")
        assert len(pods) == 2
        for p in pods:
            out = extras.merge(to_builtins(p))
            assert out["spec"]["containers"][0] == container
            assert out["spec"]["serviceAccountName"] == "web"
            assert out["metadata"]["name"] == p.metadata.name
        # the owner's next HTTP write changes what its pods inherit
        changed = copy.deepcopy(DEPLOYMENT)
        # (args: env is modelled since ConfigMap/Secret refs, and a pod keeps its own env)
        changed["spec"]["template"]["spec"]["containers"][0]["args"] = ["--mode=dev"]
        live = server.get("Deployment", "web", "default")
        extras.remember(live.metadata.uid, changed, to_builtins(live))
        assert extras.merge(to_builtins(pods[0]))["spec"]["containers"][0]["args"] == ["--mode=dev"]
        # deleting the Deployment forgets its own extras; what its pods inherited stays
        # resolvable (retired) until they are gone too
        server.delete("Deployment", "web", "default")
        await w.cluster.at(20.0)
        assert not extras.has(live.metadata.uid)
        assert extras.merge(to_builtins(pods[0]))["spec"]["containers"][0]["args"] == ["--mode=dev"]
        # a pod orphaned by an in-process write keeps what it had inherited
        orphan = server.get("Pod", pods[1].metadata.name, "default")
        orphan = server.update(replace(orphan, metadata=replace(orphan.metadata, owner_references=[])))
        assert extras.wants(orphan)
        assert extras.merge(to_builtins(orphan))["spec"]["serviceAccountName"] == "web"


def test_cronjob_to_job_to_pod_by_hand() -> None:
    extras = UnmodelledFields()
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "c", "uid": "cj"},
        "spec": {
            "jobTemplate": {
                "spec": {"template": {"spec": {"containers": [{"name": "x", "image": "i", "args": ["a"]}]}}}
            }
        },
    }
    extras.remember(
        "cj",
        cron,
        {
            **cron,
            "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "x", "image": "i"}]}}}}},
        },
    )
    job_ref = [{"kind": "CronJob", "uid": "cj", "controller": True}]
    extras.link("job", "Job", ("CronJob", "cj"))
    job = {
        "kind": "Job",
        "metadata": {"uid": "job", "ownerReferences": job_ref},
        "spec": {"template": {"spec": {"containers": [{"name": "x", "image": "i"}]}}},
    }
    assert extras.merge(job)["spec"]["template"]["spec"]["containers"][0]["args"] == ["a"]
    p = {
        "kind": "Pod",
        "metadata": {"uid": "p", "ownerReferences": [{"kind": "Job", "uid": "job", "controller": True}]},
        "spec": {"containers": [{"name": "x", "image": "i"}]},
    }
    assert extras.merge(p)["spec"]["containers"][0]["args"] == ["a"]
    not_controller = {**p, "metadata": {"uid": "p", "ownerReferences": [{"kind": "Job", "uid": "job"}]}}
    assert extras.merge(not_controller) is not_controller


def test_ten_thousand_pods_of_one_template_resolve_it_once() -> None:
    extras = UnmodelledFields()
    rs = {"kind": "ReplicaSet", "metadata": {"uid": "rs"}, "spec": {"template": {"spec": {"containers": [dict(WEB)]}}}}
    extras.remember(
        "rs",
        rs,
        {
            "kind": "ReplicaSet",
            "metadata": {"uid": "rs"},
            "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
        },
    )
    refs = [{"kind": "ReplicaSet", "uid": "rs", "controller": True}]
    pods = [
        {
            "kind": "Pod",
            "metadata": {"uid": f"p{i}", "ownerReferences": refs},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]},
        }
        for i in range(10_000)
    ]
    served = [extras.merge(p) for p in pods]
    assert all(s["spec"]["containers"][0]["args"] == WEB["args"] for s in served)
    assert "templates cached=1" in repr(extras)


# --------------------------------------------------------------------------- properties

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text("ab", max_size=2))
_KEYS = st.sampled_from(["a", "b", "c", "dnsPolicy", "hostIPC", "x"])
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)
_EXTRA_MAP = st.dictionaries(
    st.sampled_from(["args", "command", "livenessProbe", "imagePullPolicy", "tty"]), _JSON, max_size=3
)


@st.composite
def pod_manifests(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True))
    containers = [{"name": n, "image": draw(st.sampled_from(["", "img"])), **draw(_EXTRA_MAP)} for n in names]
    spec = {
        "containers": containers,
        **draw(st.dictionaries(st.sampled_from(["dnsPolicy", "volumes", "hostIPC"]), _JSON, max_size=2)),
    }
    meta = {"name": "p", "uid": UID, "labels": draw(st.dictionaries(_KEYS, st.text("xy", max_size=2), max_size=2))}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": spec,
        **draw(st.dictionaries(st.sampled_from(["status", "zzz"]), _JSON, max_size=1)),
    }


def _check(written: Any, stored: Any, merged: Any, path: str) -> None:
    """``merged`` is ``stored`` where ``stored`` has a value and ``written`` elsewhere."""
    if isinstance(written, dict) and isinstance(stored, dict):
        for key, value in written.items():
            if path == "" and key == "status":
                continue
            if key in stored:
                _check(value, stored[key], merged[key], f"{path}.{key}")
            else:
                assert merged[key] == value, f"{path}.{key}"
    elif isinstance(written, list) and isinstance(stored, list) and path.endswith("containers"):
        by_name = {c["name"]: c for c in merged}
        for item in written:
            have = next(c for c in stored if c["name"] == item["name"])
            _check(item, have, by_name[item["name"]], f"{path}[{item['name']}]")
    else:
        assert merged == stored, path


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(written=pod_manifests(), reverse=st.booleans())
def test_merge_after_remember_gives_back_every_written_field_the_emulator_does_not_set(
    written: dict[str, Any], reverse: bool
) -> None:
    extras = UnmodelledFields()
    try:
        stored = stored_of(written)
    except msgspec.ValidationError:
        return
    stored.setdefault("status", {})
    extras.remember(UID, copy.deepcopy(written), stored)
    if reverse:  # a controller write that reorders the containers
        stored["spec"]["containers"] = stored["spec"]["containers"][::-1]
    merged = extras.merge(stored)
    _check(written, stored, merged, "")
    assert "status" not in written or merged["status"] == stored["status"]


def test_wants_tells_a_fast_encoder_which_structs_need_the_dict_path() -> None:
    extras = UnmodelledFields()
    written = pod([dict(WEB)])
    struct = convert(written, Pod)
    plain = convert(pod([{"name": "web", "image": "nginx"}]) | {"metadata": {"name": "q", "uid": "u-9"}}, Pod)
    assert not extras.wants(struct)
    extras.remember(UID, written, to_builtins(struct))
    assert extras.wants(struct)
    assert not extras.wants(plain)
    rs = {"kind": "ReplicaSet", "metadata": {"uid": "rs"}, "spec": {"template": {"spec": {"containers": [dict(WEB)]}}}}
    rs_stored = {"kind": "ReplicaSet", "metadata": {"uid": "rs"}, "spec": {"template": {"spec": {}}}}
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "uid": "rs", "controller": True}
    child = convert(
        pod([{"name": "web", "image": "nginx"}]) | {"metadata": {"uid": "c", "ownerReferences": [ref]}}, Pod
    )
    assert not extras.wants(child)
    extras.remember("rs", rs, rs_stored)
    assert extras.wants(child)
    extras.forget("rs")
    assert extras.wants(child), "a deleted owner's template stays resolvable for its children"
    for i in range(RETIRED_OWNERS):
        extras.remember(f"other-{i}", rs, rs_stored)
        extras.forget(f"other-{i}")
    assert not extras.wants(child), "retired owners are bounded"


def test_merge_table_merges_each_row_object() -> None:
    extras = UnmodelledFields()
    written = pod([dict(WEB)])
    stored = stored_of(written)
    extras.remember(UID, written, stored)
    table: dict[str, Any] = {"kind": "Table", "rows": [{"cells": ["p"], "object": stored}, {"cells": ["q"]}]}
    assert extras.merge_table(table) is table
    assert table["rows"][0]["object"]["spec"]["containers"][0]["args"] == WEB["args"]
    assert "object" not in table["rows"][1]


def test_preview_grafts_without_remembering() -> None:
    extras = UnmodelledFields()
    written = pod([dict(WEB)])
    stored = stored_of(written)
    out = extras.preview(written, stored)
    assert out["spec"]["containers"][0]["args"] == WEB["args"]
    assert "args" not in stored["spec"]["containers"][0]
    assert not extras.has(UID)


@st.composite
def deployment_manifests(draw: st.DrawFn) -> dict[str, Any]:
    pod_manifest = draw(pod_manifests())
    template = {"metadata": {"labels": {"app": "x"}}, "spec": pod_manifest["spec"]}
    spec = {
        "replicas": draw(st.integers(0, 3)),
        "selector": {"matchLabels": {"app": "x"}},
        "template": template,
        **draw(st.dictionaries(st.sampled_from(["progressDeadlineSeconds", "zzz"]), _JSON, max_size=1)),
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "uid": UID}, "spec": spec}


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(written=deployment_manifests())
def test_a_deployment_round_trip_gives_back_its_template_fields(written: dict[str, Any]) -> None:
    extras = UnmodelledFields()
    try:
        stored = stored_of(written, Deployment)
    except msgspec.ValidationError:
        return
    extras.remember(UID, copy.deepcopy(written), stored)
    _check(written, stored, extras.merge(stored), "")
