"""Run a user's command with jaxfix's monitor injected, and hand back its event lines.

The monitor is `_bootstrap/sitecustomize.py`, put first on the child's PYTHONPATH (the approach
of `jaxfix verify --record`): every Python process the command starts (pytest, xdist workers,
multiprocessing children) loads it, and it wakes up only when that process imports jax. jaxfix's
own process never imports the user's code.

The command's standard output and error are not captured: they reach the terminal as the
program writes them (with `to_stderr`, its standard output goes to jaxfix's standard error, so
that `--json` output stays clean). With a timeout, the command runs in its own session and the
whole process group is ended when the time is up; Ctrl-C is passed on to it either way, and what
was recorded until then is still reported.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from jaxfix.analysis.transforms import WRAPPED_FUNCTION_ATTRIBUTES

BOOTSTRAP_DIR = str(Path(__file__).resolve().with_name("_bootstrap"))
EVENT_LIMIT = 100_000  # per process; beyond it a "truncated" event is written and counting stops
MESSAGE_LIMIT = 20  # full cache-miss texts kept per function per process
KILL_GRACE = 5.0  # seconds between SIGTERM and SIGKILL after a timeout


@dataclass
class RunOutcome:
    """What happened to the command, and the events its processes wrote."""

    argv: list[str]
    returncode: int | None  # None when it could not be started
    seconds: float
    events: dict[int, list[dict]] = field(default_factory=dict)  # pid -> events in order
    problem: str | None = None  # one line: not found, not executable, timed out, interrupted
    timed_out: bool = False
    interrupted: bool = False
    bad_lines: int = 0  # event lines that could not be read (a process killed mid-write)

    @property
    def monitored(self) -> bool:
        """Some Python process of the command loaded the monitor (python -I/-E ignore PYTHONPATH)."""
        return any(e.get("k") == "start" for events in self.events.values() for e in events)

    @property
    def used_jax(self) -> bool:
        return any(e.get("k") == "jax" for events in self.events.values() for e in events)


def child_env(out_dir: str, base: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["JAXFIX_EXPLAIN"] = json.dumps(
        {"out": out_dir, "limit": EVENT_LIMIT, "message_limit": MESSAGE_LIMIT, "unwrap": list(WRAPPED_FUNCTION_ATTRIBUTES)}
    )
    paths = [BOOTSTRAP_DIR, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def read_events(folder: str | Path) -> tuple[dict[int, list[dict]], int]:
    events: dict[int, list[dict]] = {}
    bad = 0
    for path in sorted(Path(folder).glob("events-*.jsonl")):
        try:
            pid = int(path.stem.split("-", 1)[1])
        except ValueError:
            continue
        items = events.setdefault(pid, [])
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError:
                    bad += 1
    return events, bad


def _kill(process: subprocess.Popen, group: bool) -> None:
    """SIGTERM, then SIGKILL after a grace period: the whole group when the child leads one."""

    def send(sig: int) -> None:
        try:
            if group:
                os.killpg(process.pid, sig)
            else:
                process.send_signal(sig)
        except (ProcessLookupError, PermissionError):
            pass

    send(signal.SIGTERM)
    try:
        process.wait(KILL_GRACE)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        process.wait()


def run_command(
    argv: list[str],
    *,
    timeout: float | None = None,
    cwd: str | None = None,
    to_stderr: bool = False,
    env: dict[str, str] | None = None,
) -> RunOutcome:
    """Run `argv` (no shell) under the monitor; never raises for a command that fails or is missing."""
    if not argv:
        return RunOutcome(argv, None, 0.0, problem="no command given (usage: jaxfix explain -- python script.py)")
    with tempfile.TemporaryDirectory(prefix="jaxfix-explain-") as tmp:
        started = time.perf_counter()
        own_session = timeout is not None and os.name == "posix"
        stdout = None
        if to_stderr:
            try:
                stdout = sys.stderr.fileno()
            except (AttributeError, OSError, ValueError):  # no real stderr (embedded, notebooks)
                stdout = subprocess.DEVNULL
        try:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=child_env(tmp, env),
                stdout=stdout,
                start_new_session=own_session,
            )
        except FileNotFoundError:
            return RunOutcome(argv, None, 0.0, problem=f"command not found: {argv[0]}")
        except PermissionError:
            return RunOutcome(argv, None, 0.0, problem=f"cannot execute: {argv[0]} (permission denied)")
        except OSError as exc:
            return RunOutcome(argv, None, 0.0, problem=f"cannot start {argv[0]}: {exc.strerror or exc}")
        outcome = RunOutcome(argv, None, 0.0)
        deadline = None if timeout is None else started + timeout
        while True:
            try:
                remaining = None if deadline is None else max(0.0, deadline - time.perf_counter())
                outcome.returncode = process.wait(remaining)
                break
            except subprocess.TimeoutExpired:
                if not outcome.interrupted:
                    outcome.timed_out = True
                    outcome.problem = f"timed out after {timeout:g} s; the command was stopped"
                _kill(process, own_session)
                outcome.returncode = process.returncode
                break
            except KeyboardInterrupt:
                # Without its own session the child got the Ctrl-C too; with one, pass it on.
                outcome.interrupted = True
                outcome.problem = "interrupted (Ctrl-C); reporting what was recorded so far"
                if own_session:
                    try:
                        os.killpg(process.pid, signal.SIGINT)
                    except (ProcessLookupError, PermissionError):
                        pass
                deadline = time.perf_counter() + KILL_GRACE
                timeout = KILL_GRACE
        outcome.seconds = time.perf_counter() - started
        outcome.events, outcome.bad_lines = read_events(tmp)
        return outcome
