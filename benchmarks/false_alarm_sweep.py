"""False-alarm sweep: every finding jaxfix reports on well-tested library code.

Runs `jaxfix check --select ALL --no-cache --output-format json` (a real subprocess, as a user
would) over the installed source trees of jax, flax, optax, equinox and chex, and prints the
findings per package and per code, then each finding. These packages are correct code: a finding
there is a false alarm unless it can be shown to crash (or recompile) under `jit`.

    python benchmarks/false_alarm_sweep.py [--packages jax flax ...] [--select ALL] [-j 2]

Exit status 0 always (this measures, it does not gate); `--max N` makes it exit 1 when there
are more than N findings.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

PACKAGES = ("jax", "flax", "optax", "equinox", "chex")
ROOT = Path(__file__).resolve().parent.parent


def package_root(name: str) -> Path:
    return Path(importlib.import_module(name).__file__).parent


def sweep(name: str, select: str, jobs: int) -> tuple[list[dict], float]:
    root = package_root(name)
    cmd = [sys.executable, "-m", "jaxfix", "check", "--select", select, "--no-cache", "--output-format", "json", "-q"]
    cmd += ["-j", str(jobs), str(root)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=_env())
    elapsed = time.perf_counter() - start
    text = proc.stdout.strip()
    if not text.startswith("["):
        raise SystemExit(f"jaxfix check failed on {name} (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    findings = json.loads(text)
    for f in findings:
        f["package"] = name
        f["relpath"] = str(Path(f["path"]).resolve().relative_to(root.parent))
    return findings, elapsed


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", nargs="+", default=list(PACKAGES))
    parser.add_argument("--select", default="ALL")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--max", type=int, default=None, help="exit 1 when there are more findings than this")
    args = parser.parse_args(argv)

    everything: list[dict] = []
    print(f"jaxfix check --select {args.select} --no-cache -j {args.jobs}")
    print(f"{'package':<10} {'files':>6} {'findings':>9} {'seconds':>8}")
    for name in args.packages:
        findings, elapsed = sweep(name, args.select, args.jobs)
        files = sum(1 for _ in package_root(name).rglob("*.py"))
        print(f"{name:<10} {files:>6} {len(findings):>9} {elapsed:>8.1f}")
        everything.extend(findings)
    print(f"{'total':<10} {'':>6} {len(everything):>9}")

    per_code = collections.Counter(f["code"] for f in everything)
    print("\nper code:")
    for code, n in sorted(per_code.items()):
        print(f"  {code}: {n}")
    if not per_code:
        print("  (none)")
    if everything:
        print("\nfindings:")
        for f in sorted(everything, key=lambda f: (f["relpath"], f["line"], f["column"])):
            print(f"  {f['relpath']}:{f['line']}:{f['column']}: {f['code']} {f['message']}")
    if args.max is not None and len(everything) > args.max:
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
