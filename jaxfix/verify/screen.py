"""Screening made-up inputs on the original before both versions run them.

A synthesized or guessed value can send a `while` loop on a traced value into an endless loop
(`while lr > floor: lr = lr * decay` with decay = 1.5). Run eagerly, the original's Python loop is
stopped by the child's per-task alarm; the rewritten `lax.while_loop` runs inside XLA where no
alarm reaches it, so the whole rewritten child is killed at its limit and every verdict of the
file is lost. So, for callables whose original contains a `while` loop, each made-up call is first
run alone on the original under `jax.disable_jit()` (interruptible) with a short limit, and only
calls that finish in time go on to the comparison. Recorded and declared inputs are not screened:
the user's own code made them, and they ran to completion.
"""

from __future__ import annotations

import pickle

from jaxfix.verify.device import DeviceChoice
from jaxfix.verify.protocol import Job, Task
from jaxfix.verify.runner import STARTUP_ALLOWANCE, run_versions

PER_CALL_SECONDS = 3.0


def needs_screening(source: str, start_line: int, end_line: int) -> bool:
    """Whether the callable's original text (lines start..end) holds a `while` loop."""
    lines = source.splitlines()[start_line - 1 : end_line]
    return any(line.lstrip().startswith("while ") for line in lines)


def screen(
    job: Job, tasks: list[Task], choice: DeviceChoice, *, per_call: float = PER_CALL_SECONDS, cwd: str | None = None
) -> tuple[dict[str, bytes], dict[str, str]]:
    """Per task id, the pickled calls that finished on the original within `per_call` seconds, and
    per task id whose calls were dropped, why. A screen that cannot run keeps every call."""
    singles: list[Task] = []
    for task in tasks:
        for number, call in enumerate(pickle.loads(task.calls_pickle or pickle.dumps([]))):
            singles.append(Task(id=f"{task.id}#{number}", kind="calls", target=task.target, target_kind=task.target_kind,
                                calls_pickle=pickle.dumps([call]), grads=False, tree_roundtrip=False))
    probe = Job(job.module_name, job.path, job.source, job.sys_path, True, singles, filename=job.filename,
                task_timeout=per_call, timing_budget=0.0, max_repeats=0)
    [result] = run_versions([probe], choice, timeout=STARTUP_ALLOWANCE + per_call * (len(singles) + 1), cwd=cwd)
    kept: dict[str, bytes] = {}
    dropped: dict[str, str] = {}
    for task in tasks:
        calls = pickle.loads(task.calls_pickle or pickle.dumps([]))
        if not result.ok:
            kept[task.id] = task.calls_pickle or pickle.dumps([])
            continue
        good, timeouts = [], 0
        for number, call in enumerate(calls):
            outcome = result.tasks.get(f"{task.id}#{number}")
            if outcome is not None and outcome.error and "timed out" in outcome.error:
                timeouts += 1
            else:
                good.append(call)
        kept[task.id] = pickle.dumps(good)
        if timeouts:
            dropped[task.id] = (f"{timeouts} of {len(calls)} made-up input(s) did not finish within {per_call:g} s on the "
                                f"original (run eagerly) and were left out")
    return kept, dropped
