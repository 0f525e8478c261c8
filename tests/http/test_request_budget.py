"""The per-request work budget (issue 24): a request whose merge, apply or JSON patch work goes
past ``HttpSettings.request_budget`` is stopped with upstream's 504 ``Timeout`` Status and
nothing is stored. The budget's clock is injected (a counter), so nothing waits on wall time."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from emulator.base.http import budget
from tests.http.server_support import serving

pytestmark = [pytest.mark.real_time]  # a loopback server; the budget clock is injected

PODS = "/api/v1/namespaces/default/pods"
SMP = {"Content-Type": "application/strategic-merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
MESSAGE = "Timeout: request did not complete within requested timeout - context deadline exceeded"


def _ticking() -> Callable[[], float]:
    """A clock that moves one second each time it is read."""
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    return clock


def _containers(n: int, image: str) -> list[dict[str, Any]]:
    return [{"name": f"c{i}", "image": image} for i in range(n)]


def _huge(n: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"}, "spec": {"containers": _containers(n, "a")}}


@pytest.mark.asyncio
@pytest.mark.parametrize("verb", ["smp", "apply", "json-patch"])
async def test_work_past_the_budget_is_504_timeout_and_nothing_is_stored(verb: str) -> None:
    async with serving(request_budget=1.5, budget_clock=_ticking()) as s:
        code, _ = await s.call("POST", PODS, _huge(1))
        assert code == 201
        before = s.api.revision
        if verb == "smp":
            body, headers, path = {"spec": {"containers": _containers(2000, "b")}}, SMP, f"{PODS}/big"
        elif verb == "apply":
            body, headers, path = _huge(2000), APPLY, f"{PODS}/big?fieldManager=m"
        else:
            body = [{"op": "add", "path": f"/metadata/labels/l{i}", "value": "x"} for i in range(2000)]
            body.insert(0, {"op": "add", "path": "/metadata/labels", "value": {}})
            headers, path = JSON_PATCH, f"{PODS}/big"
        code, status = await s.call("PATCH", path, raw=json.dumps(body).encode(), headers=headers)
        assert (code, status["reason"], status["message"]) == (504, "Timeout", MESSAGE), status
        assert (status["kind"], status["status"], status["code"]) == ("Status", "Failure", 504)
        assert s.api.revision == before
        code, got = await s.call("GET", f"{PODS}/big")
        assert [c["image"] for c in got["spec"]["containers"]] == ["a"]


@pytest.mark.asyncio
async def test_small_requests_never_read_the_budget_clock() -> None:
    async with serving(request_budget=0.5, budget_clock=_ticking()) as s:
        body = {"spec": {"containers": [{"name": "c", "image": "b"}]}}
        code, got = await s.call("PATCH", f"{PODS}/p0", raw=json.dumps(body).encode(), headers=SMP)
        assert code == 200, got


@pytest.mark.asyncio
async def test_the_default_budget_lets_a_large_ordinary_patch_through() -> None:
    async with serving() as s:
        code, _ = await s.call("POST", PODS, _huge(4000))
        assert code == 201
        body = json.dumps({"spec": {"containers": _containers(4000, "b")}}).encode()
        code, got = await s.call("PATCH", f"{PODS}/big", raw=body, headers=SMP)
        assert code == 200, got
        assert [c["image"] for c in got["spec"]["containers"]] == ["b"] * 4000


def test_spend_outside_a_request_is_free() -> None:
    for _ in range(3 * budget.CHECK_EVERY):
        budget.spend()
    with budget.limited(0.0, _ticking()):
        budget.spend(budget.CHECK_EVERY - 1)  # the clock is not read yet
        with pytest.raises(budget.RequestTimeout):
            budget.spend()
