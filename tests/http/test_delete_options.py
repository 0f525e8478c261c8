"""``DELETE`` checks its options before it reads the object, as upstream's ``DeleteResource``
and ``DeleteCollection`` handlers (kubernetes v1.34
``staging/src/k8s.io/apiserver/pkg/endpoints/handlers/delete.go``: decode, then
``ValidateDeleteOptions``, then the store's ``Delete``): a body or a ``gracePeriodSeconds``
that does not decode is 400 ``BadRequest``; ``orphanDependents`` with ``propagationPolicy``, an
unknown ``propagationPolicy`` or ``dryRun`` are 422 ``Invalid``; for an absent object too (not
404), for a real and a dry-run delete alike, and nothing is written."""

from __future__ import annotations

from typing import Any

import pytest

from tests.http.server_support import new_api, serving

pytestmark = [pytest.mark.asyncio, pytest.mark.real_time]

GONE = "/api/v1/namespaces/default/pods/gone"
POD = "/api/v1/namespaces/default/pods/p0"
BOTH_SET = (
    'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": '
    "orphanDependents and deletionPropagation cannot be both set"
)

CASES = [
    pytest.param(None, "propagationPolicy=Sideways", b"", 422, "Invalid", id="policy-in-query"),
    pytest.param({"propagationPolicy": "Sideways"}, "", b"", 422, "Invalid", id="policy-in-body"),
    pytest.param({"orphanDependents": True, "propagationPolicy": "Background"}, "", b"", 422, "Invalid", id="both-set"),
    pytest.param({"orphanDependents": False}, "propagationPolicy=Orphan", b"", 422, "Invalid", id="both-set-query"),
    pytest.param(None, "dryRun=Bogus", b"", 422, "Invalid", id="dry-run-value"),
    pytest.param(None, "gracePeriodSeconds=soon", b"", 400, "BadRequest", id="grace-in-query"),
    pytest.param({"gracePeriodSeconds": "soon"}, "", b"", 400, "BadRequest", id="grace-in-body"),
    pytest.param(None, "", b"{not json", 400, "BadRequest", id="undecodable-body"),
]


@pytest.mark.parametrize("dry", [False, True], ids=["real", "dry-run"])
@pytest.mark.parametrize(("body", "query", "raw", "code", "reason"), CASES)
async def test_delete_options_are_checked_before_the_object_is_read(
    body: Any, query: str, raw: bytes, code: int, reason: str, dry: bool
) -> None:
    async with serving() as s:
        before = s.api.revision
        params = "&".join(p for p in (query, "dryRun=All" if dry and "dryRun" not in query else "") if p)
        suffix = "?" + params if params else ""
        headers = {"Content-Type": "application/json"} if raw else None
        for path in (GONE, POD):
            got, answer = await s.call("DELETE", path + suffix, body, raw=raw, headers=headers)
            assert (got, answer["reason"]) == (code, reason), answer
        assert s.api.revision == before
        assert s.api.get("Pod", "p0", "default").metadata.deletion_timestamp is None


async def test_both_policies_set_say_so() -> None:
    async with serving() as s:
        got, answer = await s.call("DELETE", GONE, {"orphanDependents": True, "propagationPolicy": "Background"})
        assert (got, answer["message"]) == (422, BOTH_SET)
        assert answer["details"]["causes"][0]["field"] == "propagationPolicy"
        got, answer = await s.call("DELETE", GONE, {"orphanDependents": True, "propagationPolicy": "Sideways"})
        assert got == 422
        assert answer["message"].startswith('DeleteOptions.meta.k8s.io "" is invalid: [propagationPolicy: Invalid')
        assert 'propagationPolicy: Unsupported value: "Sideways"' in answer["message"]


async def test_orphan_dependents_alone_still_sets_the_policy() -> None:
    async with serving() as s:
        got, answer = await s.call("DELETE", POD, {"orphanDependents": False})
        assert (got, answer["metadata"]["name"]) == (200, "p0")
        got, answer = await s.call("DELETE", GONE, {"orphanDependents": False})
        assert (got, answer["reason"]) == (404, "NotFound")


@pytest.mark.parametrize("dry", [False, True], ids=["real", "dry-run"])
async def test_deletecollection_checks_its_options_before_listing(dry: bool) -> None:
    async with serving(new_api(pods=4)) as s:
        before = s.api.revision
        path = "/api/v1/namespaces/default/pods?propagationPolicy=Sideways" + ("&dryRun=All" if dry else "")
        got, answer = await s.call("DELETE", path)
        assert (got, answer["reason"]) == (422, "Invalid")
        assert (s.api.revision, len(s.api.list("Pod")[0])) == (before, 4)
