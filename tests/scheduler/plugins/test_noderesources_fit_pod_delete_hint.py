"""NodeResourcesFit's hint for a deleted pod: Queue when it held room on a node, either bound
there or reserved by a nomination (upstream ``isSchedulableAfterPodEvent``)."""

from __future__ import annotations

import pytest

from agents.scheduler.framework.types import QueueingHint
from agents.scheduler.plugins.noderesources_fit import NodeResourcesFit
from emulator.base.api.core import Pod
from tests import builders as b

TARGET = b.pod("target", uid="target", cpu="1")


@pytest.mark.parametrize(
    ("deleted", "want"),
    [
        pytest.param(b.pod("o", uid="o", cpu="1", node="n1"), QueueingHint.Queue, id="bound"),
        pytest.param(b.pod("o", uid="o", cpu="1", nominated="n1"), QueueingHint.Queue, id="nominated-only"),
        pytest.param(
            b.pod("o", uid="o", cpu="1", node="n1", nominated="n2"), QueueingHint.Queue, id="bound-and-nominated"
        ),
        pytest.param(b.pod("o", uid="o", cpu="1"), QueueingHint.QueueSkip, id="neither-bound-nor-nominated"),
    ],
)
def test_deleted_pod_hint(deleted: Pod, want: QueueingHint) -> None:
    assert NodeResourcesFit.is_schedulable_after_pod_event(TARGET, deleted, None) is want
