"""Launching verification children: one fresh interpreter per version, bounded in time and output.

Both versions run at the same time by default (two cores halve the wall time); each child is its
own process group, killed whole when it runs past its limit. Jobs and results travel as pickle
files, so whatever user code prints cannot corrupt them; its output goes to a file of which only
the tail is kept.
"""

from __future__ import annotations

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
            deadline = time.monotonic() + timeout
            return [one.finish(deadline) for one in launched]
        results = []
        for i, job in enumerate(jobs):
            one = _Launched(job, device, folder, f"v{i}", cwd)
            results.append(one.finish(time.monotonic() + timeout))
        return results
