"""Factories of jitted functions (`bound_jits.returns_jitted`): a name bound to what one returns is a
jitted function, in the module that defines the factory and in another module of the project
(`pytrees.ModuleSummary.jit_factories`), for JAX501 and for a notebook's timing magics (JAX504).
Source: ZihangL/hqc@<heldout28> `hqc/gto/solver.py` `make_solver` (`return jax.jit(hf) if use_jit
else hf`), timed in `test/test_gto_performance.py:45` (a recall entry), whose `use_jit=False`
baseline (line 72) times the plain function."""

from __future__ import annotations

import ast
import textwrap

from fixture_cases import analyze_in_project

from jaxfix.analysis.bound_jits import factory_bound_names, module_jit_factories, returns_jitted
from jaxfix.analysis.names import ImportMap
from jaxfix.engine import analyze
from jaxfix.engine.config import Config

SOLVER = """\
import jax
import jax.numpy as jnp


def make_solver(n, use_jit=True):
    def hf(x):
        return jnp.sin(x) * n

    return jax.jit(hf) if use_jit else hf


def make_stepper(n):
    @jax.jit
    def step(x):
        return x * n

    return step


def make_plain(n):
    def hf(x):
        return jnp.sin(x) * n

    return hf
"""

TIMED = """\
import time

import jax.numpy as jnp

from pkg.solver import make_plain, make_solver, make_stepper


def bench(x):
    hf = {factory}
    start = time.time()
    out = hf(x)
    print("took", time.time() - start)
    return out
"""


def _factories(source: str) -> frozenset[str]:
    tree = ast.parse(source)
    return module_jit_factories(tree, ImportMap.from_ast(tree).qualify_ast)


def test_the_factories_a_module_defines():
    assert _factories(SOLVER) == {"make_solver", "make_stepper"}
    rebound = SOLVER + "\n\nmake_stepper = None\n"
    assert _factories(rebound) == {"make_solver"}
    waiting = SOLVER.replace("return jax.jit(hf) if use_jit else hf", "return eqx.filter_jit(hf)").replace(
        "import jax\n", "import jax\nimport equinox as eqx\n"
    )
    assert _factories(waiting) == {"make_stepper"}  # `eqx.filter_jit` waits before it returns


def test_a_nested_factory_return_is_not_the_outer_functions():
    source = "import jax\n\ndef outer():\n    def inner(f):\n        return jax.jit(f)\n    return inner\n"
    tree = ast.parse(source)
    outer = tree.body[1]
    assert not returns_jitted(outer, ImportMap.from_ast(tree).qualify_ast)


def test_a_literal_false_argument_may_turn_the_jit_off():
    tree = ast.parse("a = make_solver(3)\nb = make_solver(3, use_jit=False)\nc = other(3)\n")
    assert factory_bound_names(tree, {"make_solver"}) == {"a"}


def test_a_timed_call_of_what_a_project_factory_returns(tmp_path):
    found = {}
    for factory in ("make_solver(3)", "make_stepper(3)", "make_solver(3, use_jit=False)", "make_plain(3)"):
        files = {"pkg/__init__.py": "", "pkg/solver.py": SOLVER, "pkg/bench.py": TIMED.format(factory=factory)}
        result = analyze_in_project(tmp_path, files, "pkg/bench.py", "JAX501")
        found[factory] = [(f.code, f.line) for f in result.findings]
    assert found == {
        "make_solver(3)": [("JAX501", 12)],
        "make_stepper(3)": [("JAX501", 12)],
        "make_solver(3, use_jit=False)": [],
        "make_plain(3)": [],
    }


def test_a_factory_of_the_same_file_and_of_a_notebook():
    script = SOLVER + "\n\n" + TIMED.split("\n\n\n", 1)[1].format(factory="make_solver(3)")
    script = "import time\n" + script
    result = analyze(script, "case.py", Config(select=("JAX501",)), fix=False)
    assert [f.code for f in result.findings] == ["JAX501"]
    notebook = textwrap.dedent(
        """\
        import jax
        import jax.numpy as jnp

        def make_solver(n, use_jit=True):
            def hf(x):
                return jnp.sin(x) * n
            return jax.jit(hf) if use_jit else hf

        hf = make_solver(3)
        x = jnp.ones((1000, 1000))
        hf(x).block_until_ready()
        # %timeit hf(x)
        """
    )
    result = analyze(notebook, "case.py", Config(select=("JAX504",)), fix=False)
    assert [(f.code, f.line) for f in result.findings] == [("JAX504", 12)]
    plain = notebook.replace("hf = make_solver(3)", "hf = make_solver(3, use_jit=False)")
    assert analyze(plain, "case.py", Config(select=("JAX504",)), fix=False).findings == []


# samuela/git-re-basin@<heldout4> src/mnist_mlp_train.py:171 (six recall entries of this shape): a
# factory returns its jitted step in a dict display, and `with timeblock("Epoch"):` (a
# contextmanager reading the clock on exit) times `stuff["step"](...)` calls nothing waits on; the
# same with a factory returning a tuple of functions unpacked by position.
PARTS = """\
import time
from contextlib import contextmanager

import jax
import jax.numpy as jnp
from jax import jit


@contextmanager
def timeblock(name):
    start = time.time()
    try:
        yield
    finally:
        print(f"{name} took {time.time() - start:.5f} seconds")


def make_stuff(scale):
    @jit
    def step(state, x):
        return state + scale * x.sum(), {"loss": x.mean()}

    def evaluate(state):
        return state * 2

    return {"step": step, "evaluate": evaluate}


def make_pair(scale):
    @jit
    def train_step(state, x):
        return state + scale * x.sum()

    def host_step(state, x):
        return state + scale * x.sum()

    return train_step, host_step


def epoch(n):
    stuff = make_stuff(2.0)
    state = jnp.zeros(())
    infos = []
    with timeblock("Epoch"):
        for _ in range(n):
            state, info = stuff["step"](state, jnp.ones(4))
            infos.append(info)
    return state


def pair(n):
    train_step, host_step = make_pair(1.0)
    state = jnp.zeros(())
    t0 = time.time()
    for _ in range(n):
        state = train_step(state, jnp.ones(4))
    elapsed = time.time() - t0
    return state, elapsed
"""


def test_the_jitted_parts_of_a_returned_dict_or_tuple(tmp_path):
    from fixture_cases import load_as_module

    from jaxfix.analysis.bound_jits import returned_jitted_parts

    tree = ast.parse(PARTS)
    qualify = ImportMap.from_ast(tree).qualify_ast
    parts = {fn.name: returned_jitted_parts(fn, qualify) for fn in tree.body if isinstance(fn, ast.FunctionDef)}
    assert parts["make_stuff"].keys == {"step"} and parts["make_pair"].positions == {0}
    assert parts["epoch"] is None and parts["timeblock"] is None

    def found(source):
        result = analyze(source, "train.py", Config(select=("JAX501",)), fix=True)
        assert result.error is None, result.error
        return [f.line for f in result.findings], result.fixed_source

    lines, fixed = found(PARTS)
    text = PARTS.splitlines()
    assert [text[n - 1].strip() for n in lines] == ['with timeblock("Epoch"):', "elapsed = time.time() - t0"]
    assert found(fixed)[0] == []
    # the host parts are no JAX work of their own: timing them is not reported
    host = PARTS.replace('stuff["step"](state', 'stuff["evaluate"](state')
    host = host.replace("= train_step(state", "= host_step(state")
    host = host.replace("state, info = stuff", "state = stuff").replace("            infos.append(info)\n", "")
    assert found(host)[0] == []
    before, after = load_as_module(tmp_path / "before.py", PARTS), load_as_module(tmp_path / "after.py", fixed)
    assert float(before.epoch(3)) == float(after.epoch(3)) == 24.0
    assert float(before.pair(3)[0]) == float(after.pair(3)[0]) == 12.0
