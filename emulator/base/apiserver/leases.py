"""The Lease verbs of the API server: the renewal fast path (``renewable``, ``renew_lease``,
``renew_leases``: a kubelet's heartbeat, 100 a simulated second on 1,000 nodes) and the
standing renewals (``stand_lease``, ``end_standing``; the reads and watches of Leases that
materialise and end them), as ``LeaseStore``, the base of ``server.ApiServer``.

The fast path is ``ApiServer.update`` of a stored Lease's spec with the steps that are no-ops
then skipped (``tests/apiserver/test_lease_fastpath.py`` compares the two). The standing
renewals' bookkeeping is ``standing``'s; this module owns granting, ending and
materialising them through the store. It does not own the general verbs (``server``) nor
the store itself (``store``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any, cast

from msgspec.structs import replace

from emulator.base.api.scheduling import Lease, LeaseSpec
from emulator.base.apiserver.records import ServerSettings
from emulator.base.apiserver.registry import Strategy
from emulator.base.apiserver.standing import StandingRenewal, StandingRenewals, end
from emulator.base.apiserver.store import Store
from emulator.base.runtime.clock import Clock

__all__ = ["LeaseStore"]


class LeaseStore(Store):
    """The store with the Lease verbs: the renewal fast path and the standing renewals."""

    def __init__(
        self,
        clock: Clock,
        rng: random.Random,
        settings: ServerSettings | None,
        strategies: Mapping[str, type[Strategy]],
    ) -> None:
        super().__init__(clock, rng, settings, strategies)
        self.standing = StandingRenewals()
        """Lease renewals held as a function of time (``standing``; off unless ``allowed``)."""

    # --- standing Lease renewals (``standing``) -----------------------------------------

    def stand_lease(
        self, lease: Lease, spec: LeaseSpec, first: float, interval: float, on_end: Callable[[Lease | None], None]
    ) -> bool:
        """Hold ``lease``'s renewals due at ``first`` (now or later) and every ``interval``
        after, each writing ``spec`` with that due as its ``renewTime``, without writing them;
        False (nothing held) unless allowed and ``renewable(lease, spec)``."""
        renewals = self.standing
        if not renewals.allowed or not interval > 0 or not self.renewable(lease, spec):
            return False
        key = (lease.metadata.namespace, lease.metadata.name)
        if key in renewals.entries:
            return False
        renewals.ended.pop(key, None)  # a kubelet that stopped and started again: renewed since
        entry = renewals.entries[key] = StandingRenewal(key, spec, first, interval, on_end)
        renewals.granted.append(entry)
        if self._read_hooks.get("Lease") is None:
            self._read_hooks["Lease"] = self._read_leases
        return True

    def end_standing(self, namespace: str, name: str) -> None:
        """The kubelet stopped renewing: no renewal after now (nothing is written; a reader
        materialises the last one)."""
        renewals = self.standing
        entry = renewals.entries.pop((namespace, name), None)
        if entry is not None:
            entry.end = self.clock.now()
            renewals.ended[entry.key] = entry

    def _read_leases(self, namespace: str | None, name: str | None) -> None:
        """A read of Leases (``Store.get``/``list``'s read hook, set while any renewal was
        granted): materialise and end the standing renewals it sees (their kubelets write
        again, and may ask anew once quiet)."""
        renewals = self.standing
        if name is not None:
            key = (namespace or "", name)
            keys = [key] if key in renewals.entries or key in renewals.ended else []
        else:
            keys = [
                k
                for table in (renewals.entries, renewals.ended)
                for k in table
                if namespace is None or k[0] == namespace
            ]
        if keys:
            end(self, keys, notify=True)

    # --- the renewal fast path ------------------------------------------------------------

    def renewable(self, lease: Lease, spec: LeaseSpec) -> bool:
        """Whether the Lease fast path applies to ``update(replace(lease, spec=spec))``: ``lease``
        is the stored object itself (the version the kubelet's own last write returned), not
        terminating, and ``spec`` keeps its validated fields (duration, transitions).

        The steps ``update`` would take are all no-ops then (the client's metadata is the
        stored one, Leases have no status and no strategy hook of their own, the validated
        fields are the stored, valid ones; no generation: ``LeaseStrategy``) but the spec
        comparison and the commit, which ``renew_lease(s)`` do, in the same order: same
        object, same revision, same watch events and write records
        (``tests/apiserver/test_lease_fastpath.py`` checks it against ``update``). 100
        renewals a simulated second on 1,000 nodes."""
        meta = lease.metadata
        if self._objects["Lease"].get((meta.namespace, meta.name)) is not lease or meta.deletion_timestamp is not None:
            return False
        old: LeaseSpec = lease.spec
        return spec.lease_duration_seconds == old.lease_duration_seconds and (
            spec.lease_transitions == old.lease_transitions
        )

    def renew_lease(self, lease: Lease, spec: LeaseSpec) -> Lease | None:
        """``update(replace(lease, spec=spec))`` through the fast path; None when it does not
        apply (``renewable``: the caller goes through ``update``, which may refuse)."""
        if not self.renewable(lease, spec):
            return None
        return self.renew_leases([(lease, spec)])[0]

    def renew_leases(self, renewals: list[tuple[Lease, LeaseSpec]]) -> list[Lease]:
        """The updates of a batch of ``renewable`` Leases (each checked by the caller, none
        twice), committed in order in one pass (``Store._commit_batch``): what the ``update``
        calls one after the other would do. A spec equal to the stored one is not written
        (counted unchanged, the stored Lease is its answer)."""
        pairs: list[tuple[Lease, Lease]] = []
        answers: list[Lease | None] = []
        rev = self._revision
        for lease, spec in renewals:
            if spec == lease.spec:
                answers.append(cast(Lease, self._unchanged("update", "Lease", lease)))
                continue
            rev += 1
            meta = lease.metadata
            stamped = replace(meta, resource_version=str(rev))
            pairs.append((lease, replace(lease, metadata=stamped, spec=spec)))
            answers.append(None)
        written = iter(self._commit_batch("update", "Lease", pairs))
        return [next(written) if a is None else a for a in answers]

    # --- a watch of Leases ends the standing renewals

    def watch(self, kind: str, *, standing_aware: bool = False, **options: Any) -> Any:
        """``Store.watch``; a watch of Leases by a watcher that is not ``standing_aware``
        ends every standing renewal and allows none after (it sees every renewal)."""
        if kind == "Lease" and not standing_aware:
            self.standing.allowed = False
            self._read_leases(None, None)
        return super().watch(kind, **options)
