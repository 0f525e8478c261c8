"""The kubelet's Lease renewals through the fast path (``NodeReporter._renew_now``): a Lease
someone else wrote between two renewals (the race the fast path must not hide) is renewed
through ``update`` as before: one Conflict, a fresh read, the other writer's change kept; and a
watch on Leases (what ``kubectl get leases -w`` opens) sees every renewal as it happens."""

from __future__ import annotations

from msgspec.structs import replace

from agents.kubelet import KubeletSettings
from emulator.base.runtime.loop import new_virtual_loop
from tests.builders import node
from tests.cluster import open_cluster

NODE = "node-a"
NS = "kube-node-lease"


def test_a_lease_edited_between_two_renewals_is_renewed_after_one_conflict() -> None:
    async def main() -> tuple[list[tuple[float, str]], dict[str, str], int, list[tuple[str, str | None]]]:
        async with open_cluster(namespaces=("default", NS)) as c:
            c.server.create(node(NODE))
            kubelet = await c.start_kubelet(NODE, KubeletSettings(heartbeat_interval=10.0))
            watcher = c.server.watch("Lease", namespace=NS)
            await c.at(15.0)
            lease = c.server.get("Lease", NODE, NS)
            c.server.update(replace(lease, metadata=replace(lease.metadata, labels={"edited": "yes"})))
            await c.at(35.0)
            events = [(e.type, e.object.spec.renew_time) for e in watcher.channel.get_nowait_batch()]
            writes = [(w.time, w.verb) for w in c.of("Lease")]
            final = c.server.get("Lease", NODE, NS)
            return writes, final.metadata.labels, kubelet._reporter.conflicts, events

    loop = new_virtual_loop()
    try:
        writes, labels, conflicts, events = loop.run_until_complete(main())
    finally:
        loop.close()
    assert writes == [(0.0, "create"), (10.0, "update"), (15.0, "update"), (20.0, "update"), (30.0, "update")]
    assert labels == {"edited": "yes"}
    assert conflicts == 1
    assert [t for t, _ in events] == ["MODIFIED"] * 4
    assert [r[-6:] for _, r in events] == ["00:10Z", "00:10Z", "00:20Z", "00:30Z"]
