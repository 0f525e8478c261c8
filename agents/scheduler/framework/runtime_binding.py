"""The binding-side runners of a profile's framework: Reserve/Unreserve, Permit and
WaitOnPermit, PreBind, Bind, PostBind (upstream ``framework/runtime/framework.go``, the
``Run*Plugins`` after host selection), with upstream's semantics and messages.

``BindingRunners`` is mixed into ``runtime.Framework``, which builds the state declared here
(the plugins per extension point, the waiting-pods map, the clock). A plugin raising inside
one of these points gives an ``Error`` status as upstream's ``AsStatus`` would (Unreserve and
PostBind have no status upstream: an exception there changes nothing). It does not own the
filtering and scoring runners (``runtime_filtering.py``, ``runtime_scoring.py``), the Handle
or building the plugins (``runtime.py``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, Final

from emulator.base.api.core import Pod
from emulator.base.runtime.clock import Clock

from .cycle_state import CycleState
from .interface import (
    MAX_TIMEOUT_SECONDS,
    BindPlugin,
    ExtensionPoint,
    PermitPlugin,
    PostBindPlugin,
    PreBindPlugin,
    ReservePlugin,
)
from .status import SKIP, SUCCESS, Code, Status, as_status, error_status
from .waiting_pods import WaitingPod, WaitingPodsMap

__all__ = ["BindingRunners"]


_PRE_FLIGHT_SKIP = Status(Code.Skip)
_OK: Final = Code.Success
"""``status.code is _OK``: ``Status.is_success`` without the method call (the per-pod runners)."""


class BindingRunners:
    """Reserve, Permit and the binding cycle's runners of one profile (a mixin)."""

    clock: Clock
    waiting_pods: WaitingPodsMap
    _points: dict[ExtensionPoint, list[Any]]
    # The per-pod points' lists by attribute (an ``ExtensionPoint`` key hashes in Python).
    _reserve: list[Any]
    _permit: list[Any]
    _bind: list[Any]
    _post_bind: list[Any]
    _flights: list[tuple[Any, Any]] | None = None

    # --- the waiting pods (the Handle's part) --------------------------------------------------

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self, fn: Callable[[WaitingPod], None]) -> None:
        self.waiting_pods.iterate(fn)

    def reject_waiting_pod(self, uid: str) -> bool:
        wp = self.waiting_pods.get(uid)
        if wp is None:
            return False
        wp.reject("", "removed")
        return True

    # --- reserve and permit -----------------------------------------------------------------

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        pl: ReservePlugin
        for pl in self._reserve:
            try:
                s = pl.reserve(state, pod, node_name)
            except Exception as err:
                s = as_status(err)
            if s.code is not _OK:
                if s.is_rejected():
                    return s.with_plugin(pl.name)
                return error_status(f'running Reserve plugin "{pl.name}": {s.message()}', pl.name)
        return SUCCESS

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Unreserve of every Reserve plugin, in reverse order."""
        pl: ReservePlugin
        for pl in reversed(self._points[ExtensionPoint.Reserve]):
            # Upstream's Unreserve returns nothing: a plugin raising there cannot fail the pod.
            with contextlib.suppress(Exception):
                pl.unreserve(state, pod, node_name)

    def run_permit_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success, a rejection/Error, or Wait (the pod is then in the waiting-pods map)."""
        wait: dict[str, float] = {}
        pl: PermitPlugin
        for pl in self._permit:
            try:
                s, timeout = pl.permit(state, pod, node_name)
            except Exception as err:
                s, timeout = as_status(err), 0.0
            if s.code is _OK:
                continue
            if s.is_rejected():
                return s.with_plugin(pl.name)
            if s.is_wait():
                wait[pl.name] = min(timeout, MAX_TIMEOUT_SECONDS)
                continue
            return error_status(f'running Permit plugin "{pl.name}": {s.message()}', pl.name)
        if wait:
            self.waiting_pods.add(WaitingPod(pod, wait, self.clock))
            msg = f'one or more plugins asked to wait and no plugin rejected pod "{pod.metadata.name}"'
            return Status(Code.Wait, msg)
        return SUCCESS

    async def wait_on_permit(self, pod: Pod) -> Status:
        """Block until the waiting pod is allowed, rejected or timed out; Success if not waiting."""
        wp = self.waiting_pods.get(pod.metadata.uid)
        if wp is None:
            return SUCCESS
        try:
            s = await wp.wait()
        finally:
            self.waiting_pods.remove(pod.metadata.uid)
        if s.is_success() or s.is_rejected():
            return s
        return error_status(f"waiting on permit for pod: {s.message()}", s.plugin)

    # --- binding ----------------------------------------------------------------------------

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream ``RunPreBindPreFlights``: Skip when every PreBind plugin says it has nothing
        to do for this pod (the binding cycle then need not enter PreBind at all), Success when
        one or more will work, Error as upstream's. A plugin without ``pre_bind_pre_flight``
        counts as Success. The plugins that said Skip are left out of ``run_pre_bind_plugins``
        (upstream ``SetSkipPreBindPlugins``).

        Upstream v1.34 runs this only behind the NominatedNodeNameForExpectation gate (off), to
        decide whether to publish ``nominatedNodeName`` before binding; here it runs for every
        pod for the skip alone, which changes nothing observable: a plugin says Skip exactly
        when its PreBind would return Success without acting."""
        flights = self._flights
        if flights is None:  # (plugin, its pre-flight or None), looked up once
            flights = self._flights = [
                (pl, getattr(pl, "pre_bind_pre_flight", None)) for pl in self._points[ExtensionPoint.PreBind]
            ]
        skip: list[str] = []
        returned: Status = _PRE_FLIGHT_SKIP
        for pl, flight in flights:
            if flight is None:
                returned = SUCCESS
                continue
            try:
                s: Status = flight(state, pod, node_name)
            except Exception as err:
                s = as_status(err)
            code = s.code
            if code is Code.Skip:
                skip.append(pl.name)
            elif code is Code.Success:
                returned = SUCCESS
            elif code is Code.Error:
                return error_status(f'running PreBindPreFlight "{pl.name}": {s.message()}', pl.name)
            else:
                msg = (
                    f'PreBindPreFlight {pl.name} returned "{code.name}", which is unsupported. '
                    "It is supposed to return Success, Skip, or Error status"
                )
                return error_status(msg, pl.name)
        state.skip_pre_bind_plugins = frozenset(skip)
        return returned

    async def run_pre_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        pl: PreBindPlugin
        skip = state.skip_pre_bind_plugins
        for pl in self._points[ExtensionPoint.PreBind]:
            if pl.name in skip:
                continue
            try:
                s = await pl.pre_bind(state, pod, node_name)
            except Exception as err:
                s = as_status(err)
            if not s.is_success():
                if s.is_rejected():
                    return s.with_plugin(pl.name)
                return error_status(f'running PreBind plugin "{pl.name}": {s.message()}', pl.name)
        return SUCCESS

    async def run_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        status = SKIP
        pl: BindPlugin
        for pl in self._bind:
            try:
                status = await pl.bind(state, pod, node_name)
            except Exception as err:
                status = as_status(err)
            code = status.code
            if code is Code.Skip:
                continue
            if code is _OK:
                return status
            if status.is_rejected():
                return status.with_plugin(pl.name)
            return error_status(f'running Bind plugin "{pl.name}": {status.message()}', pl.name)
        return status

    def run_post_bind_plugins(self, state: CycleState, pod: Pod, node_name: str) -> None:
        pl: PostBindPlugin
        for pl in self._post_bind:
            # Informational, as upstream's (no status): a plugin raising there changes nothing.
            with contextlib.suppress(Exception):
                pl.post_bind(state, pod, node_name)
