"""What the emulator's Karpenter does not act on in a NodePool is a warning naming the field
(never silently dropped): the scenario loader's ``<file>: <path>: ...`` lines and ``serve``'s
``Warning`` headers (emulator/base/api/karpenterignored.py). Upstream's behaviour each stands
for: static NodePools (pkg/controllers/static, ``spec.replicas``), ``nodepoolutils.IsManaged``
(kwok/cloudprovider GetSupportedNodeClasses: KWOKNodeClass); ``minValues`` is acted on: no warning."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from emulator.app.scenario.loader import load_scenario_text
from tests.autoscaler.test_karpenter_bad_input import GOOD, TYPES
from tests.http.server_support import serving

P = "autoscaling.karpenter.nodePools[0]"
REQ = "- {key: karpenter.sh/capacity-type, operator: In, values: [spot]}"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(("spec:\n          template:", "spec:\n          replicas: 3\n          template:"),
                     f"{P}.spec.replicas: ignored: static NodePools are not modelled (upstream keeps 3 NodeClaims); "
                     "this NodePool launches none", id="static"),
        pytest.param(("group: karpenter.kwok.sh, kind: KWOKNodeClass", "group: karpenter.k8s.aws, kind: EC2NodeClass"),
                     f"{P}.spec.template.spec.nodeClassRef: ignored NodePool: karpenter.k8s.aws/EC2NodeClass is not "
                     "the kwok provider's NodeClass (karpenter.kwok.sh/KWOKNodeClass); Karpenter does not manage it",
                     id="other-provider"),
        pytest.param(("values: [spot]}", "values: [spot, on-demand], minValues: 2}"), None, id="min-values-acted-on"),
        pytest.param(("30s", "30s"), None, id="nothing-ignored"),
    ],
)  # fmt: skip
def test_scenario_warns(tmp_path: Path, change: tuple[str, str], expected: str | None) -> None:
    shutil.copy(TYPES, tmp_path / "types.json")
    warnings: list[str] = []
    load_scenario_text(GOOD.replace(*change), source="s.yaml", base_dir=tmp_path, warnings=warnings)
    assert warnings == ([f"s.yaml: {expected}"] if expected else [])


@pytest.mark.asyncio
@pytest.mark.real_time
async def test_serve_warns() -> None:
    body: dict[str, Any] = {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "static"},
        "spec": {"replicas": 2, "template": {"spec": {
            "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": "default"},
            "requirements": []}}},
    }  # fmt: skip
    async with (
        serving() as s,
        s.client.post(
            "/apis/karpenter.sh/v1/nodepools",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        ) as r,
    ):
        assert r.status == 201, await r.read()
        warnings = r.headers.getall("Warning", [])
    assert len(warnings) == 1
    assert warnings[0].startswith('299 - "spec.replicas: ignored: static NodePools are not modelled')
