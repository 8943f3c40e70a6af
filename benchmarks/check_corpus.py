"""How fast is `jaxfix check` over real JAX code, next to merely parsing it with libcst?

Corpus: the source trees of the installed jax, flax and optax packages (pin them with
`pip install ".[pinned]"`: jax 0.10.2, flax 0.12.8, optax 0.2.8). Prints wall time,
files/s and lines/s for `jaxfix check --select ALL` with -j 1 and -j 2 (a real
subprocess, start-up included) and for libcst-parsing every file (serial, and with a
2-process pool), then the ratios. Goals: a cold check -j 2 under a third of
parse-everything; a warm (cached) run at least 10x faster than a cold one. Each row
also gives the CPU seconds of all processes involved, which stay comparable when the
machine is busy with other work (wall times do not).

    python benchmarks/check_corpus.py [--repeat 1]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst as cst

PACKAGES = ("jax", "flax", "optax")


def corpus() -> list[Path]:
    roots = [Path(importlib.import_module(name).__file__).parent for name in PACKAGES]
    return sorted(p for root in roots for p in root.rglob("*.py"))


def parse_one(path: Path) -> int:
    try:
        cst.parse_module(path.read_text(encoding="utf-8"))
    except Exception:
        return 0
    return 1


def cpu_seconds() -> float:
    """User+system CPU of this process and its waited-for children (pool workers, subprocesses)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def time_parse(files: list[Path], workers: int) -> tuple[float, float]:
    """(wall, CPU) seconds to libcst-parse every file."""
    start, cpu = time.perf_counter(), cpu_seconds()
    if workers == 1:
        for path in files:
            parse_one(path)
    else:
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(parse_one, files, chunksize=8))
    return time.perf_counter() - start, cpu_seconds() - cpu


def time_check(roots: list[str], jobs: int, cache_cwd: str | None = None) -> tuple[float, float, int]:
    """One `jaxfix check` subprocess; cold (--no-cache) unless a cache folder's cwd is given."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    cmd = [sys.executable, "-m", "jaxfix", "check", "--select", "ALL", "-j", str(jobs), "--statistics", *roots]
    if cache_cwd is None:
        cmd.insert(4, "--no-cache")
    start, cpu = time.perf_counter(), cpu_seconds()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cache_cwd)
    elapsed, used = time.perf_counter() - start, cpu_seconds() - cpu
    if proc.returncode not in (0, 1):
        print(proc.stderr[-2000:], file=sys.stderr)
    findings = sum(int(line.split()[0]) for line in proc.stdout.splitlines() if line.strip())
    return elapsed, used, findings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    files = corpus()
    lines = sum(len(p.read_bytes().splitlines()) for p in files)
    versions = ", ".join(f"{n} {importlib.metadata.version(n)}" for n in PACKAGES)
    roots = [str(Path(importlib.import_module(n).__file__).parent) for n in PACKAGES]
    print(f"corpus: {versions}: {len(files)} files, {lines} lines; {os.cpu_count()} cores")

    def best(fn):
        return min((fn() for _ in range(args.repeat)), key=lambda r: r[0])

    rows = [
        ("libcst parse-everything, 1 process", *best(lambda: time_parse(files, 1)), None),
        ("libcst parse-everything, 2 processes", *best(lambda: time_parse(files, 2)), None),
    ]
    for jobs in (1, 2):
        rows.append((f"jaxfix check -j {jobs}, cold (--no-cache)", *best(lambda: time_check(roots, jobs))))
    with tempfile.TemporaryDirectory() as cache_cwd:
        time_check(roots, 2, cache_cwd)  # fills .jaxfix_cache
        for jobs in (1, 2):
            rows.append((f"jaxfix check -j {jobs}, warm (cached)", *best(lambda: time_check(roots, jobs, cache_cwd))))
    print("(CPU = user+system seconds of all processes: the figure to compare on a loaded machine)")
    for label, seconds, cpu, findings in rows:
        extra = "" if findings is None else f"  ({findings} findings)"
        print(
            f"{label:<40} {seconds:7.2f} s wall {cpu:7.2f} s CPU  {len(files) / seconds:6.0f} files/s"
            f"  {lines / seconds:8.0f} lines/s{extra}"
        )
    parse1, parse2, cold2, warm2 = rows[0], rows[1], rows[3], rows[5]
    print(f"ratio cold check -j2 / parse-everything (1 process), wall: {cold2[1] / parse1[1]:.3f}  (goal < 0.333)")
    print(f"ratio cold check -j2 / parse-everything (2 processes), wall: {cold2[1] / parse2[1]:.3f}")
    print(f"ratio cold check CPU / parse-everything CPU: {cold2[2] / parse1[2]:.3f}")
    print(f"warm speed-up -j2: wall {cold2[1] / warm2[1]:.1f}x, CPU {cold2[2] / warm2[2]:.1f}x  (goal >= 10x)")


if __name__ == "__main__":
    main()
