"""An exception as one line: the first leaf of a (possibly nested) exception group.

What it owns: ``leaf`` and ``describe``, for the sweep (``sweep``: a run that raised), a hunt's
seed (``hunt.run_seed``: a run that crashed) and ``serve`` (the error a task group ended with).
A task group wraps what its task raised in an ``ExceptionGroup``; the leaf is what a reader wants
to see. It does not own which exceptions are findings (``sweep``) nor printing them.
"""

from __future__ import annotations

__all__ = ["describe", "leaf"]


def leaf(err: BaseException) -> BaseException:
    """The first leaf exception of ``err`` (``err`` itself when it is no group)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err


def describe(err: BaseException) -> str:
    """``"TypeName: message"`` of ``err``'s first leaf."""
    first = leaf(err)
    return f"{type(first).__name__}: {first}"
