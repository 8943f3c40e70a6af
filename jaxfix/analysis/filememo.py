"""What the analyses keep of the last file they looked at, dropped once a file is done.

The screens of several rules ask about one file's tree in turn, so an analysis keeps what it
computed for the last tree it was asked about (`astscan.nodes`, `ImportMap.from_ast`,
`trace_screen`, ...). Kept past the file, those memos keep its whole tree alive; the cyclic
collector then walks every node of it after each file (a third of a second of a corpus check).
Each memo registers how to drop it (`on_forget`); the engine calls `forget` when a file's analysis
is done (`runner.run_job`). The editor's analyses do not: they reuse a document's trees.
"""

from __future__ import annotations

from collections.abc import Callable

_FORGETTERS: list[Callable[[], None]] = []


def on_forget(drop: Callable[[], None]) -> Callable[[], None]:
    """Register `drop` (it resets one memo) to run at `forget`."""
    _FORGETTERS.append(drop)
    return drop


def forget() -> None:
    """Drop every registered memo of the last file."""
    for drop in _FORGETTERS:
        drop()
