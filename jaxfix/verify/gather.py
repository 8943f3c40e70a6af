"""Inputs with zero configuration: what `verify` runs when given neither --examples nor --record.

Sources, in order; each later one runs only for changed callables still without calls:
1. the project's pytest suite, only the test files that reach the changed module (`suite.py`);
2. the module's own doctests (`>>>` in the changed callables' docstrings) and its
   `if __name__ == "__main__":` block, run in one process (`_recorder/run_main.py`);
3. (in the plan, not here) values synthesized from annotations (`synthesize.py`).
All of them run the original code under the call recorder (`recording.py`), in child processes,
within one time budget (`--record-timeout`). Calls carry their source ("pytest", "doctest",
"__main__"), which the verdicts name.
"""

from __future__ import annotations

import ast
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from jaxfix.verify import suite
from jaxfix.verify._recorder.run_main import main_blocks
from jaxfix.verify.recording import Recording, record_calls

DEFAULT_RECORD_TIMEOUT = 180.0
MIN_SOURCE_SECONDS = 10.0  # a source is not started with less time than this left


@dataclass
class SuiteRun:
    """The project's tests, run once for several changed files (`api.verify_results`): this
    file's share of that one recording, and what ran."""

    recording: Recording
    tests: list[Path]
    why: str | None
    files: int  # how many changed files the one run watched
    timeout: float


@dataclass
class Gathered:
    recording: Recording
    notes: list[str] = field(default_factory=list)  # one line per source that ran, for the report


def _docstring_owners(source: str, targets: dict[str, str]) -> list[str]:
    """The changed callables whose docstrings hold `>>>` examples."""
    found = []
    tree = ast.parse(source)

    def walk(body, prefix):
        for node in body:
            if isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node) or ""
                if prefix + node.name in targets and ">>>" in doc:
                    found.append(prefix + node.name)

    walk(tree.body, "")
    return found


def _short(test: Path | str, root: Path | str) -> str:
    try:
        return str(Path(test).relative_to(root))
    except ValueError:
        return str(test)


def _missing(targets: dict[str, str], recording: Recording) -> dict[str, str]:
    return {name: kind for name, kind in targets.items() if not recording.count(name)}


def _last_line(output: str) -> str:
    """The line that says why a run failed: the last exception line, else the last line."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^(E\s+)?[\w.]*(Error|Exception|Interrupt)\b", line)]
    return (errors or lines or ["no output"])[-1][:200]


def gather_inputs(
    path: str,
    source: str,
    targets: dict[str, str],
    *,
    module_name: str,
    sys_path: list[str],
    limit: int,
    timeout: float = DEFAULT_RECORD_TIMEOUT,
    announce: Callable[[str], None] | None = None,
    run_main: bool = True,
    eager: bool | list[str] = False,
    suite_run: SuiteRun | None = None,
) -> Gathered:
    """Record calls of `targets` (qualname -> kind) of the file at `path` (text `source`) from
    the project's own tests, doctests and `__main__` block (not with `run_main=False`).
    `announce` hears, before anything runs, which of the user's code will run and the time limit
    (a `__main__` block may be a real training run with side effects)."""
    gathered = Gathered(Recording({}, None, 0, ""))
    if not targets:
        return gathered
    deadline = time.monotonic() + timeout
    # eager: the original of a control-flow fix raises under jit; the changed callables (True),
    # or those named (the ones a control-flow fix changed), run eagerly while recording, so the
    # program goes on past the first such call
    eager_names = list(targets) if eager is True else [n for n in (eager or ()) if n in targets]
    common = dict(path=path, limit=limit, module_name=module_name, sys_path=sys_path, eager=eager_names)

    if suite_run is not None:  # the suite already ran once for all changed files
        root, why, tests = Path(path).parent, suite_run.why, []
    else:
        root, why, tests = suite.select_tests(path)
    doctests = _docstring_owners(source, targets)
    has_main = run_main and bool(main_blocks(source))
    if announce is not None:
        plan = [f"{len(tests)} test file(s) of the project's pytest suite ({', '.join(_short(t, root) for t in tests[:3])}"
                f"{', ...' if len(tests) > 3 else ''})"] if tests else []
        plan += ["the doctests of " + ", ".join(doctests)] if doctests else []
        plan += [f"the `if __name__ == \"__main__\":` block of {Path(path).name} (with its side effects; --no-run-main skips it)"] if has_main else []
        if plan:
            announce(f"{path}: will run the original code to record inputs: {'; then, for callables still without calls, '.join(plan)}; "
                     f"time limit {timeout:g} s in all (--record-timeout)")
    if suite_run is not None:
        tests, timeout_used = suite_run.tests, suite_run.timeout
        recording = suite_run.recording
    if tests and suite_run is None:
        timeout_used = timeout
        recording = record_calls(
            suite.pytest_command(root, tests), targets=targets, timeout=timeout, cwd=str(root), source="pytest",
            progress=f"recording inputs: pytest on {len(tests)} test file(s) that import {Path(path).name}", **common,
        )
    if tests:
        gathered.recording.merge(recording, limit)
        gathered.recording.returncode = recording.returncode
        calls = sum(len(v) for v in recording.calls.values())
        once = f", once for {suite_run.files} changed files" if suite_run is not None and suite_run.files > 1 else ""
        note = f"inputs: ran {len(tests)} test file(s) of the project's pytest suite ({why}{once}): {calls} call(s) recorded"
        if recording.timed_out:
            note += f"; stopped at the time limit ({timeout_used:g} s, --record-timeout), the calls recorded so far are used"
        elif "No module named pytest" in recording.output_tail:
            note = f"inputs: the project has a pytest suite ({why}) but pytest is not installed in this environment"
        elif recording.returncode not in (0, 5):
            note += (f"; the suite fails on the original code (exit status {recording.returncode}: "
                     f"{_last_line(recording.output_tail)}), its recorded calls are still used")
        gathered.notes.append(note)
        gathered.notes.extend(f"recorder: {e}" for e in recording.errors)

    missing = _missing(targets, gathered.recording)
    doctests = _docstring_owners(source, missing)
    if not run_main and main_blocks(source):
        gathered.notes.append(f"inputs: the __main__ block of {Path(path).name} was not run (--no-run-main)")
    left = deadline - time.monotonic()
    if missing and (doctests or has_main):
        if left < MIN_SOURCE_SECONDS:
            gathered.notes.append("inputs: no time left for the doctests and __main__ block (--record-timeout)")
            return gathered
        command = [sys.executable, "-m", "jaxfix.verify._recorder.run_main"]
        if doctests:
            command += ["--doctest", ",".join(doctests)]
        if not has_main:
            command.append("--no-main")
        what = " and ".join(filter(None, ["doctests" if doctests else "", "the __main__ block" if has_main else ""]))
        recording = record_calls(
            [*command, str(Path(path).resolve())], targets=missing, timeout=left, cwd=str(Path(path).resolve().parent),
            source="__main__", progress=f"recording inputs: {what} of {Path(path).name}", **common,
        )
        recording.main_failed = has_main and recording.returncode != 0 and not recording.timed_out
        gathered.recording.merge(recording, limit)
        calls = sum(len(v) for v in recording.calls.values())
        note = f"inputs: ran {what} of {Path(path).name}: {calls} call(s) recorded"
        if recording.timed_out:
            note += f"; stopped at the time limit ({left:.0f} s left of --record-timeout), the calls recorded so far are used"
        elif recording.returncode != 0:
            note += f"; it fails on the original code (exit status {recording.returncode}: {_last_line(recording.output_tail)})"
        gathered.notes.append(note)
        gathered.notes.extend(f"recorder: {e}" for e in recording.errors)
    return gathered
