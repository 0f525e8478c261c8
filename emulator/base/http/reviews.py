"""The self reviews of ``kubectl auth``: who am I, and may I.

The emulator has no RBAC: whoever holds the kubeconfig's token (or anyone, with ``--token
none``) may do everything, as the cluster-admin of a kind cluster may. So
``SelfSubjectAccessReview`` (``auth can-i``) is always allowed, ``SelfSubjectRulesReview``
(``auth can-i --list``) lists the wildcard rules ``cluster-admin`` has, and
``SelfSubjectReview`` (``auth whoami``) names kind's admin user. Each answer is the request
echoed with its ``status``, as upstream's create of these virtual resources returns.

Owns the three endpoints (``ENDPOINTS``, by group/version/resource) and their answers, pure.
It does not own the body's decoding (``codec``) nor routing.
"""

from __future__ import annotations

from typing import Any, Final

from emulator.base.api.errors import BadRequest, Invalid

__all__ = ["ENDPOINTS", "USER", "review"]

USER: Final[dict[str, Any]] = {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}
"""The user every request is (a kind cluster's admin: ``system:masters``)."""

ENDPOINTS: Final[dict[tuple[str, str, str], str]] = {
    ("authorization.k8s.io", "v1", "selfsubjectaccessreviews"): "SelfSubjectAccessReview",
    ("authorization.k8s.io", "v1", "selfsubjectrulesreviews"): "SelfSubjectRulesReview",
    ("authentication.k8s.io", "v1", "selfsubjectreviews"): "SelfSubjectReview",
}
"""(group, version, resource) → the kind it accepts; create (POST) is its only verb."""

_ALLOWED_REASON: Final = (
    'RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" to Group "system:masters"'
)


def review(group: str, version: str, resource: str, body: Any) -> dict[str, Any]:
    """The answer to a POST of ``body`` (its JSON as builtins, or None) to the endpoint."""
    kind = ENDPOINTS[(group, version, resource)]
    api_version = f"{group}/{version}"
    data = body if isinstance(body, dict) else {}
    got = (data.get("apiVersion") or api_version, data.get("kind") or kind)
    if got != (api_version, kind):
        raise BadRequest(f"the kind in the data ({got[1]}) does not match the expected kind ({kind})")
    spec = data.get("spec") or {}
    if kind == "SelfSubjectAccessReview":
        if not spec.get("resourceAttributes") and not spec.get("nonResourceAttributes"):
            raise Invalid.at(
                "SelfSubjectAccessReview.authorization.k8s.io",
                "",
                "spec.resourceAttributes",
                'Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
            )
        status: dict[str, Any] = {"allowed": True, "reason": _ALLOWED_REASON}
    elif kind == "SelfSubjectRulesReview":
        status = {
            "resourceRules": [
                {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews"]},
                {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectrulesreviews"]},
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
            ],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": False,
        }
    else:
        status = {"userInfo": dict(USER)}
    out: dict[str, Any] = {"kind": kind, "apiVersion": api_version, "metadata": {"creationTimestamp": None}}
    if spec or kind != "SelfSubjectReview":
        out["spec"] = spec
    out["status"] = status
    return out
