"""How fast is `jaxfix check` over real JAX code, next to merely parsing it, and next to Ruff?

Corpus: the source trees of the installed jax, flax and optax packages (pin them with
`pip install ".[pinned]"`: jax 0.10.2, flax 0.12.8, optax 0.2.8; 855 files, about 400,000 lines).
One run measures, side by side:

- stdlib `ast.parse` of every file in one process (the practical floor of a Python tool:
  reading and parsing each file once);
- `jaxfix check --select ALL -j 2 --no-cache` (cold: nothing reused), a real subprocess;
- the same with the result cache, after a run that filled it (warm: every file a cache hit);
- a user's first run: with the cache, starting from none (it writes every file's entry; issue
  #33 item 7: within the stdlib parse time too);
- `ruff check --select ALL --no-cache`, when Ruff is installed (the tool users compare with).

Goals (issue #21): cold within the time of parse-everything (ratio <= 1.0), warm within 0.3 s and
within 5% of cold. Each row gives wall seconds and the CPU seconds of all the processes involved:
on a machine busy with other work wall times stretch, CPU seconds much less, so compare CPU
there (and say what the load was). With `--repeat N` the rows are measured N times, interleaved,
and the best of each is shown.

    python benchmarks/check_corpus.py [--repeat 3] [--jobs 2]
"""

from __future__ import annotations

import argparse
import ast
import compileall
import importlib.metadata
import importlib.util
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PACKAGES = ("jax", "flax", "optax")
ROOT = Path(__file__).resolve().parent.parent


def roots() -> list[Path]:
    found = []
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            raise SystemExit(f"{name} is not installed: pip install '.[pinned]'")
        found.append(Path(spec.origin).parent)
    return found


def corpus() -> list[Path]:
    return sorted(p for root in roots() for p in root.rglob("*.py"))


def cpu_seconds() -> float:
    """User+system CPU of this process and its waited-for children (subprocesses and theirs)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure(fn: Callable[[], object]) -> tuple[float, float, object]:
    start, cpu = time.perf_counter(), cpu_seconds()
    out = fn()
    return time.perf_counter() - start, cpu_seconds() - cpu, out


def parse_everything(files: list[Path]) -> int:
    """`ast.parse` of every file in this process (the floor); the number that parsed."""
    parsed = 0
    for path in files:
        try:
            ast.parse(path.read_bytes(), filename=str(path))
        except (SyntaxError, ValueError):
            continue
        parsed += 1
    return parsed


def jaxfix_check(jobs: int, cwd: str, cached: bool) -> int:
    """One `jaxfix check` subprocess over the corpus; the number of findings it reported."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "jaxfix", "check", "--select", "ALL", "-j", str(jobs), "--statistics"]
    if not cached:
        cmd.append("--no-cache")
    proc = subprocess.run([*cmd, *map(str, roots())], capture_output=True, text=True, env=env, cwd=cwd)
    return statistics_total(proc)


# A `--statistics` row: "  146  JAX101  [*] cached-property-on-pytree".
_STATISTICS_ROW = re.compile(r"^\s*(\d+)\s+JAX\d+\b")


def statistics_total(proc: subprocess.CompletedProcess) -> int:
    """The findings a `jaxfix check --statistics` run reported, read from its rows only and checked
    against its exit code (0: none, 1: some): a failed run raises instead of reading as "0
    findings" (jax/flax/optax 0.10.2/0.12.8/0.2.8 have none under `--select ALL`: jaxfix's rules
    are about user code that calls JAX, and these packages are JAX itself)."""
    if proc.returncode not in (0, 1):
        raise SystemExit(f"jaxfix check failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    total = sum(int(m.group(1)) for m in map(_STATISTICS_ROW.match, proc.stdout.splitlines()) if m)
    if (total > 0) != (proc.returncode == 1):
        raise SystemExit(f"jaxfix check exited {proc.returncode} with {total} findings read:\n{proc.stdout[-2000:]}")
    return total


def first_check(jobs: int) -> int:
    """`jaxfix check` with the cache in a folder that has none yet: a user's first run."""
    with tempfile.TemporaryDirectory() as fresh:
        return jaxfix_check(jobs, fresh, cached=True)


def ruff_check(ruff: str, cwd: str) -> int:
    proc = subprocess.run(
        [ruff, "check", "--select", "ALL", "--no-cache", "--statistics", *map(str, roots())],
        capture_output=True, text=True, cwd=cwd,
    )
    return sum(int(line.split()[0]) for line in proc.stdout.splitlines() if line.strip()[:1].isdigit())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=1, help="measure every row this many times, interleaved")
    parser.add_argument("--jobs", type=int, default=2, help="jaxfix workers (-j)")
    args = parser.parse_args()
    files = corpus()
    lines = sum(len(p.read_bytes().splitlines()) for p in files)
    versions = ", ".join(f"{n} {importlib.metadata.version(n)}" for n in PACKAGES)
    ruff = shutil.which("ruff")
    print(f"corpus: {versions}: {len(files)} files, {lines} lines; {os.cpu_count()} cores")
    # Every run imports jaxfix: its bytecode is written now, as an install writes it (with
    # PYTHONDONTWRITEBYTECODE set, a module edited since would be compiled again in every run).
    compileall.compile_dir(str(ROOT / "jaxfix"), quiet=1)
    compileall.compile_dir(str(ROOT / "codemods"), quiet=1)
    with tempfile.TemporaryDirectory() as cold_cwd, tempfile.TemporaryDirectory() as warm_cwd:
        jaxfix_check(args.jobs, warm_cwd, cached=True)  # fills the cache the warm rows read
        rows: dict[str, Callable[[], object]] = {
            "stdlib ast.parse of every file, 1 process": lambda: parse_everything(files),
            f"jaxfix check -j {args.jobs}, cold (--no-cache)": lambda: jaxfix_check(args.jobs, cold_cwd, cached=False),
            f"jaxfix check -j {args.jobs}, warm (every file cached)": lambda: jaxfix_check(args.jobs, warm_cwd, cached=True),
            f"jaxfix check -j {args.jobs}, first run (writes the cache)": lambda: first_check(args.jobs),
        }
        if ruff:
            rows["ruff check --select ALL --no-cache"] = lambda: ruff_check(ruff, cold_cwd)
        best: dict[str, tuple[float, float, object]] = {}
        loads = []
        for _ in range(args.repeat):
            for label, fn in rows.items():
                wall, cpu, out = measure(fn)
                loads.append(os.getloadavg()[0])
                old = best.get(label)
                best[label] = (min(wall, old[0]) if old else wall, min(cpu, old[1]) if old else cpu, out)
    print(f"(best of {args.repeat}; CPU = user+system seconds of all processes; 1-minute load average "
          f"{min(loads):.1f} to {max(loads):.1f} while measuring)")
    for label, (wall, cpu, out) in best.items():
        what = f"{out} files parsed" if label.startswith("stdlib") else f"{out} findings"
        print(f"{label:<48} {wall:7.2f} s wall {cpu:7.2f} s CPU  {len(files) / wall:6.0f} files/s  ({what})")
    parse, cold, warm, first = (best[k] for k in list(rows)[:4])
    print(f"ratio cold / parse-everything: wall {cold[0] / parse[0]:.2f}, CPU {cold[1] / parse[1]:.2f}  (goal: wall <= 1.0)")
    print(f"ratio first run (cache written) / parse-everything: wall {first[0] / parse[0]:.2f}, CPU {first[1] / parse[1]:.2f}"
          f"  (goal: wall <= 1.0); first / cold: wall {first[0] / cold[0]:.2f}, CPU {first[1] / cold[1]:.2f}")
    print(f"warm: {warm[0]:.2f} s wall ({warm[1]:.2f} s CPU), {warm[0] / cold[0]:.1%} of cold  (goals: <= 0.3 s, <= 5%)")
    if ruff:
        r = best["ruff check --select ALL --no-cache"]
        print(f"ratio cold / ruff: wall {cold[0] / r[0]:.2f}, CPU {cold[1] / r[1]:.2f}; warm / ruff: wall {warm[0] / r[0]:.2f}")


if __name__ == "__main__":
    main()
