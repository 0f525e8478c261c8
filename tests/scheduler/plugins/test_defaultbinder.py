"""DefaultBinder: one Binding per pod through the profile's client; API errors become Error."""

from __future__ import annotations

from typing import Any

import pytest

from agents.scheduler.framework.interface import BindPlugin
from agents.scheduler.framework.types import Code, CycleState
from agents.scheduler.plugins.defaultbinder import NAME, DefaultBinder
from emulator.base.api.errors import ApiError, Conflict, NotFound
from tests import builders

POD = builders.pod("web-1", namespace="prod", uid="u-1", image="")


class FakeClient:
    def __init__(self, error: ApiError | None = None) -> None:
        self.calls: list[tuple[str, str, str, str]] = []
        self.error = error

    async def bind(self, namespace: str, name: str, node: str, *, uid: str = "") -> Any:
        self.calls.append((namespace, name, node, uid))
        if self.error is not None:
            raise self.error
        return None


class FakeHandle:
    def __init__(self, client: FakeClient | None) -> None:
        self.client = client


@pytest.mark.asyncio
async def test_bind_posts_a_binding() -> None:
    client = FakeClient()
    pl = DefaultBinder(None, FakeHandle(client))  # type: ignore[arg-type]
    assert isinstance(pl, BindPlugin)
    assert pl.name == NAME == "DefaultBinder"
    status = await pl.bind(CycleState(), POD, "node-7")
    assert status.is_success()
    assert client.calls == [("prod", "web-1", "node-7", "u-1")]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "error",
    [
        pytest.param(NotFound.of("Pod", "web-1"), id="pod-gone"),
        pytest.param(Conflict('pod web-1 is already assigned to node "node-2"'), id="already-bound"),
    ],
)
async def test_api_error_becomes_error_status(error: ApiError) -> None:
    client = FakeClient(error)
    status = await DefaultBinder(None, FakeHandle(client)).bind(CycleState(), POD, "node-7")  # type: ignore[arg-type]
    assert (status.code, status.reasons) == (Code.Error, (error.message,))
    assert len(client.calls) == 1


@pytest.mark.asyncio
async def test_no_client() -> None:
    status = await DefaultBinder(None, FakeHandle(None)).bind(CycleState(), POD, "n")  # type: ignore[arg-type]
    assert status.code is Code.Error
