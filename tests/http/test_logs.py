"""``pods/<name>/log`` (``emulator.base.http.logs``): an empty log, or upstream's 400 first."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from emulator.base.api.core import ContainerState, ContainerStateRunning, ContainerStateWaiting, ContainerStatus, Pod
from emulator.base.api.errors import BadRequest
from emulator.base.http.logs import pod_log, refuse_stream
from tests.builders import container, pod
from tests.http.server_support import new_api, serving


def _with(p: Pod, *statuses: ContainerStatus) -> Pod:
    return replace(p, status=replace(p.status, container_statuses=list(statuses)))


RUNNING = ContainerState(running=ContainerStateRunning(started_at="2026-01-01T00:00:01Z"))
WAITING = ContainerState(waiting=ContainerStateWaiting(reason="ContainerCreating"))
ONE = _with(pod("web", node="n1"), ContainerStatus(name="c", state=RUNNING))
TWO = _with(
    pod("duo", node="n1", containers=[container("a"), container("b")]),
    ContainerStatus(name="a", state=RUNNING),
    ContainerStatus(name="b", state=RUNNING),
)


@pytest.mark.parametrize(
    ("p", "query"),
    [
        pytest.param(ONE, {}, id="the-only-container"),
        pytest.param(ONE, {"container": "c", "follow": "true", "tailLines": "10"}, id="named"),
        pytest.param(TWO, {"container": "b"}, id="one-of-two"),
    ],
)
def test_a_started_container_has_an_empty_log(p: Pod, query: dict[str, str]) -> None:
    assert pod_log(p, query) == b""


@pytest.mark.parametrize(
    ("p", "query", "message"),
    [
        pytest.param(
            TWO, {}, r"^a container name must be specified for pod duo, choose one of: \[a b\]$", id="which-container"
        ),
        pytest.param(ONE, {"container": "x"}, "^container x is not valid for pod web$", id="unknown-container"),
        pytest.param(pod("web"), {}, "^pod web does not have a host assigned$", id="unbound"),
        pytest.param(
            _with(pod("web", node="n1"), ContainerStatus(name="c", state=WAITING)),
            {},
            '^container "c" in pod "web" is waiting to start: ContainerCreating$',
            id="waiting",
        ),
        pytest.param(
            pod("web", node="n1"),
            {},
            '^container "c" in pod "web" is waiting to start: ContainerCreating$',
            id="no-status",
        ),
        pytest.param(
            ONE, {"previous": "true"}, '^previous terminated container "c" in pod "web" not found$', id="no-previous"
        ),
    ],
)
def test_refused_as_upstream(p: Pod, query: dict[str, str], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        pod_log(p, query)


@pytest.mark.asyncio
@pytest.mark.real_time
async def test_log_over_http() -> None:
    api = new_api(pods=0)
    api.create(pod("web"))
    api.create(replace(ONE, metadata=replace(ONE.metadata, name="running")), restore=True)
    async with serving(api) as s:
        assert await s.call("GET", "/api/v1/namespaces/default/pods/running/log?container=c") == (200, None)
        code, out = await s.call("GET", "/api/v1/namespaces/default/pods/web/log")
        assert (code, out["reason"], out["message"]) == (400, "BadRequest", "pod web does not have a host assigned")
        code, out = await s.call("GET", "/api/v1/namespaces/default/pods/nope/log")
        assert (code, out["reason"]) == (404, "NotFound")
        code, out = await s.call("POST", "/api/v1/namespaces/default/pods/running/exec?command=ls")
        assert (code, out["reason"]) == (400, "BadRequest")


UNSUPPORTED = "is not supported: the emulated kubelet on n1 runs no processes"


@pytest.mark.parametrize(
    ("p", "sub", "query", "message"),
    [
        pytest.param(
            ONE,
            "exec",
            {"command": "ls"},
            "^exec is not supported: the emulated kubelet on n1 runs no processes$",
            id="exec",
        ),
        pytest.param(
            ONE, "attach", {}, "^attach is not supported: the emulated kubelet on n1 runs no processes$", id="attach"
        ),
        pytest.param(
            ONE,
            "portforward",
            {"ports": "80"},
            f"^port forwarding {UNSUPPORTED}$",
            id="portforward",
        ),
        pytest.param(TWO, "exec", {"container": "x"}, "^container x is not valid for pod duo$", id="unknown-container"),
        pytest.param(pod("web"), "exec", {}, "^pod web does not have a host assigned$", id="unbound"),
    ],
)
def test_streams_are_refused(p: Pod, sub: str, query: dict[str, str], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        refuse_stream(p, sub, query)
