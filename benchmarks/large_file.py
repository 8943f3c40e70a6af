"""Does `jaxfix check` / `fix` grow linearly with the size of one file (issue #33, item 1)?

Generated and concatenated files exist in real codebases (a model zoo in one module, a notebook
exported to .py). This script writes one file per size made of a repeated block of realistic
findings from several families (an `lru_cache` on a flax pytree's method, a jit of a lambda in a
loop, a Python `if` on a traced value, a `print` of a traced value, a `while` on a traced value, the
clock read under jit, `float()` of a traced loss, a timed call not waited for: `BLOCK`), times
`jaxfix check` (its text output: what a user runs; the fixes are decided, their edits not built),
`jaxfix check --output-format json` (which shows every fix's edits, so builds them) and
`jaxfix fix --write --unsafe-fixes` on it in a subprocess, and prints wall time, CPU time, peak
memory (RSS of the child) and the growth ratio per doubling.

Targets: growth per doubling <= 2.2x; a 50k-line file with ~8k findings checks in under 10 s and
fixes in under 30 s on 2 cores.

With `--shape timing` the file is a benchmark script instead: timed regions one after another at
module level (a closing read bound to a name, and a timed loop; JAX501 reports both), whose
checks each read the whole block once (a 5,000-line script of 1,000 regions checked in 80 s).

    python benchmarks/large_file.py [--sizes 5000,10000,20000,50000] [--keep DIR] [--shape timing]
"""

from __future__ import annotations

import argparse
import compileall
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the checkout whose jaxfix is timed

HEADER = '''"""A generated module: many small models and steps, as a model zoo concatenated into one file."""

import functools
import time

import flax.struct
import jax
import jax.numpy as jnp

'''

# One block of realistic findings, `{i}` making each name unique: a model zoo's pieces as users
# write them, each a real finding of the default tier (17 per block of 94 lines): JAX102 (an
# `lru_cache` on a method of a frozen pytree: it hashes the arrays), JAX201 twice (a jit of a
# lambda built in a loop), JAX401 three times (a `print` of a traced value, before anything that
# raises), JAX301 three times (a traced `if`, and two conditional expressions, all with their
# `jnp.where` fix), JAX302 (a traced `while`), JAX405 three times (the clock read under jit: a
# step's timing, a dropout key seeded from it), JAX304 twice (`float()` of the loss for logging,
# `bool()` of a traced test), JAX303 (a traced `range` bound) and JAX501 (a timed call read
# before its result is ready). Findings (`--select ALL`, default tier) in the file of each size:
# 5k lines 901, 10k 1,802, 20k 3,604, 50k 9,027 (the 50k-line file held 8,333). Until
# session 36 the block held 3 default findings in 34 lines (4,410 in 50k lines).
BLOCK = '''

@flax.struct.dataclass
class Params{i}:
    w: jax.Array
    b: jax.Array

    @functools.lru_cache
    def norm(self):
        return jnp.sqrt(jnp.sum(self.w**2) + jnp.sum(self.b**2))


def sweep{i}(xs):
    out = []
    for x in xs:
        f = jax.jit(lambda y: y * 2.0 + 1.0)
        out.append(f(x))
    return out


@jax.jit
def clip{i}(x, limit):
    print("clip", x)
    if x.sum() > limit:
        x = x / limit
    return x


@jax.jit
def halve{i}(x):
    while x > 1.0:
        x = x / 2.0
    return x


@jax.jit
def loss{i}(params, x, y):
    pred = x @ params.w + params.b
    loss = jnp.mean((pred - y) ** 2)
    print("loss", loss)
    return loss


@jax.jit
def step{i}(params, x, y):
    start = time.time()
    loss, grads = jax.value_and_grad(loss{i})(params, x, y)
    new = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    print("step", loss, time.time() - start)
    return new, float(loss)


@jax.jit
def power{i}(x, n):
    for _ in range(n):
        x = x * x
    return x


def predict{i}(xs):
    outs = []
    for x in xs:
        act = jax.jit(lambda y: jnp.tanh(y) + 1.0)
        outs.append(act(x))
    return outs


@jax.jit
def relu{i}(x):
    return x if x > 0 else 0.0 * x


@jax.jit
def dropout{i}(x):
    key = jax.random.PRNGKey(int(time.time()))
    keep = jax.random.bernoulli(key, 0.9, x.shape)
    return jnp.where(keep, x / 0.9, 0.0)


@jax.jit
def positive{i}(x):
    return bool(x.min() > 0)


def bench{i}(x):
    t0 = time.perf_counter()
    y = halve{i}(x)
    print("halve{i}", time.perf_counter() - t0)
    return y


@jax.jit
def schedule{i}(step):
    return 1e-3 if step < 1000 else 1e-4
'''

FINDINGS_PER_BLOCK = 17

TIMING_HEADER = '''"""A generated benchmark script: one timed call after another."""

import time

import jax
import jax.numpy as jnp

step = jax.jit(lambda x: x * 2.0 + 1.0)
x = jnp.ones((64, 64))
'''

# Two JAX501 findings per block: a region closed by a read bound to a name, and a timed loop.
TIMING_BLOCK = '''
t0 = time.perf_counter()
y{i} = step(x)
t1 = time.perf_counter()
print("step {i}", t1 - t0)

start = time.time()
for _ in range(3):
    x = step(x)
print("loop {i}", time.time() - start)
'''
SHAPES = {"zoo": (HEADER, BLOCK), "timing": (TIMING_HEADER, TIMING_BLOCK)}


def generate(lines: int, shape: str = "zoo") -> str:
    """A module of about `lines` lines, made of `shape`'s block (`SHAPES`)."""
    header, block = SHAPES[shape]
    count = max(1, (lines - header.count("\n")) // block.count("\n"))
    return header + "".join(block.format(i=i) for i in range(count))


def run_child(argv: list[str], cwd: str) -> tuple[float, float, float, subprocess.CompletedProcess]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one jaxfix run in a fresh process. On a
    machine busy with other work compare CPU seconds: wall time stretches with the load."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's jaxfix, not the installed one
    proc = subprocess.run(
        [sys.executable, "-m", "jaxfix", *argv], cwd=cwd, capture_output=True, text=True, check=False, env=env
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    # ru_maxrss of the children is the largest so far; measure sizes in increasing order
    return wall, cpu, max(after.ru_maxrss, before.ru_maxrss) / 1024, proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,10000,20000,50000")
    parser.add_argument("--keep", help="write the generated files here instead of a temporary folder")
    parser.add_argument("--no-fix", action="store_true", help="time `check` only")
    parser.add_argument("--shape", choices=sorted(SHAPES), default="zoo", help="what the file is made of (docstring)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    # Every run imports jaxfix: its bytecode is written now, as an install writes it (with
    # PYTHONDONTWRITEBYTECODE set, each run compiled every module edited since: about 0.35 s of CPU a run).
    compileall.compile_dir(str(ROOT / "jaxfix"), quiet=1)
    compileall.compile_dir(str(ROOT / "codemods"), quiet=1)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="jaxfix-large-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    print(
        f"{'lines':>7} {'findings':>8} {'check s':>8} {'cpu s':>7} {'MB':>6} {'json s':>8} {'cpu s':>7} "
        f"{'fix s':>8} {'cpu s':>7} {'MB':>6} {'fixed':>6}"
    )
    for size in sizes:
        path = folder / f"{'gen' if args.shape == 'zoo' else args.shape}_{size}.py"
        path.write_text(generate(size, args.shape))
        lines = path.read_text().count("\n")
        common = ["--select", "ALL", "--no-cache", "-q", "-j", "1"]
        check_s, check_cpu, check_mb, proc = run_child(["check", *common, path.name], str(folder))
        shown = sum(1 for line in proc.stdout.splitlines() if line.startswith(f"{path.name}:"))
        json_s, json_cpu, _, proc = run_child(["check", *common, "--output-format", "json", path.name], str(folder))
        findings = len(json.loads(proc.stdout or "[]"))
        if shown != findings:
            raise SystemExit(f"the text check showed {shown} findings, the json check {findings}")
        fix_s = fix_cpu = fix_mb = float("nan")
        fixed = 0
        if not args.no_fix:
            fix_s, fix_cpu, fix_mb, proc = run_child(
                ["fix", *common, "--write", "--unsafe-fixes", "--allow-dirty", "--output-format", "json", path.name],
                str(folder),
            )
            if proc.returncode == 2:
                print(proc.stderr, file=sys.stderr)
            try:
                fixed = sum(f.get("fixes", 0) for f in json.loads(proc.stdout).get("files", []))
            except (ValueError, AttributeError, TypeError):
                fixed = -1
        rows.append((lines, check_s, check_cpu, json_s, json_cpu, fix_s, fix_cpu))
        print(
            f"{lines:>7} {findings:>8} {check_s:>8.2f} {check_cpu:>7.2f} {check_mb:>6.0f} {json_s:>8.2f} {json_cpu:>7.2f} "
            f"{fix_s:>8.2f} {fix_cpu:>7.2f} {fix_mb:>6.0f} {fixed:>6}",
            flush=True,
        )
    print("\ngrowth per doubling of the file (time ratio ^ (1 / log2(size ratio))), wall and CPU:")
    for (l0, *a), (l1, *b) in zip(rows, rows[1:]):
        doublings = math.log2(l1 / l0)
        ratio = [(y / x) ** (1 / doublings) if x > 0 else float("nan") for x, y in zip(a, b)]
        print(
            f"  {l0:>6} -> {l1:>6}: check {ratio[0]:.2f}x (cpu {ratio[1]:.2f}x), json {ratio[2]:.2f}x "
            f"(cpu {ratio[3]:.2f}x), fix {ratio[4]:.2f}x (cpu {ratio[5]:.2f}x)"
        )
    if not args.keep:
        for p in folder.iterdir():
            p.unlink()
        os.rmdir(folder)


if __name__ == "__main__":
    main()
