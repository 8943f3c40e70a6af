"""Which device the children run on: `--device cpu|gpu|tpu|auto`, chosen through JAX_PLATFORMS.

jax cannot be asked about an accelerator safely in-process (`jax.devices('gpu')` raises without a
GPU, and `JAX_PLATFORMS=cuda` without CUDA failed at init in research section 4), so anything other
than the CPU is probed in a short child. `auto` only probes when an accelerator plugin is
installed; otherwise it is the CPU without a probe. The children report the device they really
used, and that is what the evidence says.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass

# JAX_PLATFORMS values to try, per requested device.
PLATFORMS = {"cpu": ("cpu",), "gpu": ("cuda", "rocm"), "tpu": ("tpu",)}
ACCELERATOR_PLUGINS = ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_rocm60_plugin", "jax_rocm7_plugin", "libtpu")

_PROBE = "import jax; d = jax.devices()[0]; print(d.platform, getattr(d, 'device_kind', ''), sep='|')"


@dataclass(frozen=True)
class DeviceChoice:
    requested: str
    platforms: str | None  # the JAX_PLATFORMS value for the children; None when unavailable
    description: str  # what was found, or why nothing was
    probed: bool = False

    @property
    def available(self) -> bool:
        return self.platforms is not None


def _probe(platforms: str, timeout: float = 60.0) -> tuple[bool, str]:
    env = dict(os.environ, JAX_PLATFORMS=platforms, TF_CPP_MIN_LOG_LEVEL="3")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return False, f"probing JAX_PLATFORMS={platforms} timed out"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return False, f"JAX_PLATFORMS={platforms}: {last[:200]}"
    platform, _, kind = done.stdout.strip().rpartition("\n")[2].partition("|")
    return True, f"{platform}:{kind}" if kind else platform


@functools.cache
def choose_device(requested: str = "auto") -> DeviceChoice:
    """Resolve a requested device to a JAX_PLATFORMS value (probing in a child where needed)."""
    requested = requested.lower()
    if requested == "cpu":
        return DeviceChoice("cpu", "cpu", "cpu")
    if requested == "auto":
        if not any(importlib.util.find_spec(name) for name in ACCELERATOR_PLUGINS):
            return DeviceChoice("auto", "cpu", "cpu (no accelerator plugin installed)")
        ok, text = _probe("")
        if ok:
            platform = text.partition(":")[0]
            return DeviceChoice("auto", platform, text, probed=True)
        return DeviceChoice("auto", "cpu", f"cpu (probe failed: {text})", probed=True)
    if requested not in PLATFORMS:
        return DeviceChoice(requested, None, f"unknown device {requested!r}; use cpu, gpu, tpu or auto")
    reasons = []
    for platforms in PLATFORMS[requested]:
        ok, text = _probe(platforms)
        if ok:
            return DeviceChoice(requested, platforms, text, probed=True)
        reasons.append(text)
    return DeviceChoice(requested, None, f"no {requested} available ({'; '.join(reasons)})", probed=True)
