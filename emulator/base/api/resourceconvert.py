"""``resource.k8s.io/v1beta1`` and ``v1beta2`` manifests as ``v1`` ones (upstream's conversion,
``pkg/apis/resource/v1beta1/conversion.go``, v1.34), on the written document before it is decoded.

v1.34 serves v1, v1beta1 and v1beta2 (upstream's scheduler_perf templates and most published
examples are v1beta1). v1beta2 has v1's shape, so only its apiVersion changes. v1beta1 differs
in three places:

- a request is flat: ``deviceClassName``, ``selectors``, ``allocationMode``, ``count``,
  ``adminAccess``, ``tolerations``, ``capacity`` beside ``name`` and ``firstAvailable``. If any of
  them is set they move under ``exactly`` (both set is then refused by validation, as upstream);
  ``firstAvailable`` stays (``Convert_v1beta1_DeviceRequest_To_resource_DeviceRequest``);
- a ResourceSlice's device wraps its fields in ``basic`` (``BasicDevice``); they move up;
- a ResourceSlice's ``nodeName`` and ``allNodes`` are plain values: ``""`` and ``false`` mean
  unset (upstream's pointers are nil then).

Validation runs on the converted object, so its paths are v1's
(``spec.devices.requests[0].exactly.count``), as v1.34's API server reports them for a v1beta1
object. ``DeviceTaintRule`` (``resource.k8s.io/v1alpha3``) is not served by v1.34 with its
default feature gates and runtime config: ``not_served`` says so in kubectl's words.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["BETA_VERSIONS", "CONVERTED_KINDS", "not_served", "to_v1"]

BETA_VERSIONS: Final = ("resource.k8s.io/v1beta1", "resource.k8s.io/v1beta2")
CONVERTED_KINDS: Final = ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate", "ResourceSlice")
_FLAT_REQUEST: Final = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
)
_ALPHA: Final = {
    ("resource.k8s.io/v1alpha3", "DeviceTaintRule"): "DRADeviceTaints",
}


def not_served(api_version: str, kind: str) -> str | None:
    """The error for a kind v1.34 knows but does not serve with its default gates, or None."""
    gate = _ALPHA.get((api_version, kind))
    if gate is None:
        return None
    return (
        f'no matches for kind "{kind}" in version "{api_version}": v1.34 serves it only with the alpha '
        f"feature gate {gate} and the runtime config {api_version}=true, both off by default "
        "(the emulator runs v1.34's defaults)"
    )


def _request(req: Any) -> Any:
    if not isinstance(req, dict) or "exactly" in req:
        return req
    flat = {k: req[k] for k in _FLAT_REQUEST if k in req and req[k] is not None}
    if not flat:
        return req
    out = {k: v for k, v in req.items() if k not in _FLAT_REQUEST}
    out["exactly"] = flat
    return out


def _claim_spec(spec: Any) -> Any:
    if not isinstance(spec, dict) or not isinstance(spec.get("devices"), dict):
        return spec
    devices = spec["devices"]
    requests = devices.get("requests")
    if not isinstance(requests, list):
        return spec
    return {**spec, "devices": {**devices, "requests": [_request(r) for r in requests]}}


def _device(dev: Any) -> Any:
    if not isinstance(dev, dict) or not isinstance(dev.get("basic"), dict):
        return dev
    out = {k: v for k, v in dev.items() if k != "basic"}
    out.update(dev["basic"])
    return out


def _slice_spec(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = dict(spec)
    if out.get("nodeName") == "":
        del out["nodeName"]
    if out.get("allNodes") is False:
        del out["allNodes"]
    if isinstance(out.get("devices"), list):
        out["devices"] = [_device(d) for d in out["devices"]]
    return out


def to_v1(doc: dict[str, Any]) -> dict[str, Any]:
    """A v1beta1 or v1beta2 document of a ``CONVERTED_KINDS`` kind as its v1 document."""
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    out = {**doc, "apiVersion": "resource.k8s.io/v1"}
    if api_version != "resource.k8s.io/v1beta1":
        return out
    spec = doc.get("spec")
    if kind == "ResourceClaim":
        out["spec"] = _claim_spec(spec)
    elif kind == "ResourceClaimTemplate" and isinstance(spec, dict):
        out["spec"] = {**spec, "spec": _claim_spec(spec.get("spec"))}
    elif kind == "ResourceSlice":
        out["spec"] = _slice_spec(spec)
    return out
