"""``/healthz``, ``/livez``, ``/readyz`` (``emulator.base.http.health``), as upstream answers them."""

from __future__ import annotations

import pytest

from emulator.base.api.errors import NotFound
from emulator.base.http.health import health
from emulator.base.http.routing import Discovery, route
from tests.http.server_support import new_api, serving


@pytest.mark.parametrize(
    ("endpoint", "check", "query", "want"),
    [
        pytest.param("healthz", "", {}, b"ok", id="healthz"),
        pytest.param("readyz", "", {}, b"ok", id="readyz"),
        pytest.param("livez", "ping", {}, b"ok", id="one-check"),
        pytest.param(
            "livez", "", {"verbose": ""}, b"[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n", id="verbose"
        ),
        pytest.param(
            "readyz",
            "",
            {"verbose": "", "exclude": "etcd"},
            b"[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]etcd-readiness ok\n[+]informer-sync ok\n"
            b"[+]shutdown ok\nreadyz check passed\n",
            id="verbose-exclude",
        ),
        pytest.param("livez", "nope", {}, None, id="unknown-check"),
        pytest.param("healthz", "shutdown", {}, None, id="check-of-another-endpoint"),
    ],
)
def test_health(endpoint: str, check: str, query: dict[str, str], want: bytes | None) -> None:
    assert health(endpoint, check, query) == want


@pytest.mark.parametrize(
    ("path", "want"),
    [
        pytest.param("/healthz", Discovery("health", group="healthz"), id="endpoint"),
        pytest.param("/readyz/etcd", Discovery("health", group="readyz", path="etcd"), id="check"),
    ],
)
def test_route(path: str, want: Discovery) -> None:
    assert route(path) == want


def test_route_too_deep() -> None:
    with pytest.raises(NotFound, match=r"^the server could not find the requested resource$"):
        route("/livez/ping/more")


@pytest.mark.asyncio
@pytest.mark.real_time
async def test_health_over_http() -> None:
    async with serving(new_api(pods=0)) as s:
        async with s.client.get("/readyz") as resp:
            assert (resp.status, resp.content_type, await resp.read()) == (200, "text/plain", b"ok")
        code, out = await s.call("GET", "/livez/nope")
        assert (code, out["reason"]) == (404, "NotFound")
