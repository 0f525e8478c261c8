"""``emulator/base/api/data/upstream_fields.json`` is what ``tests/api/upstream_fields.py``
builds from the official client's models (upstream's OpenAPI), so the unknown-field check
(``emulator.base.api.unknownfields``) knows every field upstream's types have."""

from __future__ import annotations

import pytest

from tests.api.upstream_fields import TARGET, render


def test_the_field_table_is_current() -> None:
    pytest.importorskip("kubernetes")
    assert TARGET.read_text() == render(), "regenerate: python -m tests.api.upstream_fields"


def test_every_decoded_kind_is_in_the_field_table() -> None:
    """A kind missing from the table would have its unknown fields dropped without a word."""
    from emulator.base.api.codec import KINDS
    from emulator.base.api.unknownfields import CRD_KINDS
    from tests.api.upstream_fields import MODELS

    decoded = {kind for _, kind in KINDS}
    assert decoded <= set(MODELS) | set(CRD_KINDS), sorted(decoded - set(MODELS) - set(CRD_KINDS))
