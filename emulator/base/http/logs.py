"""``GET .../pods/<name>/log``: what a container's log is when nothing runs in it; and
``exec``, ``attach``, ``portforward``, which need a process and so are refused.

The emulated kubelets run no processes, so every container's log is empty. Upstream answers
an empty log of a running container that wrote nothing with ``200`` and no body; the checks
before that are upstream's too — the apiserver's (``pkg/registry/core/pod`` LogLocation: the
container to read, a host assigned) and the kubelet's (a container that has not started).
``kubectl logs`` then prints nothing and exits 0, as against a real cluster.

``exec``/``attach``/``portforward`` run upstream's apiserver checks (the container, a host
assigned) and then answer 400 ``<what> is not supported: the emulated kubelet on <node> runs
no processes``: kubectl prints it as ``Error from server (BadRequest): ...`` (port-forward
after ``error upgrading connection:``), which says what happened, where a 404 (no such
subresource) said nothing.

Owns: choosing the container and the 400s for the cases above. It does not own routing nor
the pod lookup (a missing pod is the store's 404).

=============================================  ==============================================
request                                        answer
=============================================  ==============================================
no ``container``, one container                its log
no ``container``, several                      400 ``a container name must be specified for
                                               pod <p>, choose one of: [a b]``
``container`` not in the pod                   400 ``container <c> is not valid for pod <p>``
pod not bound to a node                        400 ``pod <p> does not have a host assigned``
container waiting (or no status yet)           400 ``container "<c>" in pod "<p>" is waiting
                                               to start: <reason>``
``previous=true``, never restarted             400 ``previous terminated container "<c>" in
                                               pod "<p>" not found``
otherwise                                      200, ``text/plain``, empty
=============================================  ==============================================
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from emulator.base.api.errors import BadRequest

__all__ = ["CONTENT_TYPE", "STREAMS", "pod_log", "refuse_stream"]

CONTENT_TYPE: Final = "text/plain"
STREAMS: Final = {"exec": "exec", "attach": "attach", "portforward": "port forwarding"}
"""The streaming subresources of a pod, and how a refusal names each."""


def _container(pod: Any, requested: str) -> str:
    name = pod.metadata.name
    names = [c.name for c in pod.spec.containers]
    init = [c.name for c in pod.spec.init_containers]
    if not requested:
        if len(names) == 1:
            return str(names[0])
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]"
        if init:
            message += f" or one of the init containers: [{' '.join(init)}]"
        raise BadRequest(message)
    if requested not in names and requested not in init:
        raise BadRequest(f"container {requested} is not valid for pod {name}")
    return requested


def pod_log(pod: Any, query: Mapping[str, str]) -> bytes:
    """The log the query asks for (always empty), or the 400 upstream gives."""
    name = pod.metadata.name
    container = _container(pod, query.get("container", ""))
    if not pod.spec.node_name:
        raise BadRequest(f"pod {name} does not have a host assigned")
    statuses = [*pod.status.init_container_statuses, *pod.status.container_statuses]
    status = next((s for s in statuses if s.name == container), None)
    if status is None or (status.state.running is None and status.state.terminated is None):
        waiting = status.state.waiting if status is not None else None
        reason = waiting.reason if waiting is not None and waiting.reason else "ContainerCreating"
        raise BadRequest(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    if query.get("previous", "") == "true" and status.restart_count == 0:
        raise BadRequest(f'previous terminated container "{container}" in pod "{name}" not found')
    return b""


def refuse_stream(pod: Any, sub: str, query: Mapping[str, str]) -> None:
    """Raise the 400 for ``exec``/``attach``/``portforward`` of ``pod`` (upstream's checks
    first: the container, a host assigned)."""
    if sub != "portforward":
        _container(pod, query.get("container", ""))
    node = pod.spec.node_name
    if not node:
        raise BadRequest(f"pod {pod.metadata.name} does not have a host assigned")
    raise BadRequest(f"{STREAMS[sub]} is not supported: the emulated kubelet on {node} runs no processes")
