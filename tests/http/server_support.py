"""What the ``test_server_*`` modules share: an ``ApiServer`` with a small cluster and an
``HttpApi`` in front of it behind aiohttp's ``TestClient`` (a real socket on 127.0.0.1)."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from aiohttp.test_utils import TestClient, TestServer

from emulator.base.apiserver.server import ApiServer, ServerSettings
from emulator.base.http.apply import FieldManagers
from emulator.base.http.server import HttpApi, HttpSettings
from emulator.base.runtime.clock import StoppedClock
from tests.builders import namespace, node, pod

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
KUBECTL = "kubectl/v1.32.4 (linux/amd64) kubernetes/abcdef"


def new_api(*, pods: int = 2, settings: ServerSettings | None = None) -> ApiServer:
    api = ApiServer(StoppedClock(), random.Random(0), settings)
    for ns in ("default", "kube-system"):
        api.create(namespace(ns))
    for i in (1, 2):
        api.create(node(f"n{i}", labels={"zone": f"z{i}"}))
    for i in range(pods):
        api.create(pod(f"p{i}", labels={"app": "web" if i % 2 == 0 else "db"}))
    return api


@dataclass
class Served:
    client: TestClient[Any, Any]
    api: ApiServer
    http: HttpApi

    async def call(
        self, method: str, path: str, body: Any = None, *, headers: dict[str, str] | None = None, raw: bytes = b""
    ) -> tuple[int, Any]:
        data = raw or (json.dumps(body).encode() if body is not None else None)
        hdrs = {"User-Agent": KUBECTL}
        if data is not None and not raw:
            hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        skip = () if "Content-Type" in hdrs else ("Content-Type",)  # as the Python client: none
        async with self.client.request(method, path, data=data, headers=hdrs, skip_auto_headers=skip) as resp:
            text = await resp.read()
            return resp.status, json.loads(text) if text else None


@asynccontextmanager
async def serving(
    api: ApiServer | None = None, *, managers: FieldManagers | None = None, **settings: Any
) -> AsyncIterator[Served]:
    api = api or new_api()
    http = HttpApi(api, HttpSettings(**settings), managers=managers)
    async with TestClient(TestServer(http.app)) as client:
        yield Served(client, api, http)
