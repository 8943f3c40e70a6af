"""Are the corpus labels right? Run the cases that say how to run them under real JAX.

A case may carry an optional header line after the five of benchmarks/realworld/README.md:

    # run: energy(1.0, 1.0, 0.5, 2.0)                   evaluated in the case module's namespace
    # run: wf.model:waveform(1.0, jnp.zeros(2))        folder case: module, then the expression
    # run: (module-level code)                          importing the module is the run

`jax`, `jnp` and `key` (a PRNGKey) are in scope. A case whose expected codes are trace-time errors
(JAX301-JAX307, JAX402, JAX403) must raise; every other case must run (pytree caches, jit
placement and compile costs are latent costs, not errors). Needs jax, equinox, flax and optax;
runs on CPU in well under a minute; not part of the test suite (it imports jax and runs user-like
code), run it after adding or relabelling a case:

    JAX_PLATFORMS=cpu python benchmarks/realworld_groundtruth.py [name ...]
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import realworld  # noqa: E402

TRACE_ERRORS = {f"JAX30{i}" for i in range(1, 8)} | {"JAX402", "JAX403"}
_RUN = re.compile(r"^#\s*run:\s*(.*?)\s*$")


def run_line(case: realworld.Case) -> str | None:
    for line in case.header_file.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        match = _RUN.match(line)
        if match:
            return match.group(1)
    return None


def expects_error(case: realworld.Case) -> bool:
    return any(alt in TRACE_ERRORS for want in case.expect for alt in want.split("|"))


def load(case: realworld.Case, module: str | None):
    if case.path.is_dir():
        tops = {p.name for p in case.path.iterdir() if p.is_dir()}
        for name in [n for n in sys.modules if n.split(".")[0] in tops]:
            del sys.modules[name]
        sys.path.insert(0, str(case.path))
        try:
            return importlib.import_module(module)
        finally:
            sys.path.remove(str(case.path))
    spec = importlib.util.spec_from_file_location(f"realworld_case_{case.path.stem}", case.path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check(case: realworld.Case, line: str) -> tuple[bool, str]:
    import jax
    import jax.numpy as jnp

    module, expr = None, line
    if case.path.is_dir():
        module, _, expr = line.partition(":")
    try:
        mod = load(case, module)
        if expr and expr != "(module-level code)":
            eval(expr, {**vars(mod), "jax": jax, "jnp": jnp, "key": jax.random.PRNGKey(0)})  # noqa: S307
        raised, why = False, ""
    except Exception as exc:  # the point: which error, if any, the case raises
        raised, why = True, f"{type(exc).__name__}: {str(exc).splitlines()[0][:100] if str(exc) else ''}"
    return raised == expects_error(case), why


def main(argv: list[str]) -> int:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    cases = [c for c in realworld.discover() if not argv or any(a in c.name for a in argv)]
    bad = checked = 0
    for case in cases:
        line = run_line(case)
        if line is None:
            continue
        checked += 1
        ok, why = check(case, line)
        bad += not ok
        want = "raises" if expects_error(case) else "runs  "
        print(f"{'ok ' if ok else 'BAD'} {want} {case.name}  {why}")
    print(f"\n{checked} of {len(cases)} cases have a `# run:` line; {bad} disagree with their label")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
