"""Names and labels the API server refuses on create (``ValidateObjectMeta``' labels,
``ValidateContainers``' names as DNS labels, ``ValidatePodSpec``'s ``schedulerName`` as a DNS
subdomain): each was accepted before issue 10's hostile corpus found it."""

from __future__ import annotations

import pytest

from emulator.base.api.errors import Invalid
from emulator.base.api.validation import validate
from tests.builders import container, node, pod

QNAME = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL = "must be no more than 63 characters"
DNS_LABEL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS_SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    ("obj", "path", "detail"),
    [
        pytest.param(
            pod("p", labels={"a b": "c"}), "metadata.labels", f'Invalid value: "a b": {QNAME}', id="pod-label-key"
        ),
        pytest.param(
            pod("p", labels={"a": "v" * 64}),
            "metadata.labels",
            f'Invalid value: "{"v" * 64}": {LABEL}',
            id="pod-label-value",
        ),
        pytest.param(
            node("n", labels={"a b": "c"}), "metadata.labels", f'Invalid value: "a b": {QNAME}', id="node-label-key"
        ),
        pytest.param(
            pod("p", containers=[container("C_1")]),
            "spec.containers[0].name",
            f'Invalid value: "C_1": {DNS_LABEL}',
            id="container-name",
        ),
        pytest.param(
            pod("p", scheduler="Bad Name"),
            "spec.schedulerName",
            f'Invalid value: "Bad Name": {DNS_SUBDOMAIN}',
            id="scheduler-name",
        ),
    ],
)
def test_refused_as_upstream(obj: object, path: str, detail: str) -> None:
    with pytest.raises(Invalid) as info:
        validate(obj)
    assert info.value.field == path
    assert info.value.message.endswith(f"{path}: {detail}")


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(pod("p", labels={"app.kubernetes.io/name": "web", "empty": ""}), id="labels"),
        pytest.param(pod("p", containers=[container("c-1")], scheduler="my.scheduler-2"), id="names"),
    ],
)
def test_valid_names_pass(obj: object) -> None:
    validate(obj)
