"""What upstream's job-tracking finalizer guarantees, on virtual time (upstream
``pkg/controller/job/job_controller.go`` ``trackJobStatusAndRemoveFinalizers``, finalizer
``batch.kubernetes.io/job-tracking``): a finished pod deleted before the controller synced is
still counted. The emulator keeps that guarantee without the finalizer (not modelled: its cost
on the Job churn bench, see the controller's docstring) by remembering vanished pods."""

from __future__ import annotations

import pytest

from tests.controllers.jobworld import job, world


@pytest.mark.asyncio
@pytest.mark.parametrize(("phase", "succeeded", "failed"), [("Succeeded", 1, 0), ("Failed", 0, 1)])
async def test_a_finished_pod_deleted_before_any_sync_is_still_counted(phase: str, succeeded: int, failed: int) -> None:
    async with world(job("pi", completions=2, parallelism=1, backoff_limit=6)) as w:
        await w.clock.sleep_until(0.5)
        (p,) = w.active("pi")
        await w.finish(p, phase)
        w.server.delete("Pod", p.metadata.name, "default", grace_period_seconds=0)  # before the 1 s batch sync
        assert p.metadata.name not in {q.metadata.name for q in w.pods()}
        await w.clock.sleep_until(3.0)
        status = w.job("pi").status
        assert (status.succeeded, status.failed) == (succeeded, failed)
