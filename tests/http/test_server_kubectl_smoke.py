"""The real kubectl against ``HttpApi`` (no ``serve`` command: the server runs in the test's
loop): discovery, Tables, label (merge patch), create from JSON, delete, a refused manifest,
and the drain-style protobuf DeleteOptions. The full session is ``test_kubectl_*``'s."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from emulator.base.http.server import HttpApi, HttpSettings
from tests.http.server_support import new_api

KUBECTL = Path("/usr/bin/kubectl")
pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.real_time,
    pytest.mark.skipif(not KUBECTL.exists(), reason="kubectl is not installed at /usr/bin/kubectl"),
]


@asynccontextmanager
async def kubectl_against(tmp: Path) -> AsyncIterator[tuple[HttpApi, list[str], dict[str, str]]]:
    http = HttpApi(new_api(), HttpSettings(port=0))
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    async with asyncio.TaskGroup() as tg:
        task = tg.create_task(http.serve(ready.set_result), name="http:serve")
        url = await ready
        config = tmp / "config"
        config.write_text(
            "apiVersion: v1\nkind: Config\n"
            f'clusters: [{{name: emu, cluster: {{server: "{url}"}}}}]\n'
            "users: [{name: u, user: {}}]\n"
            "contexts: [{name: emu, context: {cluster: emu, user: u}}]\ncurrent-context: emu\n"
        )
        env = {**os.environ, "HOME": str(tmp), "KUBECACHEDIR": str(tmp / "cache")}
        try:
            yield http, [str(KUBECTL), "--kubeconfig", str(config), "--request-timeout=20s"], env
        finally:
            task.cancel()


async def run(cmd: list[str], env: dict[str, str], *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        *args,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_kubectl_session(tmp_path: Path) -> None:
    async with kubectl_against(tmp_path) as (http, k, env):
        rc, out, err = await run(k, env, "get", "nodes")
        assert (rc, out.split()[:1]) == (0, ["NAME"]), err
        assert "n1" in out
        rc, out, err = await run(k, env, "get", "pods", "-A", "-o", "name")
        assert out.split() == ["pod/p0", "pod/p1"], err
        rc, out, err = await run(k, env, "label", "pod", "p0", "team=a")
        assert (rc, out.strip()) == (0, "pod/p0 labeled"), err
        assert http.api.get("Pod", "p0", "default").metadata.labels["team"] == "a"
        manifest = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "made"},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        }
        rc, out, err = await run(k, env, "create", "--validate=false", "-f", "-", stdin=json.dumps(manifest).encode())
        assert (rc, out.strip()) == (0, "pod/made created"), err
        bad = {**manifest, "metadata": {"name": "bad"}, "spec": {"containers": [{"name": "c"}]}}
        rc, out, err = await run(k, env, "create", "--validate=false", "-f", "-", stdin=json.dumps(bad).encode())
        assert rc == 1
        assert 'The Pod "bad" is invalid: spec.containers[0].image: Required value' in err
        rc, out, err = await run(k, env, "delete", "pod", "made", "--wait=false")
        assert (rc, out.strip()) == (0, 'pod "made" deleted'), err
        rc, out, err = await run(k, env, "get", "pod", "nope")
        assert rc == 1
        assert 'Error from server (NotFound): pods "nope" not found' in err
        rc, out, err = await run(k, env, "create", "namespace", "team-a")
        assert (rc, out.strip()) == (0, "namespace/team-a created"), err
