"""The tutorial's jit-in-loop example, before and after `jaxfix fix`.

Runs `g(10, 20)` (20 iterations of a jitted body) in its forms: `jax.jit(partial(body))`
in the loop, `jax.jit(lambda x: body(x))` in the loop, the same function re-wrapped each
iteration (`jax.jit(body)`, a cache hit), and each of those after jaxfix's engine has
rewritten the source (the rewritten text is produced here, not written by hand). Prints ms
per call of `g`, XLA compiles per call (jax.monitoring), and the ratios.

    PYTHONPATH=. python benchmarks/jit_in_loop.py [--repeats 5] [--number 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import jax
import jax.monitoring

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

HEADER = "import jax\nfrom functools import partial\n\n\ndef unjitted_loop_body(prev_i):\n    return prev_i + 1\n\n\n"
FORMS = {
    "partial": "jax.jit(partial(unjitted_loop_body))(i)",
    "lambda": "jax.jit(lambda x: unjitted_loop_body(x))(i)",
    "rewrap": "jax.jit(unjitted_loop_body)(i)",
}
LOOP = "def g(x, n):\n    i = 0\n    while i < n:\n        i = {call}\n    return x + i\n"


class _Compiles:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, event: str, duration: float, **kwargs) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            self.count += 1


def _load(source: str, folder: Path, name: str):
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _measure(g, counter: _Compiles, repeats: int, number: int) -> tuple[float, float]:
    """(best ms per call, compiles per call) over the timed calls, after one warm-up call."""
    g(10, 20).block_until_ready()
    counter.count = 0
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            g(10, 20).block_until_ready()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e3, counter.count / (repeats * number)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--number", type=int, default=2)
    args = parser.parse_args(argv)
    jax.config.update("jax_enable_compilation_cache", False)
    counter = _Compiles()
    jax.monitoring.register_event_duration_secs_listener(counter)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for form, call in FORMS.items():
            source = HEADER + LOOP.format(call=call)
            fixed = analyze(source, f"{form}.py", Config(), fix=True)
            if fixed.error or fixed.fixed_source is None:
                raise SystemExit(f"jaxfix did not rewrite the {form} form: {fixed.error}")
            for label, text in ((form, source), (f"{form} + jaxfix", fixed.fixed_source)):
                module = _load(text, folder, f"bench_{label.replace(' + ', '_')}")
                assert int(module.g(10, 20)) == 30
                rows.append((label, *_measure(module.g, counter, args.repeats, args.number)))
    print(f"g(10, 20): 20 loop iterations per call; jax {jax.__version__} on {jax.devices()[0].platform}")
    print(f"{'form':22s} {'ms/call':>10s} {'compiles/call':>14s}")
    for label, ms, compiles in rows:
        print(f"{label:22s} {ms:10.3f} {compiles:14.1f}")
    times = {label: ms for label, ms, _ in rows}
    for form in FORMS:
        print(f"speed-up of jaxfix on {form:8s}: {times[form] / times[form + ' + jaxfix']:8.1f}x")
    print(f"partial vs rewrap (cache hit, not hoisted): {times['partial'] / times['rewrap']:8.1f}x")


if __name__ == "__main__":
    main()
