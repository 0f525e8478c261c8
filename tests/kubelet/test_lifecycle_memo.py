"""``lifecycle_of``'s common case (no annotation but ``run-duration``) is memoised per
(run-duration text, restart policies): it must give what the parsing path gives. The parsing
path is forced by a ``ready-after: 0s`` annotation, which changes no field."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace

from agents.kubelet import READY_AFTER_ANNOTATION, RUN_DURATION_ANNOTATION
from agents.kubelet.lifecycle import lifecycle_of
from emulator.base.api.core import Pod
from emulator.base.api.meta import OwnerReference
from tests.builders import pod

DURATIONS = st.one_of(
    st.none(),
    st.sampled_from(["60s", "1m30s", "0s", "1.5s", "250ms", "-5s", "abc", "", "10", "1h"]),
    st.text(max_size=6),
)


def _pod(run_duration: str | None, policy: str, owned: bool) -> Pod:
    notes = {} if run_duration is None else {RUN_DURATION_ANNOTATION: run_duration}
    p = pod("p", annotations=notes)
    owners = [OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="rs", uid="u", controller=True)]
    meta = replace(p.metadata, owner_references=owners if owned else [])
    return replace(p, metadata=meta, spec=replace(p.spec, restart_policy=policy))


@given(
    run_duration=DURATIONS,
    policy=st.sampled_from(["", "Always", "OnFailure", "Never"]),
    owned=st.booleans(),
)
def test_memoised_plain_lifecycle_equals_the_parsed_one(run_duration: str | None, policy: str, owned: bool) -> None:
    plain = _pod(run_duration, policy, owned)
    notes = {**plain.metadata.annotations, READY_AFTER_ANNOTATION: "0s"}
    parsed = replace(plain, metadata=replace(plain.metadata, annotations=notes))
    assert lifecycle_of(plain) == lifecycle_of(parsed)
    assert lifecycle_of(plain) == lifecycle_of(plain)  # from the memo the second time
