"""Leases (upstream ``pkg/registry/coordination/lease``): the default rules of every hook."""

from __future__ import annotations

from emulator.base.apiserver.registry.strategy import Strategy

__all__ = ["LeaseStrategy"]


class LeaseStrategy(Strategy):
    kind = "Lease"
