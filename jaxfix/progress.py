"""A progress bar on a terminal (rich), nothing at all when stderr is not one or --quiet.

The bar counts files; while a file is analysed in this process its description says how far
that file is (`jaxfix.engine.steps`): the rules run and the findings so far, and the fix round,
so one large file does not sit at 0/1 for the whole run."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class Progress:
    bar: object = None
    task: object = None
    path: str = ""  # the name of the file being analysed
    fix_round: int = 0  # the fix round under way in the file being fixed (0: its first scan)
    applied: int = 0

    def total(self, count: int) -> None:
        if self.bar is not None:
            self.task = self.bar.add_task("jaxfix", total=count)

    def advance(self, _outcome=None) -> None:
        if self.bar is not None and self.task is not None:
            self.fix_round = self.applied = 0
            self.bar.update(self.task, description="jaxfix", advance=1)

    def step(self, kind: str, path: str, *numbers: int) -> None:
        """A step inside the file being analysed (`jaxfix.engine.steps`)."""
        if self.bar is None or self.task is None:
            return
        if kind == "round":
            self.fix_round, self.applied = numbers
            where = f"jaxfix {self.path} round {self.fix_round} ({self.applied:,} fixed)"
        else:
            done, total, findings = numbers
            self.path = os.path.basename(path)
            if self.fix_round:  # short: the bar's line is a terminal's width
                where = f"jaxfix {self.path} round {self.fix_round} ({self.applied:,} fixed): rules {done}/{total}"
            else:
                where = f"jaxfix {self.path}: rules {done}/{total}, {findings:,} findings"
        self.bar.update(self.task, description=where)


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

    from jaxfix.engine import steps

    bar = RichProgress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True,
    )
    shown = Progress(bar)
    steps.listen(shown.step)
    try:
        with bar:
            yield shown
    finally:
        steps.listen(None)
