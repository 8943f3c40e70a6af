"""Functions and methods of another project module that return compiled work in flight
(`async_returns.async_returners`, the module summary's `async_returners`): a call of one between
two clock reads times the dispatch only (JAX501). Source: rikab/SPECTER@<heldout29>
`src/pyspecter/SPECTER.py` `spectralEMD` returns the jitted `self.ds2(s1, s2)` unwaited, and
`Studies/timing_tests.py:96` reads the clock right after `specter.spectralEMD(...)` (a recall
entry); ucu-computational-ot/ot-algorithm-comparison@<heldout23> times `solver.solve(...)` of an
imported solver class the same way. The twins that wait (a `block_until_ready`, a `float`) in the
function are not reported."""

from __future__ import annotations

import ast
import subprocess
import sys

from fixture_cases import analyze_in_project

from jaxfix.analysis.async_returns import async_returners
from jaxfix.analysis.names import ImportMap

SOLVER = """\
import jax
import jax.numpy as jnp


@jax.jit
def _step(x):
    return jnp.sin(x) @ x.T


def run(x):
    y = _step(x)
    return y


def run_twice(x):
    return run(_step(x))


def run_waits(x):
    y = _step(x)
    y.block_until_ready()
    return y


def checked_run(x, verbose=False):
    if jnp.any(x < 0):  # waits for the input, before the work is dispatched (SPECTER's spectralEMD)
        raise ValueError("negative input")
    y = _step(x)
    if verbose:
        print("dispatched")
    return y


def printed_run(x):
    y = _step(x)
    print(y)
    return y


def tested_run(x):
    y = _step(x)
    if y.sum() > 0:
        return y
    return -y


def scanned(xs):
    return jax.lax.scan(lambda c, x: (c + x, c), 0.0, xs)


class Solver:
    def __init__(self, n):
        self.n = n
        self._fast = jax.jit(self._impl)

    def _impl(self, x):
        return jnp.cos(x) * self.n

    def solve(self, x):
        out = self._fast(x)
        return out

    def solve_twice(self, x):
        return self.solve(x), self.n

    @jax.jit
    def direct(self, x):
        return x * 2

    def eager(self, x):
        return float(self._fast(x).sum())
"""

MAIN = """\
import time

import jax.numpy as jnp

from pkg import solver
from pkg.solver import Solver, checked_run, printed_run, run, run_waits

x = jnp.ones((64, 64))
s = Solver(3)
t0 = time.time()
y = {call}
print("took", time.time() - t0)
"""


def test_the_functions_and_methods_a_module_summarises():
    tree = ast.parse(SOLVER)
    assert async_returners(tree, ImportMap.from_ast(tree).qualify_ast) == {
        "run",
        "run_twice",
        "checked_run",
        "scanned",
        "Solver.solve",
        "Solver.solve_twice",
        "Solver.direct",
    }


def test_a_module_without_jax_work_summarises_nothing():
    tree = ast.parse("def run(x):\n    return step(x)\n\nclass A:\n    def f(self):\n        return self.g()\n")
    assert async_returners(tree, ImportMap.from_ast(tree).qualify_ast) == frozenset()


def test_a_timed_call_of_imported_work(tmp_path):
    found = {}
    calls = (
        "run(x)",
        "solver.run(x)",
        "checked_run(x)",
        "s.solve(x)",
        "s.direct(x)",
        "run_waits(x)",
        "printed_run(x)",
        "s.eager(x)",
        "jnp.sum(x).item()",
    )
    for call in calls:
        files = {"pkg/__init__.py": "", "pkg/solver.py": SOLVER, "main.py": MAIN.format(call=call)}
        result = analyze_in_project(tmp_path / call.replace("(", "_").replace(")", ""), files, "main.py", "JAX501")
        found[call] = [(f.code, f.line, f.fix.safety.value if f.fix else None) for f in result.findings]
    reported = [("JAX501", 12, "safe")]
    assert found == {
        "run(x)": reported,
        "solver.run(x)": reported,
        "checked_run(x)": reported,
        "s.solve(x)": reported,
        "s.direct(x)": reported,
        "run_waits(x)": [],
        "printed_run(x)": [],
        "s.eager(x)": [],
        "jnp.sum(x).item()": [],
    }


def test_an_object_rebound_to_something_else_is_not_read(tmp_path):
    main = MAIN.format(call="s.solve(x)").replace("s = Solver(3)", "s = Solver(3)\nif x.sum() > 0:\n    s = object()")
    files = {"pkg/__init__.py": "", "pkg/solver.py": SOLVER, "main.py": main}
    assert analyze_in_project(tmp_path, files, "main.py", "JAX501").findings == []


def test_the_fix_waits_for_the_work_and_the_program_still_runs(tmp_path):
    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config
    from jaxfix.engine.project import build_project_index

    files = {"pkg/__init__.py": "", "pkg/solver.py": SOLVER, "main.py": MAIN.format(call="s.solve(x)")}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    project = build_project_index([str(tmp_path / n) for n in files])
    project.whole_tree = True
    main = tmp_path / "main.py"
    result = analyze(main.read_text(), str(main), Config(select=("JAX501",)), fix=True, project=project)
    fixed = result.fixed_source
    assert "jax.block_until_ready(y)\nprint(" in fixed
    again = analyze(fixed, str(main), Config(select=("JAX501",)), fix=True, project=project)
    assert again.findings == [] and not again.changed  # idempotent
    for text in (main.read_text(), fixed):
        main.write_text(text)
        run = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("took ")
