"""``PodTemplateSpec``: the pod a workload makes (core/v1), shared by apps/v1 and batch/v1.

It owns the struct only; its defaulting is ``workloaddefaults``, its validation (as a pod)
``workloadvalidation``.
"""

from __future__ import annotations

from emulator.base.api.core import PodSpec
from emulator.base.api.meta import K8s, ObjectMeta

__all__ = ["PodTemplateSpec"]


class PodTemplateSpec(K8s, frozen=True):
    metadata: ObjectMeta = ObjectMeta()
    spec: PodSpec = PodSpec()
