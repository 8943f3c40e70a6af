"""Progress inside one file's analysis, for a progress bar drawn by this process.

The bar counts files, so one large file showed 0/1 for the whole run (issue #33 item 1). The
analysis reports each rule done and each fix round here; a front end that draws a bar listens
(`listen`). Only this process's listener is called: a worker forked with one installed has the
parent's bar, which it must not draw.
"""

from __future__ import annotations

import os
from collections.abc import Callable

# (pid of the process that installed it, the listener): (kind, path, numbers) -> None
_listener: tuple[int, Callable[..., None]] | None = None


def listen(listener: Callable[..., None] | None) -> None:
    """Call `listener(kind, path, *numbers)` for each step reported in this process (None: stop)."""
    global _listener
    _listener = None if listener is None else (os.getpid(), listener)


def rule_done(path: str, done: int, total: int, findings: int) -> None:
    """`done` of the `total` rules that analyse `path` have run, with `findings` findings so far."""
    if _listener is not None and _listener[0] == os.getpid():
        _listener[1]("rule", path, done, total, findings)


def fix_round(number: int, applied: int) -> None:
    """Fix round `number` of the file being fixed has applied its fixes (`applied` in all so far);
    the file is analysed again."""
    if _listener is not None and _listener[0] == os.getpid():
        _listener[1]("round", "", number, applied)
