"""A client's request rate limit: client-go's token bucket (``flowcontrol.NewTokenBucketRateLimiter``,
over ``golang.org/x/time/rate``), on the injected clock.

A bucket holds at most ``burst`` tokens and gains ``qps`` per second. Each request takes one;
when none is left it takes one in advance and waits until the bucket would have refilled to it —
so requests leave in the order they asked (``rate.Limiter.Wait`` reserves in call order), and a
burst of ``n`` requests from a full bucket of ``b`` tokens sends ``b`` at once and the rest one
every ``1/qps`` seconds. Only requests wait; a watch stream, once open, is not limited (as
client-go's). Used by the scheduler when its KubeSchedulerConfiguration sets
``clientConnection.qps`` (and by ``bench`` for upstream's ``schedulerApiClientQPS``/``Burst``).
"""

from __future__ import annotations

from emulator.base.runtime.clock import Clock

__all__ = ["TokenBucket"]


class TokenBucket:
    """``qps`` tokens a second, at most ``burst`` banked (the bucket starts full)."""

    __slots__ = ("_clock", "_last", "_tokens", "burst", "qps", "waited")

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"a token bucket needs qps > 0 and burst >= 1, got qps={qps} burst={burst}")
        self.qps, self.burst, self._clock = float(qps), burst, clock
        self._tokens = float(burst)
        self._last = clock.now()
        self.waited = 0.0
        """Seconds requests spent waiting for a token, summed (a measure of throttling)."""

    def reserve(self) -> float:
        """Take a token now (possibly one not there yet); the seconds until it may be used."""
        now = self._clock.now()
        if now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
            self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            self.waited += delay
            await self._clock.sleep(delay)
