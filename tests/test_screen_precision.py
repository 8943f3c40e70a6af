"""Screens that admit what their rule's analysis can report and no more (issue #33 item 7).

Each case is a shape of jax/flax code that a screen admitted to the libcst analysis although the
analysis reads the same fact more narrowly and reports nothing there: the screen now reads it as
the analysis does. Each has a twin the analysis reports, which the screen must still admit
(`screen_misses` is the soundness check the fixture and fuzz suites run on every screen).
"""

from __future__ import annotations

import ast

import pytest
from screen_support import screen_misses

from codemods.compile_cost.unblocked_timing import UnblockedTimingRule
from codemods.traced_control_flow.traced_if import TracedIfRule
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.rulebase import RuleContext


def _codes(source: str) -> list[str]:
    return [f.code for f in analyze(source, "m.py", Config()).findings]


def _screened_and_reported(source: str, rule, code: str | None) -> None:
    """`rule`'s screens admit `source` exactly when the analysis reports `code` there (None:
    reports nothing and is rejected), and no screen of any rule misses a finding."""
    tree = ast.parse(source)
    ctx = RuleContext(source, "m.py", options=Config().options(), tree=tree)
    admitted = rule.could_match(tree) and rule.could_match_in(ctx)
    assert admitted == (code is not None)
    assert _codes(source) == ([] if code is None else [code])
    assert screen_misses(source) == []


# -- the traced family (trace_screen) ----------------------------------------------------------

# jax's Pallas interpreter: `functools.partial(store, output_name=...)` built in traced code, a
# deferred call of `store` that binds what it passes (`JitPropagation.call_target`); the screen
# entered every parameter of `store` when any argument was traced
PARTIAL_IN_TRACE = """\
import functools

import jax


def store(x, scale, flag):
    if flag:
        x = x * scale
    return x


@jax.jit
def run(x):
    write = functools.partial(store, x, 2.0, flag="out")
    return write()
"""

# jax's decode attention: `jax.vmap(inner)` of a local `inner = partial(f, block_h=block_h, ...)`,
# whose bound values a jit's `static_argnames` keep Python; the analysis enters a vmap only through
# a name that means a def (`_unwrap`), so it never enters `unbatched` here
VMAP_OF_A_LOCAL_PARTIAL = """\
import functools

import jax


def unbatched(q, block):
    if block > 16:
        q = q * 2
    return q


@functools.partial(jax.jit, static_argnames=("block",))
def decode(q, block):
    inner = functools.partial(unbatched, block=block)
    return jax.vmap(inner)(q)
"""

# a lax body written in place as `partial(body, k)`: the loop passes the index and the carry, the
# parameters the partial leaves open (`JitContexts._partial_body`), not `k`
INLINE_PARTIAL_BODY = """\
import functools

import jax
from jax import lax


def body(k, i, acc):
    if k > 1:
        acc = acc * 2
    return acc + i


@jax.jit
def run(x):
    return lax.fori_loop(0, 4, functools.partial(body, 3), x)
"""

# jax's splash attention: `q.astype(...)` in traced code, a method of a traced value, ran the
# `__call__` of every pytree class of the module (there `SplashAttentionKernel.__call__`); the
# analysis runs a `__call__` for a call of a plain name only (`model(x)`)
METHOD_OF_A_TRACED_VALUE = """\
import jax
import jax.numpy as jnp


@jax.tree_util.register_pytree_node_class
class Kernel:
    def __init__(self, info):
        self.info = info

    def __call__(self, q):
        if self.info.sum() > 0:
            q = q * 2
        return q

    def tree_flatten(self):
        return (self.info,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@jax.jit
def reference(q):
    return q.astype(jnp.float32)
"""

TRACED_CASES = [
    (METHOD_OF_A_TRACED_VALUE, None),
    (PARTIAL_IN_TRACE, None),
    (PARTIAL_IN_TRACE.replace('flag="out"', "flag=x.sum() > 0"), "JAX301"),  # binds a traced value
    (VMAP_OF_A_LOCAL_PARTIAL, None),
    (VMAP_OF_A_LOCAL_PARTIAL.replace("block=block)", "block=q.sum())"), "JAX301"),
    (INLINE_PARTIAL_BODY, None),
    (INLINE_PARTIAL_BODY.replace("if k > 1:", "if acc.sum() > 1:"), "JAX301"),  # the carry is traced
]


@pytest.mark.parametrize(("source", "code"), TRACED_CASES)
def test_the_trace_screen_enters_what_the_analysis_enters(source, code):
    _screened_and_reported(source, TracedIfRule(), code)


def test_a_traced_argument_called_by_its_name_still_runs_the_pytree_classes_call():
    """`kernel(q)` of a traced parameter: the screen still enters the `__call__` of the module's
    pytree classes (the analysis may, through the annotation or its guess of a model class)."""
    called = METHOD_OF_A_TRACED_VALUE.replace(
        "def reference(q):\n    return q.astype(jnp.float32)", "def reference(q, kernel: Kernel):\n    return kernel(q)"
    )
    assert TracedIfRule().could_match(ast.parse(called))
    assert screen_misses(called) == []


# -- JAX501 (timing_screen.region_screen) ----------------------------------------------------------

# jax's compiler.py: a region around a def of the module that returns work the checker does not
# count as JAX's (`backend.compile(...)` of a parameter); every def was taken for JAX work
TIMED_PLAIN_WRAPPER = """\
import time

import jax
import jax.numpy as jnp


def compile_it(backend, module):
    return backend.compile(module)


def run(backend, module):
    t0 = time.monotonic()
    exe = compile_it(backend, module)
    took = time.monotonic() - t0
    return exe, took
"""

# jax's serialization.py: `self._on_commit_callback = on_commit_callback` made the name jitted
TIMED_STORED_CALLBACK = """\
import time

import jax


class Manager:
    def __init__(self, on_commit):
        self._on_commit = on_commit

    def commit(self):
        t0 = time.time()
        out = self._on_commit()
        print(time.time() - t0)
        return out
"""

# flax's checkpoints.py: `logging.info` of `from absl import logging`, which only a project could
# show to be a jitted function of another module (no project here: none is)
TIMED_IMPORTED_CALL = """\
import time

import jax
from absl import logging


def save(path):
    t0 = time.time()
    out = logging.info("saving %s", path)
    print(time.time() - t0)
    return out
"""

TIMING_CASES = [
    (TIMED_PLAIN_WRAPPER, None),
    (TIMED_PLAIN_WRAPPER.replace("return backend.compile(module)", "return jnp.sin(module)"), "JAX501"),
    # two levels of plain wrappers, the inner one returning a name bound to JAX work
    (
        TIMED_PLAIN_WRAPPER.replace(
            "return backend.compile(module)", "return inner(module)\n\n\ndef inner(m):\n    y = jax.jit(jnp.cos)(m)\n    return y"
        ),
        "JAX501",
    ),
    (TIMED_STORED_CALLBACK, None),
    (
        TIMED_STORED_CALLBACK.replace("self._on_commit = on_commit", "self._on_commit = step").replace(
            "class Manager:", "step = jax.jit(lambda: jax.numpy.ones(3))\n\n\nclass Manager:"
        ),
        "JAX501",
    ),
    (TIMED_IMPORTED_CALL, None),
]


@pytest.mark.parametrize(("source", "code"), TIMING_CASES)
def test_the_timing_screen_counts_as_jax_work_what_the_checker_counts(source, code):
    _screened_and_reported(source, UnblockedTimingRule(), code)


def test_a_name_imported_from_the_project_is_jax_work_where_the_project_says_it_is_jitted(tmp_path):
    """With a project, `could_match_in` asks what the checker asks (`project_jitted`): a jitted
    function of another module admits the file, a plain one does not."""
    from fixture_cases import analyze_in_project

    solver = "import jax\n\n\n@jax.jit\ndef solve(x):\n    return x * 2\n\n\ndef plain(x):\n    return x\n"
    timed = TIMED_IMPORTED_CALL.replace("from absl import logging", "from .solvers import solve, plain")
    timed = timed.replace('logging.info("saving %s", path)', "solve(path)")
    rule = UnblockedTimingRule()
    for callee, code in (("solve", "JAX501"), ("plain", None)):
        files = {"pkg/__init__.py": "", "pkg/solvers.py": solver, "pkg/run.py": timed.replace("solve(path)", f"{callee}(path)")}
        result = analyze_in_project(tmp_path, files, "pkg/run.py", "JAX501")
        assert [f.code for f in result.findings] == ([] if code is None else [code])
        from jaxfix.engine.project import build_project_index

        project = build_project_index([str(tmp_path / name) for name in files])
        source = (tmp_path / "pkg/run.py").read_text()
        ctx = RuleContext(source, str(tmp_path / "pkg/run.py"), options=Config().options(), project=project, tree=ast.parse(source))
        assert rule.could_match(ctx.tree)  # the text alone cannot tell
        assert rule.could_match_in(ctx) == (code is not None)


def test_a_module_imported_whole_from_the_project_may_hold_a_jitted_function(tmp_path):
    """liangyy/transethnic_prs@<heldout28> transethnic_prs/model1/Model1GenoHelper.bak.py:63: `import
    transethnic_prs.util.math_jax as mj`, then `mj.mean_center_col_2d_jax(...)` (`@jit` there) timed;
    the checker reports it with the project, and the screens must admit the file, with the text
    alone and with the project (after the screens stopped taking every def and assignment for JAX
    work, only the `from x import y` names were kept as maybe-jitted)."""
    from fixture_cases import analyze_in_project
    from jaxfix.engine.project import build_project_index

    math_jax = "import jax\n\n\n@jax.jit\ndef center(x):\n    return x - x.mean()\n"
    timed = (
        "import time\n\nimport jax\n\nimport pkg.math_jax as mj\n\n\ndef load(x):\n    t0 = time.time()\n"
        "    y = mj.center(x)\n    t1 = time.time()\n    print('IO takes', t1 - t0)\n    return y\n"
    )
    files = {"pkg/__init__.py": "", "pkg/math_jax.py": math_jax, "pkg/run.py": timed}
    assert [f.line for f in analyze_in_project(tmp_path, files, "pkg/run.py", "JAX501").findings] == [11]
    rule = UnblockedTimingRule()
    project = build_project_index([str(tmp_path / name) for name in files])
    source = (tmp_path / "pkg/run.py").read_text()
    ctx = RuleContext(source, str(tmp_path / "pkg/run.py"), options=Config().options(), project=project, tree=ast.parse(source))
    assert rule.could_match(ctx.tree) and rule.could_match_in(ctx)


# -- JAX201 in test code (jit_placement.screen) ------------------------------------------------------

# optax's tests: in test code JAX201 reports only a site that compiles the same program on every
# trip (`same_computation_per_trip`), which a factory's result per configuration, a lambda, or a
# def bound above the loop under a plain `jax.jit` never is
TEST_LOOPS = """\
import jax
import jax.numpy as jnp

from mylib import schedules


def test_schedules():
    for steps in [1, 2]:
        fn = jax.jit(schedules.polynomial(steps))
        assert fn(0) == 0


def test_steps():
    def train_step(x):
        return x * 2

    for _ in range(3):
        y = jax.jit(train_step)(jnp.ones(2))
    for k in range(3):
        z = jax.jit(lambda x: x * k)(jnp.ones(2))
    return y, z
"""

# the twin: a bound method, a new cache key each trip (optax's `_adding_test.py`, reported)
TEST_BOUND_METHOD = TEST_LOOPS.replace("jax.jit(train_step)(jnp.ones(2))", "jax.jit(noise.update)(jnp.ones(2))").replace(
    "    for _ in range(3):", "    noise = schedules.add_noise(0.3)\n    for _ in range(3):"
)

JIT_IN_LOOP_CASES = [(TEST_LOOPS, None), (TEST_BOUND_METHOD, "JAX201")]


@pytest.mark.parametrize(("source", "code"), JIT_IN_LOOP_CASES)
def test_the_jit_in_loop_screen_of_test_code_admits_only_a_program_compiled_again(source, code):
    from codemods.jit_placement.jit_in_loop import JitInLoopRule

    path = "tests/schedule_test.py"
    tree = ast.parse(source)
    ctx = RuleContext(source, path, options=Config().options(), tree=tree)
    rule = JitInLoopRule()
    assert (rule.could_match(tree) and rule.could_match_in(ctx)) == (code is not None)
    found = [f.code for f in analyze(source, path, Config()).findings if f.code.startswith("JAX2")]
    assert found == ([] if code is None else [code])
    assert screen_misses(source, path) == []
    # outside test code the same sites are screened as before: the screen admits them all
    assert rule.could_match_in(RuleContext(source, "m.py", options=Config().options(), tree=tree))


# -- JAX201's factory screen (jit_placement.factories.screen_admits) ------------------------------

# flax's nnx/summary.py: `_save_call_info` jits inside and is called in a loop, but returns its
# `@wraps(f)` wrapper, no jitted function (`_returns_fresh_jit`); the screen took any module
# function with a jit inside for a factory
NOT_A_FACTORY = """\
import functools

import jax


def wrap(f):
    @jax.jit
    def jit_f(x):
        return f(x)

    @functools.wraps(f)
    def wrapper(x):
        return jit_f(x)

    return wrapper


def run(fs, x):
    for f in fs:
        x = wrap(f)(x)
    return x
"""

FACTORY_CASES = [
    (NOT_A_FACTORY, None),
    # the twin: it returns the jitted def, a new one per call, called with the same argument each trip
    (NOT_A_FACTORY.replace("    return wrapper\n", "    return jit_f\n").replace("wrap(f)(x)", "wrap(abs)(x)"), "JAX201"),
]


@pytest.mark.parametrize(("source", "code"), FACTORY_CASES)
def test_the_factory_screen_admits_only_a_def_returning_what_may_be_a_new_jitted_function(source, code):
    from codemods.jit_placement.jit_in_loop import JitInLoopRule

    _screened_and_reported(source, JitInLoopRule(), code)
