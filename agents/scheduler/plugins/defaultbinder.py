"""``DefaultBinder`` (upstream ``plugins/defaultbinder/default_binder.go``): Bind.

Binds the pod by POSTing a ``Binding`` (namespace, name and uid of the pod, target the node)
through the profile's API client: ``await handle.client.bind(namespace, name, node, uid=uid)``.
An ``ApiError`` (the pod is gone, already bound, uid mismatch, injected fault) becomes an
``Error`` status with the server's message, as upstream's ``AsStatus(err)``; the binding cycle
then unreserves, forgets and requeues. It does not own that failure handling.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from agents.scheduler.framework.interface import Handle
from agents.scheduler.framework.types import SUCCESS, Code, CycleState, Status
from emulator.base.api.core import Pod
from emulator.base.api.errors import ApiError

__all__ = ["NAME", "DefaultBinder"]

NAME: Final = "DefaultBinder"


class DefaultBinder:
    name = NAME

    def __init__(self, args: Mapping[str, Any] | None, handle: Handle) -> None:
        self._handle = handle

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        client = self._handle.client
        if client is None:
            return Status(Code.Error, "DefaultBinder: the profile has no API client to bind with")
        meta = pod.metadata
        try:
            await client.bind(meta.namespace, meta.name, node_name, uid=meta.uid)
        except ApiError as err:
            return Status(Code.Error, err.message)
        return SUCCESS

    def __repr__(self) -> str:
        return "<DefaultBinder>"
