"""The event trace: one canonical JSON line per API write, and its hash.

Keys, in this order: ``rv`` (revision), ``t`` (simulated seconds, rounded to the
microsecond), ``verb`` (create, update, updateStatus, bind, delete, evict: the DisruptionTarget condition an
admitted eviction writes before its delete), ``kind``, ``ns``,
``name``, and, only where the write changed them, ``nodeName``, ``phase``, ``reason``,
``message``, and ``agent`` for a write made through the HTTP door (the User-Agent's product,
``kubectl``; omitted for the in-process agents, so their lines and hashes are unchanged).
``reason``/``message`` are the pod's ``status.reason``/``status.message``, or,
for a write that changes the PodScheduled condition, that condition's reason and message.

``traceHash`` is the sha256 of exactly these lines, each ending with a newline. The same
scenario and seed give byte-identical lines, hence the same hash: that is the
determinism contract tests check. The recorder streams (hash and optional file); it does
not keep the lines in memory. Without a file it encodes the lines into a buffer and hashes the
buffer every ``_HASH_CHUNK`` bytes (and before reporting the digest): sha256 of the
concatenation is sha256 of the lines fed one by one, at a fraction of the calls. The recorder
builds lines with ``fast_trace_line``, a ``TraceLine`` struct (its fields in the keys' order,
the optional ones omitted while unset: the same JSON bytes as the dict, built and encoded in
less time); the plain dict version, key by key, is the test oracle ``trace_line`` in
``tests/references.py`` (``tests/scenario/test_trace_buffer.py`` checks that both encode to
the same bytes on random writes).
"""

from __future__ import annotations

import hashlib
from typing import IO, Any

import msgspec

from emulator.base.apiserver.server import Verb, WriteRecord

__all__ = ["TraceLine", "TraceRecorder", "fast_trace_line"]

_encoder = msgspec.json.Encoder()
_HASH_CHUNK = 1 << 16


class TraceLine(msgspec.Struct, omit_defaults=True, gc=False, rename={"node_name": "nodeName"}):
    """One trace line as ``fast_trace_line`` builds it (the keys of the module docstring)."""

    rv: int
    t: float
    verb: str
    kind: str
    ns: str
    name: str
    node_name: str | msgspec.UnsetType = msgspec.UNSET
    phase: str | msgspec.UnsetType = msgspec.UNSET
    reason: str | msgspec.UnsetType = msgspec.UNSET
    message: str | msgspec.UnsetType = msgspec.UNSET
    agent: str | msgspec.UnsetType = msgspec.UNSET


def _scheduled(conditions: Any) -> Any:
    for c in conditions:
        if c.type == "PodScheduled":
            return c
    return None


def fast_trace_line(rec: WriteRecord, t: float | None = None) -> TraceLine:
    """``trace_line(rec)`` as a ``TraceLine``, with the common cases short-cut: a write that is
    not a pod's, and a pod update that kept the status object (nothing of the status part can
    have changed). ``t``: ``round(rec.time, 6)`` if the caller has it already.
    Mirrored in ``bookkeeping.RunBook``: change both (``test_bookkeeping``)."""
    old, new = rec.old, rec.new
    meta = (new if new is not None else old).metadata
    if t is None:
        t = round(rec.time, 6)
    line = TraceLine(rec.revision, t, rec.verb, rec.kind, meta.namespace, meta.name)
    if rec.agent:
        line.agent = rec.agent
    if new is None or rec.kind != "Pod":
        return line
    node = new.spec.node_name
    st = new.status
    if old is None:
        if node:
            line.node_name = node
        line.phase = st.phase
        reason, message = st.reason, st.message
        cond = _scheduled(st.conditions)
        if cond is not None and (cond.reason or cond.message):
            reason, message = cond.reason, cond.message
        if reason or message:
            line.reason = reason
            line.message = message
        return line
    if node and old.spec.node_name != node:
        line.node_name = node
    ost = old.status
    if ost is st:
        return line
    if ost.phase != st.phase:
        line.phase = st.phase
    reason, message = st.reason, st.message
    changed = ost.reason != reason or ost.message != message
    cond = _scheduled(st.conditions)
    if cond is not None and (cond.reason or cond.message):
        prev = _scheduled(ost.conditions)
        if prev is None or (prev.status, prev.reason, prev.message) != (cond.status, cond.reason, cond.message):
            reason, message, changed = cond.reason, cond.message, True
    if changed and (reason or message):
        line.reason = reason
        line.message = message
    return line


class TraceRecorder:
    """A write listener that hashes (and optionally writes) the trace lines."""

    def __init__(self, out: IO[bytes] | None = None) -> None:
        self._hash = hashlib.sha256()
        self._out = out
        self._buf = bytearray()
        """Encoded lines not hashed yet (only without ``out``)."""
        self.lines = 0
        self._time = -1.0
        """The simulated time of the last line, and its rounding (``t``): most writes share
        their instant with the one before (88 % of a churn run's), and ``round`` is a third
        of a line's cost."""
        self._t = -1.0

    def __call__(self, rec: WriteRecord) -> None:
        # Mirrored in ``bookkeeping.RunBook``: change both (``test_bookkeeping``).
        self.lines += 1
        if rec.time != self._time:
            self._time = rec.time
            self._t = round(rec.time, 6)
        if self._out is None:
            buf = self._buf
            _encoder.encode_into(fast_trace_line(rec, self._t), buf, -1)
            buf.append(10)  # "\n"
            if len(buf) >= _HASH_CHUNK:
                self._hash.update(buf)
                buf.clear()
            return
        data = _encoder.encode(fast_trace_line(rec, self._t)) + b"\n"
        self._hash.update(data)
        self._out.write(data)

    def write_many(self, verb: Verb, kind: str, time: float, agent: str, writes: list[tuple[Any, Any, int]]) -> None:
        """The lines of a batch of writes (``Store._commit_batch``: the Lease renewals of an
        instant), as ``__call__`` makes them one by one; a kind's other than pods' line is its
        ``TraceLine`` of six keys (and ``agent``), built here without a ``WriteRecord``."""
        if kind == "Pod" or self._out is not None:
            for old, new, rev in writes:
                self(WriteRecord(rev, time, verb, kind, old, new, agent))
            return
        self.lines += len(writes)
        if time != self._time:
            self._time = time
            self._t = round(time, 6)
        t = self._t
        buf = self._buf
        encode_into = _encoder.encode_into
        for old, new, rev in writes:
            meta = (new if new is not None else old).metadata
            line = TraceLine(rev, t, verb, kind, meta.namespace, meta.name)
            if agent:
                line.agent = agent
            encode_into(line, buf, -1)
            buf.append(10)  # "\n"
        if len(buf) >= _HASH_CHUNK:
            self._hash.update(buf)
            buf.clear()

    @property
    def hexdigest(self) -> str:
        if self._buf:
            self._hash.update(self._buf)
            self._buf.clear()
        return self._hash.hexdigest()
