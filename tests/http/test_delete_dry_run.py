"""``DELETE ...?dryRun=All`` through the HTTP door makes the real delete's checks (an invalid
``propagationPolicy``: 422 ``Invalid``; a uid or resourceVersion precondition that does not
hold: 409 ``Conflict``; an absent object: 404) and gives its answer (the pod marked as the
delete marks it, or a success ``Status`` for a kind that does not return the deleted object),
writing nothing. A real
delete answers the removed pod at the deletion's revision (``kubectl delete -o json`` prints
it)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.http.server_support import serving

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

PATH = "/api/v1/namespaces/default/pods/p0"


@pytest.mark.parametrize(
    ("body", "query", "code", "reason"),
    [
        pytest.param({"propagationPolicy": "Sideways"}, "", 422, "Invalid", id="policy-in-body"),
        pytest.param(None, "&propagationPolicy=Sideways", 422, "Invalid", id="policy-in-query"),
        pytest.param({"preconditions": {"uid": "other"}}, "", 409, "Conflict", id="uid"),
        pytest.param({"preconditions": {"resourceVersion": "1"}}, "", 409, "Conflict", id="resource-version"),
    ],
)
async def test_a_dry_run_delete_is_refused_as_the_delete(body: Any, query: str, code: int, reason: str) -> None:
    async with serving() as s:
        before = s.api.revision
        got, answer = await s.call("DELETE", PATH + "?dryRun=All" + query, body)
        assert (got, answer["reason"]) == (code, reason), answer
        real, real_answer = await s.call("DELETE", PATH + ("?" + query[1:] if query else ""), body)
        assert (real, real_answer) == (got, answer)  # the same refusal, message included
        assert s.api.revision == before
        got, answer = await s.call("DELETE", "/api/v1/namespaces/default/pods/gone?dryRun=All")
        assert (got, answer["reason"]) == (404, "NotFound")


async def test_a_dry_run_delete_answers_as_the_delete_and_writes_nothing() -> None:
    async with serving() as s:
        before = s.api.revision
        stored = s.api.get("Pod", "p0", "default")
        body = {"preconditions": {"uid": stored.metadata.uid, "resourceVersion": stored.metadata.resource_version}}
        code, pod = await s.call("DELETE", PATH + "?dryRun=All", body)
        assert code == 200
        assert (pod["kind"], pod["metadata"]["resourceVersion"]) == ("Pod", stored.metadata.resource_version)
        # marked as upstream's BeforeDelete marks a pod deleted at grace 0 (the pod is unbound)
        assert (pod["metadata"]["deletionTimestamp"], pod["metadata"]["deletionGracePeriodSeconds"]) == (
            s.api.clock.timestamp(),
            0,
        )
        code, status = await s.call("DELETE", "/api/v1/nodes/n1?dryRun=All")
        assert (code, status["kind"], status["status"], status["details"]["name"]) == (200, "Status", "Success", "n1")
        assert s.api.revision == before
        assert s.api.get("Pod", "p0", "default") is stored
        code, gone = await s.call("DELETE", PATH, body)
        assert code == 200
        assert gone["metadata"]["resourceVersion"] == str(s.api.revision) == str(before + 1)
