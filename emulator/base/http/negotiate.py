"""Content negotiation of answers, as kube-apiserver's: which media type an ``Accept`` gets.

Owns parsing ``Accept`` (clauses ordered by ``q``, most specific first among equals, ``q=0``
dropped), matching each clause in turn against the media types served — ``application/json``,
``application/yaml`` (not for watch streams, as upstream has no YAML stream serializer),
``application/vnd.kubernetes.protobuf`` (only for kinds that have a protobuf message) — with
``*/*`` and ``application/*`` meaning JSON, and upstream's 406 ``NotAcceptable`` when no clause
matches. An empty ``Accept`` is JSON. A clause asking ``as=Table`` is answered as a JSON Table
whatever its media type (``tables``). Also owns rendering an answer the verbs wrote as JSON in
the negotiated type (``render``; a kind without a message stays JSON) and turning a watch
stream's JSON lines into protobuf frames (``watch_frames``). It does not own the encodings
themselves (``codec``, ``protobuf_encode``) nor which requests negotiate (``server``:
discovery documents are JSON).
"""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import msgspec

from emulator.base.api.errors import NotAcceptable

__all__ = [
    "JSON",
    "PROTOBUF",
    "PROTOBUF_WATCH",
    "YAML",
    "Clause",
    "check_accept",
    "negotiate",
    "parse_accept",
    "render",
    "watch_frames",
]

JSON: Final = "application/json"
YAML: Final = "application/yaml"
PROTOBUF: Final = "application/vnd.kubernetes.protobuf"
PROTOBUF_WATCH: Final = "application/vnd.kubernetes.protobuf;stream=watch"
"""The Content-Type of a protobuf watch stream (a JSON one is plain ``application/json``)."""


class Clause(NamedTuple):
    type: str
    subtype: str
    q: float
    params: dict[str, str]


def parse_accept(accept: str) -> list[Clause]:
    """The clauses of an Accept header, most preferred first (as goautoneg sorts them)."""
    clauses: list[Clause] = []
    for part in accept.split(","):
        mt, *rest = part.split(";")
        mt = mt.strip().lower()
        if not mt:
            continue
        kind, _, sub = mt.partition("/")
        params: dict[str, str] = {}
        q = 1.0
        for p in rest:
            key, _, value = p.partition("=")
            key, value = key.strip(), value.strip()
            if key == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
            elif key:
                params[key] = value
        if q > 0:
            clauses.append(Clause(kind, sub or "*", q, params))
    clauses.sort(key=lambda c: (-c.q, c.type == "*", c.subtype == "*"))
    return clauses


def _served(protobuf: bool, yaml: bool) -> tuple[str, ...]:
    return (JSON,) + ((YAML,) if yaml else ()) + ((PROTOBUF,) if protobuf else ())


def negotiate(accept: str, *, protobuf: bool = True, yaml: bool = True) -> str:
    """``JSON``, ``YAML`` or ``PROTOBUF`` for this Accept; 406 when none is acceptable."""
    served = _served(protobuf, yaml)
    if not accept.strip():
        return JSON
    for c in parse_accept(accept):
        if c.params.get("as") == "Table":
            if c.type in ("application", "*"):
                return JSON
            continue
        for mt in served:
            kind, sub = mt.split("/")
            if c.type in ("*", kind) and c.subtype in ("*", sub):
                return mt
    raise NotAcceptable(f"only the following media types are accepted: {', '.join(served)}")


def check_accept(accept: str, *, protobuf: bool = True) -> None:
    """406 when Accept names only media types this server never writes."""
    negotiate(accept, protobuf=protobuf)


_decoder: Final = msgspec.json.Decoder()


def to_yaml(obj: Any) -> bytes:
    """YAML as upstream writes it from JSON (keys sorted, block style)."""
    import yaml  # only when a client asks for YAML

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(obj, Dumper=dumper, default_flow_style=False, sort_keys=True, allow_unicode=True)
    return text.encode()


def render(body: bytes, media: str) -> tuple[bytes, str]:
    """(body, Content-Type) of a JSON answer in the negotiated media type."""
    if media == JSON or not body:
        return body, JSON
    obj = _decoder.decode(body)
    if media == YAML:
        return to_yaml(obj), YAML
    from emulator.base.http.protobuf_encode import encode_envelope  # loads the tables

    encoded = encode_envelope(obj) if isinstance(obj, dict) else None
    return (encoded, PROTOBUF) if encoded is not None else (body, JSON)


def watch_frames(lines: bytes) -> bytes:
    """The protobuf frames of a chunk of JSON watch lines (``{"type":...,"object":...}``)."""
    from emulator.base.http.protobuf_encode import encode_envelope, watch_frame

    out: list[bytes] = []
    for line in lines.splitlines():
        if not line.strip():
            continue
        event = _decoder.decode(line)
        envelope = encode_envelope(event["object"]) or b""
        out.append(watch_frame(event["type"], envelope))
    return b"".join(out)
