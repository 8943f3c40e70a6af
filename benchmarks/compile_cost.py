"""JAX5xx before and after `jaxfix fix --unsafe-fixes`: compile time, HLO size, reported time.

For each case the source is written here, rewritten by jaxfix's engine (not by hand), and both
versions are loaded as modules and measured in this process:

- JAX502 (unrolled loop): a jitted function with `for _ in range(N): x = x * 1.01 + 0.001 * jnp.sin(x)`
  on a 64-vector; trace+lower and XLA compile time (ms) and the HLO text size, per N.
- JAX503 (captured constant): a jitted `tanh(x * W)` with a module-level float32 `W` of N elements;
  HLO text size and lower+compile time, per N.
- JAX501 (unblocked timing): a function timing a jitted 1000x1000 matmul; the time it reports
  before and after the fix, and the real time of the call (blocked), best of `--repeats`.

    PYTHONPATH=. python benchmarks/compile_cost.py [--trips 100 300 1000] [--sizes 100000 1000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.numpy as jnp

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

LOOP = """import jax
import jax.numpy as jnp


@jax.jit
def f(x):
    for _ in range({n}):
        x = x * 1.01 + 0.001 * jnp.sin(x)
    return x
"""
CONSTANT = """import jax
import jax.numpy as jnp
import numpy as np

W = jnp.asarray(np.random.RandomState(0).randn({n}).astype(np.float32))


@jax.jit
def f(x):
    return jnp.tanh(x * W)


def run(x):
    return f(x)
"""
TIMING = """import time

import jax
import jax.numpy as jnp


@jax.jit
def matmul(a):
    return a @ a


def bench(a):
    t0 = time.perf_counter()
    out = matmul(a)
    return out, time.perf_counter() - t0
"""


def fixed(source: str, code: str) -> str:
    result = analyze(source, "bench_case.py", Config(select=(code,), unsafe_fixes=True), fix=True)
    if result.error or not result.fixed_source:
        raise SystemExit(f"jaxfix did not rewrite the {code} case: {result.error or result.findings}")
    return result.fixed_source


def load(source: str, folder: Path, name: str):
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def compile_cost(fn, *args) -> tuple[float, float, int]:
    """(trace+lower ms, compile ms, HLO text characters) of a fresh jit of `fn`'s function."""
    t0 = time.perf_counter()
    lowered = fn.lower(*args)
    t1 = time.perf_counter()
    text = lowered.as_text()
    t2 = time.perf_counter()
    lowered.compile()
    t3 = time.perf_counter()
    return 1000 * (t1 - t0), 1000 * (t3 - t2), len(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trips", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 4_000_000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        x = jnp.linspace(-1.0, 1.0, 64)
        print("\nJAX502 unrolled loop -> lax.fori_loop")
        print(f"{'trips':>6} {'version':>9} {'trace+lower ms':>15} {'compile ms':>11} {'HLO kB':>8}")
        for n in args.trips:
            source = LOOP.format(n=n)
            # the rule's default threshold is 100 trips: measure smaller counts with a lower one
            config = Config(select=("JAX502",), unsafe_fixes=True).with_options(
                "unrolled-python-loop-in-jit", **{"max-unrolled-trips": 0}
            )
            new = analyze(source, "bench_case.py", config, fix=True).fixed_source
            for label, text in (("unrolled", source), ("fori_loop", new)):
                mod = load(text, folder, f"loop_{label}_{n}")
                lower, comp, size = compile_cost(mod.f, x)
                print(f"{n:>6} {label:>9} {lower:>15.1f} {comp:>11.1f} {size / 1000:>8.1f}")

        print("\nJAX503 captured constant -> argument")
        print(f"{'elements':>10} {'version':>9} {'lower ms':>9} {'compile ms':>11} {'HLO kB':>9}")
        for n in args.sizes:
            source = CONSTANT.format(n=n)
            config = Config(select=("JAX503",), unsafe_fixes=True).with_options(
                "large-captured-constant", **{"min-constant-elements": 1}
            )
            new = analyze(source, "bench_case.py", config, fix=True).fixed_source
            xs = jnp.ones((n,), jnp.float32)
            before = load(source, folder, f"const_before_{n}")
            after = load(new, folder, f"const_after_{n}")
            for label, fn, call_args in (("captured", before.f, (xs,)), ("argument", after.f, (xs, after.W))):
                lower, comp, size = compile_cost(fn, *call_args)
                print(f"{n:>10} {label:>9} {lower:>9.1f} {comp:>11.1f} {size / 1000:>9.1f}")

        print("\nJAX501 unblocked timing -> jax.block_until_ready")
        new = fixed(TIMING, "JAX501")
        before, after = load(TIMING, folder, "timing_before"), load(new, folder, "timing_after")
        a = jnp.ones((1000, 1000), jnp.float32)
        jax.block_until_ready(before.bench(a)[0])
        jax.block_until_ready(after.bench(a)[0])
        reported_before, reported_after, real = [], [], []
        for _ in range(args.repeats):
            out, dt = before.bench(a)
            jax.block_until_ready(out)
            reported_before.append(dt)
            out, dt = after.bench(a)
            reported_after.append(dt)
            t0 = time.perf_counter()
            jax.block_until_ready(before.matmul(a))
            real.append(time.perf_counter() - t0)
        ms = lambda values: f"{1000 * min(values):.2f} ms (median {1000 * sorted(values)[len(values) // 2]:.2f})"  # noqa: E731
        print(f"reported before the fix: {ms(reported_before)}")
        print(f"reported after the fix:  {ms(reported_after)}")
        print(f"real (blocked) call:     {ms(real)}")


if __name__ == "__main__":
    main()
