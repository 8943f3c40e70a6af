"""A progress bar on a terminal (rich), nothing at all when stderr is not one or --quiet."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Progress:
    bar: object = None
    task: object = None

    def total(self, count: int) -> None:
        if self.bar is not None:
            self.task = self.bar.add_task("jaxfix", total=count)

    def advance(self, _outcome=None) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.advance(self.task)


@contextlib.contextmanager
def progress(enabled: bool) -> Iterator[Progress]:
    if not enabled or not sys.stderr.isatty():
        yield Progress()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as RichProgress

    bar = RichProgress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True,
    )
    with bar:
        yield Progress(bar)
