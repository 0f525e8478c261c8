"""The API's typed errors, one tree (as httpx's ``_exceptions.py``).

``ApiError`` carries the HTTP code and the Kubernetes ``StatusReason`` upstream's
apiserver would return. Every rejected write raises one of these and leaves the store
and its revision untouched. An expected "no" from the scheduler is a ``Status`` value,
never one of these.

===============  ====  =================  ==========================================
class            code  reason             raised when
===============  ====  =================  ==========================================
NotFound         404   NotFound           get/update/delete/bind of a missing object
AlreadyExists    409   AlreadyExists      create of a name that exists
Conflict         409   Conflict           stale resourceVersion; bind of a bound pod
Gone             410   Expired            watch from a revision older than history
Forbidden        403   Forbidden          an eviction a PDB's status cannot admit; a create
                                          into a terminating namespace
TooManyRequests  429   TooManyRequests    an eviction a PodDisruptionBudget refuses
Invalid          422   Invalid            defaulting/validation failed (``field``)
Timeout          504   Timeout            watch from a resourceVersion not reached yet
InternalError    500   InternalError      injected server faults
BadRequest       400   BadRequest         an HTTP body that does not decode, a bad query
Unauthorized     401   Unauthorized       an HTTP request without the bearer token
MethodNotAllowed 405   MethodNotAllowed   a verb the resource does not support
NotAcceptable    406   NotAcceptable      an Accept header naming only types not served
RequestEntityTooLarge 413 RequestEntityTooLarge  an HTTP body over the limit (3 MiB)
UnsupportedMediaType 415 UnsupportedMediaType   a body type not served (protobuf)
===============  ====  =================  ==========================================

The last six come only from the HTTP door (``emulator.base.http``).
"""

from __future__ import annotations

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Conflict",
    "Forbidden",
    "Gone",
    "InternalError",
    "Invalid",
    "MethodNotAllowed",
    "NotAcceptable",
    "NotFound",
    "RequestEntityTooLarge",
    "Timeout",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "resource_of",
]

_RESOURCES = {
    "Pod": "pods",
    "Node": "nodes",
    "Binding": "bindings",
    "Event": "events",
    "Namespace": "namespaces",
    "PriorityClass": "priorityclasses.scheduling.k8s.io",
    "Lease": "leases.coordination.k8s.io",
    "Deployment": "deployments.apps",
    "ReplicaSet": "replicasets.apps",
    "StatefulSet": "statefulsets.apps",
    "ControllerRevision": "controllerrevisions.apps",
    "DaemonSet": "daemonsets.apps",
    "Job": "jobs.batch",
    "CronJob": "cronjobs.batch",
    "Service": "services",
    "PodDisruptionBudget": "poddisruptionbudgets.policy",
    "StorageClass": "storageclasses.storage.k8s.io",
    "CSIDriver": "csidrivers.storage.k8s.io",
    "CSINode": "csinodes.storage.k8s.io",
    "CSIStorageCapacity": "csistoragecapacities.storage.k8s.io",
    "VolumeAttachment": "volumeattachments.storage.k8s.io",
    "DeviceClass": "deviceclasses.resource.k8s.io",
    "ResourceClaim": "resourceclaims.resource.k8s.io",
    "ResourceClaimTemplate": "resourceclaimtemplates.resource.k8s.io",
    "ResourceSlice": "resourceslices.resource.k8s.io",
    "HorizontalPodAutoscaler": "horizontalpodautoscalers.autoscaling",
    "NodePool": "nodepools.karpenter.sh",
    "NodeClaim": "nodeclaims.karpenter.sh",
}


def resource_of(kind: str) -> str:
    """The plural resource name upstream uses in messages (``pods``, ``nodes``...)."""
    return _RESOURCES.get(kind, kind.lower() + "s")


class ApiError(Exception):
    """Base of every error the API server returns."""

    code: int = 500
    reason: str = "InternalError"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(ApiError):
    code = 404
    reason = "NotFound"

    @classmethod
    def of(cls, kind: str, name: str) -> NotFound:
        return cls(f'{resource_of(kind)} "{name}" not found')


class AlreadyExists(ApiError):
    code = 409
    reason = "AlreadyExists"

    @classmethod
    def of(cls, kind: str, name: str) -> AlreadyExists:
        return cls(f'{resource_of(kind)} "{name}" already exists')


class Conflict(ApiError):
    code = 409
    reason = "Conflict"

    @classmethod
    def stale(cls, kind: str, name: str) -> Conflict:
        return cls(
            f'Operation cannot be fulfilled on {resource_of(kind)} "{name}": the object has '
            "been modified; please apply your changes to the latest version and try again"
        )

    @classmethod
    def uid_precondition(cls, wanted: str, held: str) -> Conflict:
        """The storage layer's answer to a UID precondition that does not hold (upstream's
        ``Preconditions.Check``): ``wanted`` the precondition's UID, ``held`` the object's."""
        return cls(f"Precondition failed: UID in precondition: {wanted}, UID in object meta: {held}")


class Forbidden(ApiError):
    code = 403
    reason = "Forbidden"


class TooManyRequests(ApiError):
    """429: the request may succeed later (an eviction a disruption budget refuses now).

    ``causes`` are upstream's ``details.causes`` messages (type ``DisruptionBudget``);
    ``retry_after_seconds`` its ``details.retryAfterSeconds``."""

    code = 429
    reason = "TooManyRequests"

    def __init__(self, message: str, *, causes: tuple[str, ...] = (), retry_after_seconds: int = 0) -> None:
        super().__init__(message)
        self.causes = causes
        self.retry_after_seconds = retry_after_seconds


class Gone(ApiError):
    code = 410
    reason = "Expired"


class Timeout(ApiError):
    """504: e.g. a watch from a resourceVersion the server has not reached yet."""

    code = 504
    reason = "Timeout"


class InternalError(ApiError):
    code = 500
    reason = "InternalError"


class Invalid(ApiError):
    """A field failed validation; ``field`` is its path (``spec.containers[0].image``)."""

    code = 422
    reason = "Invalid"

    def __init__(self, message: str, *, field: str = "", kind: str = "", name: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.field = field
        self.kind = kind
        self.name = name
        self.detail = detail or message

    @classmethod
    def at(cls, kind: str, name: str, field: str, detail: str) -> Invalid:
        who = f'{kind} "{name}"' if name else kind
        return cls(f"{who} is invalid: {field}: {detail}", field=field, kind=kind, name=name, detail=detail)


class BadRequest(ApiError):
    code = 400
    reason = "BadRequest"


class Unauthorized(ApiError):
    code = 401
    reason = "Unauthorized"


class MethodNotAllowed(ApiError):
    code = 405
    reason = "MethodNotAllowed"


class NotAcceptable(ApiError):
    code = 406
    reason = "NotAcceptable"


class RequestEntityTooLarge(ApiError):
    code = 413
    reason = "RequestEntityTooLarge"


class UnsupportedMediaType(ApiError):
    code = 415
    reason = "UnsupportedMediaType"
