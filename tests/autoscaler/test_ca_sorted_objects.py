"""``SortedObjects`` (the Cluster Autoscaler's per-loop listing, kept by the informer's
handlers) lists what sorting the informer's store gives, object for object, through random
watch batches (adds, replacements, deletions, in several namespaces) and relists."""

from __future__ import annotations

import random
from typing import cast

import pytest
from msgspec.structs import replace

from agents.autoscaler.clusterautoscaler.view import SortedObjects
from emulator.base.apiserver.watcher import WatchEvent
from emulator.base.client.client import Client
from emulator.base.client.informer import Informer
from tests.builders import pod


@pytest.mark.parametrize("seed", range(5))
def test_the_listing_is_the_sorted_store(seed: int) -> None:
    rng = random.Random(seed)
    inf = Informer(cast(Client, None), "Pod")  # _apply and _replace never touch the client
    listing = SortedObjects(inf)
    revision = 0
    for step in range(60):
        if step % 17 == 16:  # a relist: some objects kept, some gone, some new
            items = [o for o in inf.store.values() if rng.random() < 0.6]
            items += [pod(f"r{step}-{i}", namespace=rng.choice(["a", "b"])) for i in range(3)]
            revision += 1
            inf._replace(items, revision)
        else:
            batch = []
            for _ in range(rng.randrange(1, 8)):
                revision += 1
                known = sorted(inf.store)
                roll = rng.random()
                if roll < 0.45 or not known:
                    obj = pod(f"p{rng.randrange(40)}", namespace=rng.choice(["a", "b", "c"]))
                    batch.append(WatchEvent("ADDED", obj, revision))
                elif roll < 0.8:
                    old = inf.store[rng.choice(known)]
                    new = replace(old, metadata=replace(old.metadata, resource_version=str(revision)))
                    batch.append(WatchEvent("MODIFIED", new, revision))
                else:
                    batch.append(WatchEvent("DELETED", inf.store[rng.choice(known)], revision))
            inf._apply(batch)
        got = listing.objects()
        want = [inf.store[k] for k in sorted(inf.store)]
        assert len(got) == len(want)
        assert all(g is w for g, w in zip(got, want, strict=True))
