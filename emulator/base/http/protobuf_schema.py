"""The protobuf messages the HTTP door decodes, as data: field number → JSON name and type.

Owns the tables for the bodies kubectl sends only as ``application/vnd.kubernetes.protobuf``:
drain's ``DeleteOptions`` and ``Eviction``; the objects of the generator subcommands — ``create
namespace``, ``create deployment``, ``create job`` (also ``--from=cronjob/...``), ``create
cronjob``, ``create service clusterip|nodeport|...``, ``create poddisruptionbudget``, ``create
priorityclass``, ``create configmap``, ``create secret generic|tls|docker-registry``; and the
reviews of ``auth can-i`` and ``auth whoami``. Only the fields the emulator's structs model, and
those the generators set, are listed; any other field number is skipped (as unknown JSON fields
are dropped). Field numbers are upstream's ``generated.proto`` (checked against the bodies
kubectl 1.32 sends). It does not own the wire reader nor the envelope (``protobuf``).

Upstream's Go structs are written with every non-pointer field, zero or not; a pointer field
only when set. A ``Field`` with ``ptr=True`` keeps its zero value (``replicas: 0``,
``gracePeriodSeconds: 0``); any other field's zero (``""``, ``0``, ``false``, an empty message
or map) is left out, as ``omitempty`` leaves it out of the JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["KINDS", "Field", "Message"]

Type = Literal["string", "int", "bool", "message", "strings", "quantities", "bytes", "intstr"]
"""``strings``: ``map<string,string>``; ``bytes``: ``map<string,bytes>`` (base64 in JSON);
``quantities``: ``map<string,Quantity>`` (a Quantity is a message whose field 1 is its string);
``intstr``: an IntOrString message (type 1, intVal 2, strVal 3)."""


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    type: Type = "string"
    message: Message | None = None
    repeated: bool = False
    ptr: bool = False


Message = dict[int, Field]


def _msg(name: str, message: Message, *, repeated: bool = False) -> Field:
    return Field(name, "message", message, repeated=repeated)


def _int(name: str, *, ptr: bool = False) -> Field:
    return Field(name, "int", ptr=ptr)


OWNER_REFERENCE: Final[Message] = {
    1: Field("kind"),
    3: Field("name"),
    4: Field("uid"),
    5: Field("apiVersion"),
    6: Field("controller", "bool", ptr=True),
    7: Field("blockOwnerDeletion", "bool", ptr=True),
}
OBJECT_META: Final[Message] = {
    1: Field("name"),
    2: Field("generateName"),
    3: Field("namespace"),
    5: Field("uid"),
    6: Field("resourceVersion"),
    11: Field("labels", "strings"),
    12: Field("annotations", "strings"),
    13: _msg("ownerReferences", OWNER_REFERENCE, repeated=True),
    14: Field("finalizers", repeated=True),
}
LABEL_SELECTOR: Final[Message] = {
    1: Field("matchLabels", "strings"),
    2: _msg(
        "matchExpressions",
        {1: Field("key"), 2: Field("operator"), 3: Field("values", repeated=True)},
        repeated=True,
    ),
}
CONTAINER: Final[Message] = {
    1: Field("name"),
    2: Field("image"),
    3: Field("command", repeated=True),
    4: Field("args", repeated=True),
    5: Field("workingDir"),
    6: _msg(
        "ports",
        {1: Field("name"), 2: _int("hostPort"), 3: _int("containerPort"), 4: Field("protocol"), 5: Field("hostIP")},
        repeated=True,
    ),
    7: _msg("env", {1: Field("name"), 2: Field("value")}, repeated=True),
    8: _msg("resources", {1: Field("limits", "quantities"), 2: Field("requests", "quantities")}),
    14: Field("imagePullPolicy"),
    24: Field("restartPolicy", ptr=True),
}
TOLERATION: Final[Message] = {
    1: Field("key"),
    2: Field("operator"),
    3: Field("value"),
    4: Field("effect"),
    5: _int("tolerationSeconds", ptr=True),
}
POD_SPEC: Final[Message] = {
    2: _msg("containers", CONTAINER, repeated=True),
    3: Field("restartPolicy"),
    4: _int("terminationGracePeriodSeconds", ptr=True),
    5: _int("activeDeadlineSeconds", ptr=True),
    6: Field("dnsPolicy"),
    7: Field("nodeSelector", "strings"),
    8: Field("serviceAccountName"),
    10: Field("nodeName"),
    19: Field("schedulerName"),
    20: _msg("initContainers", CONTAINER, repeated=True),
    22: _msg("tolerations", TOLERATION, repeated=True),
    24: Field("priorityClassName"),
    25: _int("priority", ptr=True),
}
POD_TEMPLATE: Final[Message] = {1: _msg("metadata", OBJECT_META), 2: _msg("spec", POD_SPEC)}
DEPLOYMENT_SPEC: Final[Message] = {
    1: _int("replicas", ptr=True),
    2: _msg("selector", LABEL_SELECTOR),
    3: _msg("template", POD_TEMPLATE),
    4: _msg(
        "strategy",
        {
            1: Field("type"),
            2: _msg(
                "rollingUpdate",
                {1: Field("maxUnavailable", "intstr", ptr=True), 2: Field("maxSurge", "intstr", ptr=True)},
            ),
        },
    ),
    5: _int("minReadySeconds"),
    6: _int("revisionHistoryLimit", ptr=True),
    7: Field("paused", "bool"),
    9: _int("progressDeadlineSeconds", ptr=True),
}
JOB_SPEC: Final[Message] = {
    1: _int("parallelism", ptr=True),
    2: _int("completions", ptr=True),
    3: _int("activeDeadlineSeconds", ptr=True),
    4: _msg("selector", LABEL_SELECTOR),
    5: Field("manualSelector", "bool", ptr=True),
    6: _msg("template", POD_TEMPLATE),
    7: _int("backoffLimit", ptr=True),
    8: _int("ttlSecondsAfterFinished", ptr=True),
    9: Field("completionMode", ptr=True),
    10: Field("suspend", "bool", ptr=True),
}
CRON_JOB_SPEC: Final[Message] = {
    1: Field("schedule"),
    2: _int("startingDeadlineSeconds", ptr=True),
    3: Field("concurrencyPolicy"),
    4: Field("suspend", "bool", ptr=True),
    5: _msg("jobTemplate", {1: _msg("metadata", OBJECT_META), 2: _msg("spec", JOB_SPEC)}),
    6: _int("successfulJobsHistoryLimit", ptr=True),
    7: _int("failedJobsHistoryLimit", ptr=True),
    8: Field("timeZone", ptr=True),
}
SERVICE_SPEC: Final[Message] = {
    1: _msg(
        "ports",
        {
            1: Field("name"),
            2: Field("protocol"),
            3: _int("port"),
            4: Field("targetPort", "intstr"),
            5: _int("nodePort"),
            6: Field("appProtocol", ptr=True),
        },
        repeated=True,
    ),
    2: Field("selector", "strings"),
    3: Field("clusterIP"),
    4: Field("type"),
    7: Field("sessionAffinity"),
    10: Field("externalName"),
    13: Field("publishNotReadyAddresses", "bool"),
}
PDB_SPEC: Final[Message] = {
    1: Field("minAvailable", "intstr", ptr=True),
    2: _msg("selector", LABEL_SELECTOR),
    3: Field("maxUnavailable", "intstr", ptr=True),
    4: Field("unhealthyPodEvictionPolicy", ptr=True),
}
DELETE_OPTIONS: Final[Message] = {
    1: _int("gracePeriodSeconds", ptr=True),
    2: _msg("preconditions", {1: Field("uid", ptr=True), 2: Field("resourceVersion", ptr=True)}),
    3: Field("orphanDependents", "bool", ptr=True),
    4: Field("propagationPolicy", ptr=True),
    5: Field("dryRun", repeated=True),
}


RESOURCE_ATTRIBUTES: Final[Message] = {
    1: Field("namespace"),
    2: Field("verb"),
    3: Field("group"),
    4: Field("version"),
    5: Field("resource"),
    6: Field("subresource"),
    7: Field("name"),
}
SELF_SUBJECT_ACCESS_REVIEW_SPEC: Final[Message] = {
    1: _msg("resourceAttributes", RESOURCE_ATTRIBUTES),
    2: _msg("nonResourceAttributes", {1: Field("path"), 2: Field("verb")}),
}


def _object(spec: Message) -> Message:
    """An object with ``metadata`` (1) and ``spec`` (2); its status (3) is skipped."""
    return {1: _msg("metadata", OBJECT_META), 2: _msg("spec", spec)}


KINDS: Final[dict[str, Message]] = {
    "DeleteOptions": DELETE_OPTIONS,
    "Eviction": {1: _msg("metadata", OBJECT_META), 2: _msg("deleteOptions", DELETE_OPTIONS)},
    "Namespace": {1: _msg("metadata", OBJECT_META)},
    "Deployment": _object(DEPLOYMENT_SPEC),
    "Job": _object(JOB_SPEC),
    "CronJob": _object(CRON_JOB_SPEC),
    "Service": _object(SERVICE_SPEC),
    "PodDisruptionBudget": _object(PDB_SPEC),
    "SelfSubjectAccessReview": _object(SELF_SUBJECT_ACCESS_REVIEW_SPEC),
    "SelfSubjectRulesReview": _object({1: Field("namespace")}),
    "SelfSubjectReview": {1: _msg("metadata", OBJECT_META)},
    "ConfigMap": {
        1: _msg("metadata", OBJECT_META),
        2: Field("data", "strings"),
        3: Field("binaryData", "bytes"),
        4: Field("immutable", "bool", ptr=True),
    },
    "Secret": {
        1: _msg("metadata", OBJECT_META),
        2: Field("data", "bytes"),
        3: Field("type"),
        4: Field("stringData", "strings"),
        5: Field("immutable", "bool", ptr=True),
    },
    "PriorityClass": {
        1: _msg("metadata", OBJECT_META),
        2: _int("value"),
        3: Field("globalDefault", "bool"),
        4: Field("description"),
        5: Field("preemptionPolicy", ptr=True),
    },
}
"""The decoded kinds by ``kind``; any other kind stays 415."""
