"""Launching verification children: one fresh interpreter per version, bounded in time and output.

Both versions run at the same time by default (two cores halve the wall time); each child is its
own process group, killed whole when it runs past its limit. Jobs and results travel as pickle
files, so whatever user code prints cannot corrupt them; its output goes to a file of which only
the tail is kept.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jaxfix.verify.device import DeviceChoice
from jaxfix.verify.protocol import Job, VersionResult

TAIL_BYTES = 4000
STARTUP_ALLOWANCE = 30.0  # seconds for interpreter + jax start + module import, beyond task limits
JAXFIX_ROOT = str(Path(__file__).resolve().parents[2])


def child_env(device: DeviceChoice, extra_path: list[str] = ()) -> dict[str, str]:
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = device.platforms or "cpu"
    env["JAX_ENABLE_COMPILATION_CACHE"] = "false"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    path = [*extra_path, JAXFIX_ROOT, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(path))
    return env


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - TAIL_BYTES))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


class _Launched:
    def __init__(self, job: Job, device: DeviceChoice, folder: Path, name: str, cwd: str | None) -> None:
        self.folder = folder
        self.job_path = folder / f"{name}.job"
        self.result_path = folder / f"{name}.result"
        self.log_path = folder / f"{name}.log"
        self.job_path.write_bytes(pickle.dumps(job))
        self.log = open(self.log_path, "wb")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jaxfix.verify.child", str(self.job_path), str(self.result_path)],
            env=child_env(device),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def finish(self, deadline: float) -> VersionResult:
        timed_out = False
        try:
            self.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(self.process.pid, 9)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
            self.process.wait()
        self.log.close()
        wall = time.perf_counter() - self.started
        tail = _tail(self.log_path)
        if timed_out:
            return VersionResult(ok=False, error=f"timed out after {wall:.0f} s and was stopped", wall=wall, stderr_tail=tail)
        if self.result_path.exists():
            try:
                result: VersionResult = pickle.loads(self.result_path.read_bytes())
            except Exception as exc:  # noqa: BLE001 - a result we cannot read is a failed run
                return VersionResult(ok=False, error=f"unreadable result: {exc}", wall=wall, stderr_tail=tail)
            result.stderr_tail = tail
            result.phases["in child"] = result.wall
            result.wall = wall
            return result
        code = self.process.returncode
        why = f"killed by signal {-code}" if code < 0 else f"exited with status {code}"
        last = (tail.strip().splitlines() or ["no output"])[-1]
        return VersionResult(ok=False, error=f"the child process {why} before reporting: {last}", wall=wall, stderr_tail=tail)


def run_versions(
    jobs: list[Job], device: DeviceChoice, *, timeout: float, parallel: bool = True, cwd: str | None = None
) -> list[VersionResult]:
    """Run each job in its own fresh child; `timeout` bounds each child's whole life."""
    with tempfile.TemporaryDirectory(prefix="jaxfix-verify-") as tmp:
        folder = Path(tmp)
        if parallel:
            launched = [_Launched(job, device, folder, f"v{i}", cwd) for i, job in enumerate(jobs)]
            start = time.monotonic()
            deadline = start + timeout
            results = [launched[0].finish(deadline)]
            limit = hang_limit(results[0], timeout)
            results += [one.finish(min(deadline, start + limit)) for one in launched[1:]]
            return [_say_limit(r, results[0], limit, timeout) for r in results]
        results = []
        for i, job in enumerate(jobs):
            limit = timeout if not results else hang_limit(results[0], timeout)
            one = _Launched(job, device, folder, f"v{i}", cwd)
            results.append(_say_limit(one.finish(time.monotonic() + limit), results[0] if results else None, limit, timeout))
        return results


HANG_FACTOR = 5.0  # the rewrite may take this many times the original's own time before it counts as hanging
HANG_FLOOR = 60.0  # ... and never less than this (jax start on a busy machine, compiling what the original ran eagerly)


def hang_limit(original: VersionResult, timeout: float) -> float:
    """The rewritten version's limit: HANG_FACTOR times the original's time on the same inputs (at
    least HANG_FLOOR), not the flat per-module limit, so a rewrite that hangs is stopped early."""
    if not original.ok or original.wall <= 0:
        return timeout
    return min(timeout, max(HANG_FLOOR, HANG_FACTOR * original.wall))


def _say_limit(result: VersionResult, original: VersionResult | None, limit: float, timeout: float) -> VersionResult:
    if result is original or original is None or result.ok or limit >= timeout or not (result.error or "").startswith("timed out"):
        return result
    result.error = f"{result.error} (the limit: {HANG_FACTOR:g}x the original's {original.wall:.1f} s, at least {HANG_FLOOR:g} s)"
    return result


def run_pair(
    jobs: list[Job], device: DeviceChoice, *, timeout: float, parallel: bool = True, cwd: str | None = None,
    runs: dict[bytes, bytes] | None = None,
) -> list[VersionResult]:
    """`run_versions` of (original, rewritten), reusing the original's run from `runs` where the
    very same original job already ran (the fixes of one file verified one by one: each part's
    rewrite runs, the original once). `runs` maps a job's pickle to its pickled result; each use
    gets its own copy (judging may change a result)."""
    if runs is None:
        return run_versions(jobs, device, timeout=timeout, parallel=parallel, cwd=cwd)
    original, rewritten = jobs
    # by value: a pickle of equal jobs may differ in its memo (a string shared or not)
    key = hashlib.sha256(repr((original, device.platforms, cwd)).encode()).digest()
    if key in runs:
        before = pickle.loads(runs[key])
        [after] = run_versions([rewritten], device, timeout=hang_limit(before, timeout), parallel=parallel, cwd=cwd)
        return [before, _say_limit(after, before, hang_limit(before, timeout), timeout)]
    before, after = run_versions(jobs, device, timeout=timeout, parallel=parallel, cwd=cwd)
    if before.ok:
        try:
            runs[key] = pickle.dumps(before)
        except Exception:  # noqa: BLE001 - a result that cannot be kept is run again next time
            pass
    return [before, after]
