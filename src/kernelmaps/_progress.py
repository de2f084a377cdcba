"""Temporary stub (replaced by the progress module)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


class Progress:
    def __init__(self, owner: str, verbose: int = 0, stream: Any = None, sink: Any = None) -> None:
        self.owner, self.verbose = owner, int(verbose)

    @property
    def enabled(self) -> bool:
        return self.verbose > 0

    def log(self, message: str, level: int = 1) -> None:
        if self.verbose >= level:
            print(f"[{self.owner}] {message}", flush=True)

    @contextlib.contextmanager
    def rows(self, what: str, total: int | None, level: int = 2) -> Iterator[Any]:
        yield None
