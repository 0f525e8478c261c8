"""Issue 24 #11: list and watch query options parsed as strictly as kube-apiserver's."""

from __future__ import annotations

import base64

import msgspec
import pytest

from emulator.base.api.errors import ApiError, BadRequest, Invalid, Timeout
from emulator.base.http.query import check_list_version, encode_continue, page, parse_list_options
from tests.builders import pod
from tests.http.server_support import new_api, serving


def _token(rv: int) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode({"rv": rv, "ns": "default", "name": "p0"})).decode()


@pytest.mark.parametrize(
    ("query", "message"),
    [
        # Python's int() takes these; Go's strconv.ParseInt/ParseUint do not.
        pytest.param({"limit": "1_0"}, 'invalid limit "1_0"', id="limit-underscore"),
        pytest.param({"limit": " 10"}, 'invalid limit " 10"', id="limit-space"),
        pytest.param({"limit": str(1 << 63)}, "invalid limit", id="limit-over-int64"),
        pytest.param({"timeoutSeconds": "1_0"}, 'invalid timeoutSeconds "1_0"', id="timeout-underscore"),
        pytest.param({"resourceVersion": "1_0"}, 'invalid resource version "1_0"', id="rv-underscore"),
        pytest.param({"resourceVersion": "+5"}, 'invalid resource version "\\+5"', id="rv-plus"),
        pytest.param({"resourceVersion": "٣"}, "invalid resource version", id="rv-non-ascii-digit"),
        pytest.param({"resourceVersion": str(1 << 64)}, "invalid resource version", id="rv-over-uint64"),
        pytest.param({"continue": _token(0)}, "incorrect encoded start resourceVersion", id="token-rv-zero"),
        pytest.param({"continue": _token(1 << 63)}, "continue key is not valid", id="token-rv-over-int64"),
    ],
)
def test_query_values_go_refuses_are_refused(query: dict[str, str], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        parse_list_options("Pod", query)


@pytest.mark.parametrize(
    ("query", "current", "error", "message"),
    [
        pytest.param(
            {"continue": _token(3), "resourceVersion": "3"},
            5,
            BadRequest,
            "^specifying resource version is not allowed when using continue$",
            id="continue-with-rv",
        ),
        pytest.param(
            {"continue": _token(3), "resourceVersion": "3", "resourceVersionMatch": "NotOlderThan"},
            5,
            Invalid,
            "resourceVersionMatch is forbidden when continue is provided",
            id="continue-with-match",
        ),
        pytest.param(
            {"sendInitialEvents": "true"},
            5,
            Invalid,
            r'^ListOptions.meta.k8s.io "" is invalid: '
            r"sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list$",
            id="send-initial-events-on-a-list",
        ),
        pytest.param({"sendInitialEvents": "false"}, 5, Invalid, "forbidden for list", id="send-initial-events-false"),
        pytest.param(
            {"continue": _token(1 << 40)},
            5,
            Timeout,
            f"^Too large resource version: {1 << 40}, current: 5$",
            id="token-from-the-future",
        ),
    ],
)
def test_list_options_upstream_refuses(
    query: dict[str, str], current: int, error: type[ApiError], message: str
) -> None:
    with pytest.raises(error, match=message):
        check_list_version(parse_list_options("Pod", query), current)


def test_continue_with_resource_version_zero_is_served() -> None:
    check_list_version(parse_list_options("Pod", {"continue": _token(3), "resourceVersion": "0"}), 5)


def test_a_negative_token_revision_is_served_at_the_current_one_not_echoed() -> None:
    opts = parse_list_options("Pod", {"continue": _token(-7)})
    check_list_version(opts, 5)
    items = [pod("p0"), pod("p1")]
    served, _, _, rv = page(items, opts, 5)
    assert rv == 5
    assert [o.metadata.name for o in served] == ["p1"]
    # A real token keeps its revision (the list's, continued).
    served, _, _, rv = page(items, parse_list_options("Pod", {"continue": encode_continue(4, "", "")}), 5)
    assert rv == 4


@pytest.mark.parametrize(
    ("text", "labels", "want"),
    [
        pytest.param("a>5", {"a": "6"}, True, id="gt"),
        pytest.param("a>5", {"a": "5"}, False, id="gt-equal"),
        pytest.param("a<5", {"a": "-3"}, True, id="lt-negative"),
        pytest.param("a>5", {}, False, id="gt-absent"),
        pytest.param("a>5", {"a": "x"}, False, id="gt-not-a-number"),
        pytest.param("a>5", {"a": "1_0"}, False, id="gt-label-underscore"),
        pytest.param("a>5,b=x", {"a": "9", "b": "x"}, True, id="with-equals"),
        pytest.param("a>5,b=x", {"a": "9", "b": "y"}, False, id="with-equals-unmet"),
        pytest.param("a<10,a>5", {"a": "7"}, True, id="range"),
    ],
)
def test_label_selector_gt_lt_on_lists(text: str, labels: dict[str, str], want: bool) -> None:
    opts = parse_list_options("Pod", {"labelSelector": text})
    assert opts.label_match is not None
    assert opts.label_match(labels) is want


def test_label_selector_gt_needs_an_integer() -> None:
    with pytest.raises(BadRequest, match="for 'Gt', 'Lt' operators, the value must be an integer"):
        parse_list_options("Pod", {"labelSelector": "a>x"})


@pytest.mark.asyncio
@pytest.mark.real_time
async def test_served_list_answers() -> None:
    async with serving(new_api(pods=2)) as s:
        for query, want in [
            ("limit=1_0", 400),
            ("resourceVersion=1_0", 400),
            (f"continue={_token(-1)}&resourceVersion=1", 400),
            ("sendInitialEvents=true", 422),
            (f"continue={_token(1 << 40)}", 504),
        ]:
            code, body = await s.call("GET", f"/api/v1/pods?{query}")
            assert (query, code) == (query, want), body
        code, body = await s.call("GET", "/api/v1/pods?labelSelector=a%3E5")
        assert code == 200
        assert body["items"] == []
        code, body = await s.call("GET", f"/api/v1/pods?limit=1&continue={_token(-1)}")
        assert code == 200
        assert body["metadata"]["resourceVersion"] == str(s.api.revision)
