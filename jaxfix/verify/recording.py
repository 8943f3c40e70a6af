"""Running a command against the original code with the call recorder watching one file.

Every input source that runs user code (`--record "CMD"`, the project's pytest suite, the
module's `__main__` block and doctests) goes through `record_calls`: the command runs in its own
process group with `_recorder/` first on PYTHONPATH (its sitecustomize.py wraps the changed
callables when the watched file is imported), within a time limit. The recorder writes each kept
call at once, so a command that fails, or is stopped at the limit, still gives what it recorded.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

RECORDER_DIR = Path(__file__).with_name("_recorder")


@dataclass
class Recording:
    calls: dict[str, list[bytes]]  # qualname -> pickled Calls (each names its source)
    module_name: str | None  # the name the command imported the module under
    returncode: int  # -1: stopped at the time limit
    output_tail: str
    skipped: dict[str, str] = field(default_factory=dict)  # qualname -> why calls were skipped
    errors: list[str] = field(default_factory=list)
    timed_out: bool = False
    seconds: float = 0.0
    sources: dict[str, list[str]] = field(default_factory=dict)  # qualname -> source of each kept call
    main_failed: bool = False  # the module's __main__ block ran and failed (often the bug being fixed)

    def count(self, qualname: str) -> int:
        return len(self.calls.get(qualname, ()))

    def source_of(self, qualname: str, default: str = "recorded") -> str:
        """Where the kept calls of `qualname` came from: "pytest", "__main__+doctest", ..."""
        names = list(dict.fromkeys(self.sources.get(qualname, ())))
        return "+".join(names) if names else default

    def merge(self, other: Recording, limit: int) -> None:
        """Add `other`'s calls for callables this recording has fewer than `limit` of."""
        for name, calls in other.calls.items():
            kept = self.calls.setdefault(name, [])
            room = max(0, limit - len(kept))
            kept.extend(calls[:room])
            self.sources.setdefault(name, []).extend(other.sources.get(name, [other.source_of(name)] * len(calls))[:room])
        for name, why in other.skipped.items():
            self.skipped.setdefault(name, why)
        self.errors.extend(other.errors)
        self.module_name = self.module_name or other.module_name
        self.main_failed = self.main_failed or other.main_failed


class _Progress:
    """One status line on stderr, rewritten in place, only when stderr is a terminal."""

    def __init__(self, what: str | None) -> None:
        self.what = what if what and sys.stderr.isatty() else None
        self.last = 0.0

    def tick(self, elapsed: float, timeout: float, force: bool = False) -> None:
        if self.what is None or (not force and time.monotonic() - self.last < 1.0):
            return
        self.last = time.monotonic()
        sys.stderr.write(f"\r\x1b[2Kjaxfix: {self.what} ({elapsed:.0f} s of at most {timeout:g} s)")
        sys.stderr.flush()

    def done(self) -> None:
        if self.what is not None:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


def recorder_env(config: dict) -> dict[str, str]:
    from jaxfix.verify.runner import JAXFIX_ROOT

    env = dict(os.environ)
    env["JAXFIX_RECORD"] = json.dumps(config)
    paths = [str(RECORDER_DIR), JAXFIX_ROOT, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(command: str | list[str], env: dict, cwd: str | None, timeout: float, progress: _Progress) -> tuple[int, str, bool]:
    shell = isinstance(command, str) and os.name != "nt"
    argv = command if shell or not isinstance(command, str) else shlex.split(command)
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            argv, shell=shell, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=os.name != "nt",
        )
        started = time.monotonic()
        timed_out = False
        while True:
            try:
                process.wait(timeout=0.25)
                break
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - started
                progress.tick(elapsed, timeout)
                if elapsed > timeout:
                    timed_out = True
                    _stop(process)
                    break
        progress.done()
        log.seek(max(0, log.seek(0, os.SEEK_END) - 4000))
        output = log.read().decode("utf-8", "replace")
    if timed_out:
        output = f"stopped at the time limit ({timeout:g} s)\n" + output
    return (-1 if timed_out else process.returncode), output, timed_out


def _stop(process: subprocess.Popen) -> None:
    try:
        if os.name != "nt":
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.wait()


def record_calls(
    command: str | list[str],
    *,
    path: str,
    targets: dict[str, str],
    limit: int = 5,
    timeout: float = 600.0,
    cwd: str | None = None,
    source: str = "recorded",
    module_name: str | None = None,
    sys_path: list[str] | None = None,
    progress: str | None = None,
    eager: Iterable[str] = (),
) -> Recording:
    """Run `command` (a shell command line, or an argv list) with the recorder watching `path`'s
    `targets` (qualname -> kind); calls are labelled `source`. `module_name`/`sys_path` tell the
    recorder how to import `path` when the command runs it as a script. `progress`: what to show
    on a terminal while it runs. `eager`: targets run under `jax.disable_jit()` (the original of a
    control-flow fix raises under jit: the program goes on past that call)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="jaxfix-record-") as tmp:
        config = {
            "path": os.path.realpath(path), "targets": targets, "limit": limit, "out": tmp, "source": source,
            "module_name": module_name, "sys_path": sys_path or [], "eager": sorted(eager),
        }
        code, output, timed_out = _run(command, recorder_env(config), cwd, timeout, _Progress(progress))
        return _collect(Path(tmp), "", limit, source, code, output, timed_out, started)


def record_files(
    command: str | list[str],
    watched: list[dict],
    *,
    limit: int = 5,
    timeout: float = 600.0,
    cwd: str | None = None,
    source: str = "recorded",
    progress: str | None = None,
) -> list[Recording]:
    """`record_calls` watching several files at once (each a dict of path, targets, module_name,
    sys_path, eager): one run of `command` (the project's test suite) gives each file its
    recording, in the order given."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="jaxfix-record-") as tmp:
        files = [
            {"path": os.path.realpath(w["path"]), "targets": w["targets"], "module_name": w.get("module_name"),
             "sys_path": w.get("sys_path") or [], "eager": sorted(w.get("eager") or ())}
            for w in watched
        ]
        config = {**files[0], "limit": limit, "out": tmp, "source": source, "also": files[1:]}
        code, output, timed_out = _run(command, recorder_env(config), cwd, timeout, _Progress(progress))
        return [
            _collect(Path(tmp), "" if n == 0 else f"-{n}", limit, source, code, output, timed_out, started)
            for n in range(len(files))
        ]


def _collect(folder: Path, suffix: str, limit: int, source: str, code: int, output: str, timed_out: bool, started: float) -> Recording:
    """The calls the recorder's processes wrote for one watched file (`rec-<pid><suffix>.pkl`)."""
    merged: dict[str, list[bytes]] = {}
    sources: dict[str, list[str]] = {}
    skipped: dict[str, str] = {}
    errors: list[str] = []
    found_name = None
    mine = re.compile(rf"rec-\d+{re.escape(suffix)}\.pkl")
    for file in sorted(f for f in folder.iterdir() if mine.fullmatch(f.name)):
        try:
            data = pickle.loads(file.read_bytes())
        except Exception as exc:  # noqa: BLE001 - a process killed mid-write
            errors.append(f"{file.name}: {exc}")
            continue
        found_name = found_name or data.get("module_name")
        for name, calls in data.get("calls", {}).items():
            room = max(0, limit - len(merged.setdefault(name, [])))
            merged[name].extend(calls[:room])
            sources.setdefault(name, []).extend(data.get("sources", {}).get(name, [source] * len(calls))[:room])
        skipped.update(data.get("skipped", {}))
        errors.extend(data.get("errors", []))
    return Recording(
        merged, found_name, code, output[-4000:], skipped, errors, timed_out=timed_out, seconds=time.monotonic() - started,
        sources=sources,
    )
