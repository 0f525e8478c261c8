"""The job controller on virtual time: NonIndexed and Indexed Jobs, pod failures and the
backoff limit, the recreation backoff, activeDeadlineSeconds, suspend. The kubelet is
stood in for by setting pod phases through the API (``jobworld.World.finish``)."""

from __future__ import annotations

import pytest

from tests.agents.controllers.jobworld import job, world


@pytest.mark.asyncio
async def test_nonindexed_runs_parallelism_pods_until_completions() -> None:
    async with world(job("pi", completions=5, parallelism=2)) as w:
        await w.clock.sleep(0.5)
        for _ in range(10):
            await w.finish_all("pi")
            await w.clock.sleep(2.0)
        j = w.job("pi")
        assert j.status.succeeded == 5
        assert [(c.type, c.status, c.reason) for c in j.status.conditions] == [
            ("SuccessCriteriaMet", "True", "CompletionsReached"),
            ("Complete", "True", "CompletionsReached"),
        ]
        assert j.status.completion_time is not None
        assert j.status.start_time == "2026-01-01T00:00:00Z"
        w.track_active()
        assert w.max_active["pi"] == 2
        assert len(w.pods()) == 5
        created = w.events("SuccessfulCreate")
        assert len(created) == 5
        assert created[0][2].startswith("Created pod: pi-")
        assert w.events("Completed") == [("pi", "Completed", "Job completed")]
