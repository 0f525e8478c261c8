"""The event trace: one canonical JSON line per API write, and its hash.

Keys, in this order: ``rv`` (revision), ``t`` (simulated seconds, rounded to the
microsecond), ``verb`` (create, update, updateStatus, bind, delete), ``kind``, ``ns``,
``name``, and, only where the write changed them, ``nodeName``, ``phase``, ``reason``,
``message``. ``reason``/``message`` are the pod's ``status.reason``/``status.message``, or,
for a write that changes the PodScheduled condition, that condition's reason and message.

``traceHash`` is the sha256 of exactly these lines, each ending with a newline. The same
scenario and seed give byte-identical lines, hence the same hash: that is the
determinism contract tests check. The recorder streams (hash and optional file); it does
not keep the lines in memory.
"""

from __future__ import annotations

import hashlib
from typing import IO, Any

import msgspec

from emulator.apiserver.server import WriteRecord

__all__ = ["TraceRecorder", "trace_line"]

_encoder = msgspec.json.Encoder()


def _scheduled_condition(pod: Any) -> Any:
    if pod is None:
        return None
    for c in pod.status.conditions:
        if c.type == "PodScheduled":
            return c
    return None


def trace_line(rec: WriteRecord) -> dict[str, Any]:
    """The trace entry of one write (see the module docstring for the keys)."""
    obj = rec.obj
    meta = obj.metadata
    line: dict[str, Any] = {
        "rv": rec.revision,
        "t": round(rec.time, 6),
        "verb": rec.verb,
        "kind": rec.kind,
        "ns": meta.namespace,
        "name": meta.name,
    }
    if rec.kind == "Pod" and rec.new is not None:
        old, new = rec.old, rec.new
        if new.spec.node_name and (old is None or old.spec.node_name != new.spec.node_name):
            line["nodeName"] = new.spec.node_name
        if old is None or old.status.phase != new.status.phase:
            line["phase"] = new.status.phase
        reason, message = new.status.reason, new.status.message
        changed = old is None or old.status.reason != reason or old.status.message != message
        cond_new, cond_old = _scheduled_condition(new), _scheduled_condition(old)
        if (
            cond_new is not None
            and (cond_new.reason or cond_new.message)
            and (
                cond_old is None
                or (cond_old.status, cond_old.reason, cond_old.message)
                != (cond_new.status, cond_new.reason, cond_new.message)
            )
        ):
            reason, message, changed = cond_new.reason, cond_new.message, True
        if changed and (reason or message):
            line["reason"] = reason
            line["message"] = message
    return line


class TraceRecorder:
    """A write listener that hashes (and optionally writes) the trace lines."""

    def __init__(self, out: IO[bytes] | None = None) -> None:
        self._hash = hashlib.sha256()
        self._out = out
        self.lines = 0

    def __call__(self, rec: WriteRecord) -> None:
        data = _encoder.encode(trace_line(rec)) + b"\n"
        self._hash.update(data)
        self.lines += 1
        if self._out is not None:
            self._out.write(data)

    @property
    def hexdigest(self) -> str:
        return self._hash.hexdigest()
