"""The HTTP door's pure parts, without sockets: routing, list options, Status bodies."""

from __future__ import annotations

import msgspec
import pytest

from emulator.app.scenario.event_trace import fast_trace_line
from emulator.base.api.core import Namespace
from emulator.base.api.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Gone,
    Invalid,
    NotAcceptable,
    NotFound,
    Timeout,
    TooManyRequests,
)
from emulator.base.api.meta import ObjectMeta
from emulator.base.apiserver.server import WriteRecord
from emulator.base.http.apply import ApplyConflict
from emulator.base.http.negotiate import check_accept
from emulator.base.http.query import (
    check_list_version,
    decode_continue,
    encode_continue,
    parse_field_selector,
    parse_list_options,
)
from emulator.base.http.routing import Discovery, Target, route
from emulator.base.http.server import agent_of, kubernetes_service, wants_table
from emulator.base.http.status import cause_type, error_status
from tests.references import trace_line


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param("/api/v1/pods", ("pods", None, "", ""), id="all-namespaces"),
        pytest.param("/api/v1/namespaces/default/pods", ("pods", "default", "", ""), id="namespaced-list"),
        pytest.param("/api/v1/namespaces/d/pods/x/status", ("pods", "d", "x", "status"), id="status"),
        pytest.param("/api/v1/namespaces/d/pods/x/binding", ("pods", "d", "x", "binding"), id="binding"),
        pytest.param("/api/v1/namespaces/d/bindings", ("bindings", "d", "", ""), id="bindings"),
        pytest.param("/api/v1/namespaces/x", ("namespaces", None, "x", ""), id="namespace-object"),
        pytest.param("/api/v1/namespaces/x/status", ("namespaces", None, "x", "status"), id="namespace-status"),
        pytest.param("/api/v1/nodes/n1", ("nodes", None, "n1", ""), id="cluster-scoped"),
        pytest.param("/apis/apps/v1/namespaces/d/deployments/a/scale", ("deployments", "d", "a", "scale"), id="scale"),
        pytest.param("/apis/policy/v1/poddisruptionbudgets", ("poddisruptionbudgets", None, "", ""), id="group"),
    ],
)
def test_route_targets(path: str, want: tuple[str, str | None, str, str]) -> None:
    t = route(path)
    assert isinstance(t, Target)
    assert (t.resource.name, t.namespace, t.name, t.sub) == want


def test_route_legacy_watch_prefix() -> None:
    t = route("/api/v1/watch/namespaces/d/pods")
    assert isinstance(t, Target)
    assert t.watch
    assert t.namespace == "d"


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param("/version", Discovery("version"), id="version"),
        pytest.param("/api", Discovery("api"), id="api"),
        pytest.param("/apis", Discovery("apis"), id="apis"),
        pytest.param("/apis/apps", Discovery("group", group="apps"), id="group"),
        pytest.param("/api/v1", Discovery("resources", version="v1"), id="core-resources"),
        pytest.param("/apis/apps/v1", Discovery("resources", group="apps", version="v1"), id="resources"),
        pytest.param("/openapi/v3/api/v1", Discovery("openapi_doc", path="api/v1"), id="openapi-doc"),
    ],
)
def test_route_discovery(path: str, want: Discovery) -> None:
    assert route(path) == want


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/", id="root"),
        pytest.param("/api/v2/pods", id="unknown-version"),
        pytest.param("/api/v1/widgets", id="unknown-resource"),
        pytest.param("/api/v1/pods/x", id="namespaced-name-without-namespace"),
        pytest.param("/api/v1/namespaces/d/nodes", id="cluster-scoped-in-namespace"),
        pytest.param("/api/v1/namespaces/d/pods/x/widgets", id="unknown-subresource"),
        pytest.param("/api/v1/nodes/n1/scale", id="scale-of-node"),
        pytest.param("/swaggerapi/x", id="elsewhere"),
    ],
)
def test_route_not_found(path: str) -> None:
    with pytest.raises(NotFound, match=r"^the server could not find the requested resource$"):
        route(path)


@pytest.mark.parametrize(
    ("ua", "want"),
    [
        pytest.param("kubectl/v1.32.4 (linux/amd64) kubernetes/abc", "kubectl", id="kubectl"),
        pytest.param("OpenAPI-Generator/37.0.2/python", "OpenAPI-Generator", id="python"),
        pytest.param("", "http", id="none"),
    ],
)
def test_agent_of(ua: str, want: str) -> None:
    assert agent_of(ua) == want


@pytest.mark.parametrize(
    "accept",
    [
        pytest.param("", id="none"),
        pytest.param("application/json", id="json"),
        pytest.param("application/vnd.kubernetes.protobuf,application/json", id="protobuf-then-json"),
        pytest.param("application/json, */*", id="any"),
        pytest.param("application/json;as=Table;v=v1;g=meta.k8s.io", id="table"),
    ],
)
def test_accept_served(accept: str) -> None:
    check_accept(accept)


def test_accept_refused() -> None:
    served = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    with pytest.raises(NotAcceptable, match=rf"^only the following media types are accepted: {served}$"):
        check_accept("text/html, application/merge-patch+json")
    with pytest.raises(NotAcceptable, match=r"^only the following media types are accepted: application/json, appl"):
        check_accept("application/vnd.kubernetes.protobuf", protobuf=False)


def test_wants_table() -> None:
    assert wants_table("application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
    assert not wants_table("application/json")


@pytest.mark.parametrize(
    ("kind", "text", "want"),
    [
        pytest.param("Pod", "spec.nodeName=n1", [("spec.nodeName", "=", "n1")], id="eq"),
        pytest.param("Pod", "status.phase==Running", [("status.phase", "=", "Running")], id="double-eq"),
        pytest.param(
            "Pod",
            "spec.nodeName=n1,status.phase!=Succeeded",
            [("spec.nodeName", "=", "n1"), ("status.phase", "!=", "Succeeded")],
            id="and",
        ),
        pytest.param("Node", "spec.unschedulable=true", [("spec.unschedulable", "=", "true")], id="node"),
        pytest.param("Event", "involvedObject.kind=Node", [("involvedObject.kind", "=", "Node")], id="event"),
        pytest.param("Deployment", "metadata.namespace=d", [("metadata.namespace", "=", "d")], id="common"),
        pytest.param("Pod", "", [], id="empty"),
    ],
)
def test_field_selector(kind: str, text: str, want: list[tuple[str, str, str]]) -> None:
    assert [(r.label, r.op, r.value) for r in parse_field_selector(kind, text)] == want


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        pytest.param("Pod", "foo=bar", "^field label not supported: foo$", id="unknown"),
        pytest.param("Node", "spec.nodeName=x", "^field label not supported: spec.nodeName$", id="other-kinds"),
        pytest.param("Pod", "spec.nodeName", "can't understand 'spec.nodeName'", id="no-operator"),
    ],
)
def test_field_selector_refused(kind: str, text: str, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        parse_field_selector(kind, text)


def test_continue_token_round_trips() -> None:
    assert decode_continue(encode_continue(7, "default", "p1")) == (7, "default", "p1")
    with pytest.raises(BadRequest, match="continue key is not valid"):
        decode_continue("!!!")


@pytest.mark.parametrize(
    ("query", "current", "error", "message"),
    [
        pytest.param({"resourceVersion": "9"}, 5, Timeout, "^Too large resource version: 9, current: 5$", id="future"),
        pytest.param({"resourceVersion": "3", "resourceVersionMatch": "Exact"}, 5, Gone, "too old", id="exact-older"),
    ],
)
def test_list_version_refused(query: dict[str, str], current: int, error: type[ApiError], message: str) -> None:
    with pytest.raises(error, match=message):
        check_list_version(parse_list_options("Pod", query), current)


@pytest.mark.parametrize(
    "query",
    [
        pytest.param({}, id="unset"),
        pytest.param({"resourceVersion": "0"}, id="any"),
        pytest.param({"resourceVersion": "5", "resourceVersionMatch": "NotOlderThan"}, id="not-older"),
        pytest.param({"resourceVersion": "4"}, id="older"),
    ],
)
def test_list_version_served(query: dict[str, str]) -> None:
    check_list_version(parse_list_options("Pod", query), 5)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param({"labelSelector": "a in"}, "couldn't parse the selector", id="label-syntax"),
        pytest.param({"resourceVersionMatch": "Exact"}, "forbidden unless resourceVersion", id="match-alone"),
        pytest.param({"limit": "x"}, 'invalid limit "x"', id="limit"),
        pytest.param({"resourceVersion": "abc"}, 'invalid resource version "abc"', id="rv"),
    ],
)
def test_list_options_refused(query: dict[str, str], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        parse_list_options("Pod", query)


@pytest.mark.parametrize(
    ("err", "ctx", "want"),
    [
        pytest.param(
            NotFound('pods "x" not found'),
            {"name": "x", "resource": "pods"},
            {"reason": "NotFound", "code": 404, "details": {"name": "x", "kind": "pods"}},
            id="not-found",
        ),
        pytest.param(
            AlreadyExists('deployments.apps "d" already exists'),
            {"name": "d", "group": "apps", "resource": "deployments"},
            {"reason": "AlreadyExists", "code": 409, "details": {"name": "d", "group": "apps", "kind": "deployments"}},
            id="already-exists",
        ),
        pytest.param(
            Invalid.at("Pod", "x", "spec.containers[0].image", "Required value"),
            {"name": "x", "resource": "pods"},
            {
                "reason": "Invalid",
                "code": 422,
                "details": {
                    "name": "x",
                    "kind": "Pod",
                    "causes": [
                        {
                            "reason": "FieldValueRequired",
                            "message": "Required value",
                            "field": "spec.containers[0].image",
                        }
                    ],
                },
            },
            id="invalid",
        ),
        pytest.param(
            TooManyRequests("Cannot evict pod", causes=("The disruption budget b needs 1 healthy pods",)),
            {"name": "x", "resource": "pods"},
            {
                "reason": "TooManyRequests",
                "code": 429,
                "details": {
                    "causes": [
                        {"reason": "DisruptionBudget", "message": "The disruption budget b needs 1 healthy pods"}
                    ]
                },
            },
            id="disruption-budget",
        ),
        pytest.param(
            NotFound('namespaces "nope" not found'),
            {"name": "", "resource": "pods"},
            {"reason": "NotFound", "code": 404, "details": {"name": "nope", "kind": "namespaces"}},
            id="missing-namespace-on-create",
        ),
        pytest.param(
            ApplyConflict(
                'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas',
                [(".spec.replicas", 'conflict with "kubectl-client-side-apply" using apps/v1')],
            ),
            {"name": "web", "group": "apps", "resource": "deployments"},
            {
                "reason": "Conflict",
                "code": 409,
                "details": {
                    "causes": [
                        {
                            "reason": "FieldManagerConflict",
                            "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
                            "field": ".spec.replicas",
                        }
                    ],
                },
            },
            id="apply-conflict",
        ),
        pytest.param(Gone("too old resource version: 1 (5)"), {}, {"reason": "Expired", "code": 410}, id="expired"),
    ],
)
def test_error_status(err: ApiError, ctx: dict[str, str], want: dict[str, object]) -> None:
    body = error_status(err, **ctx)
    assert body["kind"] == "Status"
    assert body["status"] == "Failure"
    assert body["message"] == err.message
    assert {k: body.get(k) for k in want} == want
    if "details" not in want:
        assert "details" not in body


@pytest.mark.parametrize(
    ("detail", "want"),
    [
        pytest.param("Required value", "FieldValueRequired", id="required"),
        pytest.param('Invalid value: "x": bad', "FieldValueInvalid", id="invalid"),
        pytest.param('Unsupported value: "x"', "FieldValueNotSupported", id="unsupported"),
        pytest.param("Forbidden: no", "FieldValueForbidden", id="forbidden"),
        pytest.param("something else", "FieldValueInvalid", id="default"),
    ],
)
def test_cause_type(detail: str, want: str) -> None:
    assert cause_type(detail) == want


@pytest.mark.parametrize(
    ("agent", "want"),
    [
        pytest.param("kubectl", b',"agent":"kubectl"}', id="http-write"),
        pytest.param("", b'"name":"p"}', id="in-process-write-unchanged"),
    ],
)
def test_trace_lines_name_the_http_agent(agent: str, want: bytes) -> None:
    rec = WriteRecord(3, 1.5, "create", "Namespace", None, Namespace(metadata=ObjectMeta(name="p")), agent)
    fast = msgspec.json.encode(fast_trace_line(rec))
    assert fast == msgspec.json.encode(trace_line(rec))
    assert fast.endswith(want)


def test_kubernetes_service() -> None:
    svc = kubernetes_service(41234)
    assert (svc.metadata.namespace, svc.metadata.name, svc.spec.cluster_ip) == ("default", "kubernetes", "10.96.0.1")
    assert [(p.name, p.port, p.target_port) for p in svc.spec.ports] == [("https", 443, 41234)]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(r"metadata.name=a\,b", [("metadata.name", "=", "a,b")], id="escaped-comma"),
        pytest.param(r"metadata.name!=x\=y", [("metadata.name", "!=", "x=y")], id="escaped-equals"),
    ],
)
def test_field_selector_values_take_upstreams_escapes(text: str, want: list[tuple[str, str, str]]) -> None:
    assert [(r.label, r.op, r.value) for r in parse_field_selector("Pod", text)] == want


def test_field_selector_unescaped_equals_in_a_value_is_refused() -> None:
    with pytest.raises(BadRequest, match="unescaped character in value: ="):
        parse_field_selector("Pod", "metadata.name=a=b")


def test_an_invalid_status_names_the_bare_kind_with_its_group_beside_it() -> None:
    """Upstream's ``NewInvalid(GroupKind)``: ``details.kind`` is the Kind and ``details.group`` the
    group, so kubectl prints ``The Deployment "web" is invalid`` as against a real cluster; the
    message keeps the qualified kind."""
    err = Invalid.at("Deployment.apps", "web", "spec.replicas", "Invalid value: -1: must be greater than or equal to 0")
    status = error_status(err, name="web", resource="deployments")
    assert status["message"].startswith('Deployment.apps "web" is invalid: ')
    assert (status["details"]["kind"], status["details"]["group"]) == ("Deployment", "apps")
