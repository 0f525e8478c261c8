"""The trace recorder's buffered hashing equals hashing each line as it comes (the reference:
the recorder writing to a file, which hashes line by line), across chunk boundaries; and
``fast_trace_line`` builds the same lines as ``trace_line`` (the reference, ``tests/references.py``)."""

from __future__ import annotations

import hashlib
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace

from emulator.app.scenario import event_trace
from emulator.app.scenario.event_trace import TraceRecorder, fast_trace_line
from emulator.base.api.core import Node, Pod, PodCondition
from emulator.base.apiserver.server import WriteRecord
from tests import builders
from tests.references import trace_line


def _pod(name: str, node: str, phase: str, reason: str) -> Pod:
    return builders.pod(name, namespace="ns", image="", node=node, phase=phase, reason=reason)


def _node(name: str) -> Node:
    return builders.node(name, cpu=None, memory=None, pods=None)


record = st.builds(
    lambda i, node, phase, reason, node_kind: WriteRecord(
        i,
        i / 7,
        "update",
        "Node" if node_kind else "Pod",
        None if i % 3 == 0 else (_pod(f"p{i % 5}", "", "Pending", "") if not node_kind else None),
        _node(node or "n") if node_kind else _pod(f"p{i % 5}", node, phase, reason),
    ),
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from(["", "n0", "node-with-a-long-name"]),
    st.sampled_from(["Pending", "Running", "Succeeded"]),
    st.sampled_from(["", "Evicted", "x" * 200]),
    st.booleans(),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(record, max_size=60), st.integers(min_value=1, max_value=300), st.data())
def test_buffered_hash_equals_line_by_line(recs: list[WriteRecord], chunk: int, data: st.DataObject) -> None:
    with pytest.MonkeyPatch.context() as m:
        m.setattr(event_trace, "_HASH_CHUNK", chunk)
        fast, out = TraceRecorder(), io.BytesIO()
        ref = TraceRecorder(out)
        peek = data.draw(st.sets(st.integers(min_value=0, max_value=len(recs))))
        for i, rec in enumerate(recs):
            if i in peek:  # reading the digest mid-run must not disturb the stream
                assert fast.hexdigest == ref.hexdigest
            fast(rec)
            ref(rec)
    want = hashlib.sha256(b"".join(event_trace._encoder.encode(trace_line(r)) + b"\n" for r in recs)).hexdigest()
    assert fast.hexdigest == ref.hexdigest == want
    assert fast.lines == ref.lines == len(recs)
    assert out.getvalue().count(b"\n") == len(recs)


def _rich_pod(node: str, phase: str, reason: str, cond: tuple[str, str, str] | None) -> Pod:
    conditions = [PodCondition(type="Ready", status="True")]
    if cond is not None:
        conditions.append(PodCondition(type="PodScheduled", status=cond[0], reason=cond[1], message=cond[2]))
    message = reason and f"because {reason}"
    return builders.pod(
        "p", namespace="ns", image="", node=node, phase=phase, reason=reason, message=message, conditions=conditions
    )


rich_pod = st.builds(
    _rich_pod,
    st.sampled_from(["", "n0", "n1"]),
    st.sampled_from(["", "Pending", "Running"]),
    st.sampled_from(["", "Evicted"]),
    st.none()
    | st.tuples(
        st.sampled_from(["True", "False"]), st.sampled_from(["", "Unschedulable"]), st.sampled_from(["", "0/3 nodes"])
    ),
)


@st.composite
def rich_record(draw: st.DrawFn) -> WriteRecord:
    kind = draw(st.sampled_from(["Pod", "Pod", "Node"]))
    shape = draw(st.sampled_from(["create", "update", "same-status", "delete"]))
    if kind == "Node":
        node = _node("n")
        return WriteRecord(1, 0.1234567, "update", "Node", None if shape == "create" else node, node)
    old = None if shape == "create" else draw(rich_pod)
    new = None if shape == "delete" else draw(rich_pod)
    if shape == "same-status" and old is not None and new is not None:
        new = replace(new, status=old.status)
    return WriteRecord(draw(st.integers(0, 10**6)), draw(st.floats(0, 1e6)), "update", "Pod", old, new)


@settings(max_examples=500, deadline=None)
@given(rich_record())
def test_fast_trace_line_equals_trace_line(rec: WriteRecord) -> None:
    assert event_trace._encoder.encode(fast_trace_line(rec)) == event_trace._encoder.encode(trace_line(rec))
