"""Leases (upstream ``pkg/registry/coordination/lease``): the default rules of every hook
(``ValidateLeaseSpec`` is ``emulator.base.api.validation``'s), and the MicroTime decode of
the spec's times (``check_lease_times``), which the HTTP door runs.

==========================================  ===================================================
input                                       answer
==========================================  ===================================================
``acquireTime``/``renewTime`` not a time    400 (a decode error upstream: ``Lease in version
                                            "v1" cannot be handled as a Lease: parsing time
                                            "yesterday" as "2006-01-02T15:04:05.000000Z07:00":
                                            cannot parse "yesterday" as "2006"``)
``leaseDurationSeconds`` <= 0               422 ``spec.leaseDurationSeconds: Invalid value: -5:
                                            must be greater than 0``
``leaseTransitions`` < 0                    422 ``... must be greater than or equal to 0``
==========================================  ===================================================

Approximated: Go's ``cannot parse`` detail names the first element that failed; here it is the
value against ``2006`` whatever failed. A time with fewer than six fractional digits is
accepted (upstream's MicroTime wants six; clients of the emulator send whole seconds).
"""

from __future__ import annotations

from typing import Any, Final

from emulator.base.api.errors import BadRequest
from emulator.base.apiserver.registry.strategy import Strategy
from emulator.base.runtime.clock import parse_timestamp

__all__ = ["LeaseStrategy", "check_lease_times"]

_MICRO: Final = "2006-01-02T15:04:05.000000Z07:00"


def check_lease_times(lease: Any) -> None:
    """The MicroTime decode of ``acquireTime`` and ``renewTime``: the HTTP door's (the store
    holds whatever its in-process clients write)."""
    spec = lease.spec
    for value in (spec.acquire_time, spec.renew_time):
        if value is None:
            continue
        try:
            parse_timestamp(value)
        except ValueError:
            raise BadRequest(
                f'Lease in version "v1" cannot be handled as a Lease: parsing time "{value}" as "{_MICRO}": '
                f'cannot parse "{value}" as "2006"'
            ) from None


class LeaseStrategy(Strategy):
    kind = "Lease"
    generation_on_update = False  # upstream's leaseStrategy has no PrepareForUpdate bump
