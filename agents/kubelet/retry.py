"""How long the kubelet waits before retrying an API call that failed transiently.

Conflicts and NotFound are answered at once by each caller (re-read, or give up); any other
``ApiError`` (an injected ``InternalError``, a missing namespace) is retried after an
exponential backoff: 0.5 s, 1 s, 2 s ... capped at 30 s. Deterministic (no jitter): the
run's randomness stays in the seeded streams.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_DELAY", "retry_delay"]

BASE_DELAY: Final = 0.5
MAX_DELAY: Final = 30.0


def retry_delay(attempt: int) -> float:
    """Seconds to wait before retry number ``attempt`` (0-based)."""
    return min(BASE_DELAY * 2.0 ** min(attempt, 16), MAX_DELAY)
