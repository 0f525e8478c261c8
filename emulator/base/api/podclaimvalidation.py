"""Pod validation of the fields that reference ResourceClaims (upstream
``pkg/apis/core/validation``, v1.34: ``validatePodResourceClaims``, ``validateResourceClaimNames``):
``spec.resourceClaims`` entries have unique DNS-label names and exactly one source
(``resourceClaimName`` or ``resourceClaimTemplateName``, each a valid object name; a template's
claim, ``<pod>-<claim>``, must be a valid name too), and every ``resources.claims`` entry of a
container or init container names one of them (and, with ``request``, a DNS label), once.

Whether an update may change them is ``podvalidation.pod_update_problem``'s rule: the whole spec
but images, tolerations and scheduling gates is immutable, ``spec.resourceClaims`` included.
"""

from __future__ import annotations

from collections.abc import Iterator

from emulator.base.api.core import PodResourceClaim, PodSpec
from emulator.base.api.labels import dns1123_label_errors, dns1123_subdomain_errors, go_quote

__all__ = ["pod_claim_name_problems", "pod_claim_problems"]

Problem = tuple[str, str]


def _invalid(value: str, msg: str) -> str:
    return f"Invalid value: {go_quote(value)}: {msg}"


def _go_ptr(value: str | None) -> str:
    return "(*string)(nil)" if value is None else go_quote(value)


def _shown(claim: PodResourceClaim) -> str:
    """The claim as Go's ``%#v`` prints it in upstream's message (pointers by their value)."""
    return (
        f"core.PodResourceClaim{{Name:{go_quote(claim.name)}, ResourceClaimName:{_go_ptr(claim.resource_claim_name)}, "
        f"ResourceClaimTemplateName:{_go_ptr(claim.resource_claim_template_name)}}}"
    )


def pod_claim_name_problems(pod_name: str, spec: PodSpec) -> Iterator[Problem]:
    """The names of the claims the resourceclaim controller will make (``<pod>-<claim>``) for
    template entries: a check of the pod's name and its spec together."""
    if not pod_name:
        return
    for i, claim in enumerate(spec.resource_claims):
        if claim.resource_claim_template_name is not None and claim.name and not dns1123_label_errors(claim.name):
            final = f"{pod_name}-{claim.name}"
            for msg in dns1123_subdomain_errors(final):
                yield f"spec.resourceClaims[{i}].name", _invalid(final, f"final ResourceClaim name: {msg}")


def pod_claim_problems(pod_name: str, spec: PodSpec) -> Iterator[Problem]:
    names: list[str] = []
    for i, claim in enumerate(spec.resource_claims):
        path = f"spec.resourceClaims[{i}]"
        if not claim.name:
            yield f"{path}.name", "Required value"
        elif claim.name in names:
            yield f"{path}.name", f"Duplicate value: {go_quote(claim.name)}"
        else:
            for msg in dns1123_label_errors(claim.name):
                yield f"{path}.name", _invalid(claim.name, msg)
            names.append(claim.name)
        source, template = claim.resource_claim_name, claim.resource_claim_template_name
        if source is not None and template is not None:
            detail = "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
            yield path, f"Invalid value: {_shown(claim)}: {detail}"
        elif source is None and template is None:
            detail = "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"
            yield path, f"Invalid value: {_shown(claim)}: {detail}"
        elif source is not None:
            for msg in dns1123_subdomain_errors(source):
                yield f"{path}.resourceClaimName", _invalid(source, msg)
        elif template is not None:
            for msg in dns1123_subdomain_errors(template):
                yield f"{path}.resourceClaimTemplateName", _invalid(template, msg)
    yield from pod_claim_name_problems(pod_name, spec)
    known = sorted(names)
    for group, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for c_index, c in enumerate(containers):
            seen: list[str] = []
            for j, ref in enumerate(c.resources.claims):
                path = f"spec.{group}[{c_index}].resources.claims[{j}]"
                key = ref.name
                if ref.request:
                    for msg in dns1123_label_errors(ref.request):
                        yield f"{path}.request", _invalid(ref.request, msg)
                    key += "/" + ref.request
                if not ref.name:
                    yield path, "Required value"
                    continue
                if key in seen:
                    yield path, f"Duplicate value: {go_quote(key)}"
                else:
                    seen.append(key)
                if ref.name not in known:
                    which = ": " + ", ".join(known) if known else " which is empty"
                    yield (
                        path,
                        f"Not found: {go_quote(ref.name)}: must be one of the names in pod.spec.resourceClaims{which}",
                    )
