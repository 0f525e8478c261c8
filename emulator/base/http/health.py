"""``/healthz``, ``/livez``, ``/readyz``: the API server's health endpoints, as upstream words them.

The emulator is healthy whenever it answers: its store is in memory and its agents run on the
same event loop, so every check passes. What is upstream's is the shape — ``ok`` in plain text,
``?verbose`` listing each check as ``[+]<name> ok`` and a last line ``<endpoint> check
passed``, one check by its own path (``/livez/ping``), and the check names (the subset that
means something here: no post-start hooks, no aggregator). It does not own routing nor auth.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["CHECKS", "CONTENT_TYPE", "health"]

CONTENT_TYPE: Final = "text/plain"
_LIVE: Final = ("ping", "log", "etcd")
CHECKS: Final[dict[str, tuple[str, ...]]] = {
    "healthz": _LIVE,
    "livez": _LIVE,
    "readyz": (*_LIVE, "etcd-readiness", "informer-sync", "shutdown"),
}


def health(endpoint: str, check: str, query: Mapping[str, str]) -> bytes | None:
    """The body of ``/<endpoint>[/<check>]`` (all pass), or None when there is no such
    endpoint or check (a 404)."""
    names = CHECKS.get(endpoint)
    if names is None or (check and check not in names):
        return None
    if check or "verbose" not in query:
        return b"ok"
    excluded = set(query.get("exclude", "").split(",")) if "exclude" in query else set()
    lines = [f"[+]{name} {'excluded: ok' if name in excluded else 'ok'}" for name in names]
    return ("\n".join([*lines, f"{endpoint} check passed", ""])).encode()
