"""The "did you mean" text of the one-line errors on a misspelt name."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """The suggestion appended to an error on an unknown name.

    The closest choice is found by :func:`difflib.get_close_matches` (ratio at least 0.6);
    a choice that differs from ``name`` only in case wins over every other.

    Parameters
    ----------
    name : str
        The name that was not found.
    choices : iterable of str
        The names that exist.

    Returns
    -------
    str
        ``" Did you mean 'x'?"`` for the closest choice, or ``""`` where none is close.
    """
    choices = [str(choice) for choice in choices]
    same_case = [choice for choice in choices if choice.casefold() == str(name).casefold()]
    if same_case:
        return f" Did you mean {same_case[0]!r}?"
    close = difflib.get_close_matches(str(name), choices, n=1)
    if not close:
        lowered = {choice.casefold(): choice for choice in choices}
        close = [lowered[c] for c in difflib.get_close_matches(str(name).casefold(), lowered, n=1)]
    return f" Did you mean {close[0]!r}?" if close else ""
