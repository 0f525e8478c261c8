"""``DefaultPreemption`` (upstream ``plugins/defaultpreemption``): PostFilter and PreEnqueue."""

from .default_preemption import NAME, NOT_ELIGIBLE_NEVER, NOT_ELIGIBLE_TERMINATING, DefaultPreemption

__all__ = ["NAME", "NOT_ELIGIBLE_NEVER", "NOT_ELIGIBLE_TERMINATING", "DefaultPreemption"]
