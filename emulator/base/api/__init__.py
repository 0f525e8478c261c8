"""Kubernetes API objects (msgspec Structs), quantities, selectors, validation.

The lowest layer: depends on msgspec and PyYAML only. See ``core`` (core/v1),
``scheduling`` (PriorityClass, Lease), ``apps``, ``batch``, ``policy`` and ``services`` (the
workload kinds, with ``workloaddefaults``, ``workloadvalidation``, ``intstr`` and ``cron``),
``quantity``, ``resources``, the selector modules
(``labels``: name syntax; ``labelselector``: compiled label selectors; ``labelparse``: their
string form; ``nodeaffinity``; ``taints``; ``fields``), ``validation``, ``codec`` (manifests in,
builtins out), ``mergepatch`` (RFC 7386) and ``errors``.
"""

from emulator.base.api.codec import KINDS, ApiObject, ManifestError, load_manifest_file, load_manifests
from emulator.base.api.core import Binding, Event, Namespace, Node, Pod
from emulator.base.api.errors import AlreadyExists, ApiError, Conflict, Gone, InternalError, Invalid, NotFound
from emulator.base.api.meta import ObjectMeta, ObjectReference
from emulator.base.api.quantity import Quantity, parse_quantity
from emulator.base.api.scheduling import Lease, PriorityClass

__all__ = [
    "KINDS",
    "AlreadyExists",
    "ApiError",
    "ApiObject",
    "Binding",
    "Conflict",
    "Event",
    "Gone",
    "InternalError",
    "Invalid",
    "Lease",
    "ManifestError",
    "Namespace",
    "Node",
    "NotFound",
    "ObjectMeta",
    "ObjectReference",
    "Pod",
    "PriorityClass",
    "Quantity",
    "load_manifest_file",
    "load_manifests",
    "parse_quantity",
]
