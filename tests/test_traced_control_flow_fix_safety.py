"""Fix safety of the traced-control-flow rules (issue #29, item 4): `safe` only when the rewrite
cannot turn working code into failing code (`codemods/traced_control_flow/fix_safety.py`).

Each case runs the code: the program's working path before and after `fix`, and where a rewrite
would have broken it, the rewrite the rules used to apply, to show the failure it is held back for.
"""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fixture_cases import run_jax3 as run

from jaxfix.model import Safety


def load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<case>", "exec"), namespace)
    return namespace


AXIS = """
import jax
import jax.numpy as jnp


def reduce(x, by_rows):
    if by_rows:
        ax = 0
    else:
        ax = 1
    return jnp.sum(x, axis=ax)


reduce_jit = jax.jit(reduce)
"""

# what the rule used to write as a safe fix (a `jnp.where` around the condition)
AXIS_OLD_FIX = AXIS.replace(
    """    if by_rows:
        ax = 0
    else:
        ax = 1
""",
    "    ax = jnp.where(by_rows, 0, 1)\n",
)


def test_a_rewrite_whose_result_feeds_an_axis_is_manual_and_the_program_is_left_as_it_works():
    # the first broken fix: a condition that was static in practice, whose result fed `axis=`
    result = run(AXIS, unsafe=True)
    [finding] = result.findings
    assert finding.code == "JAX301"
    assert finding.fix.safety is Safety.MANUAL
    assert "`ax`" in finding.message and "axis=" in finding.message
    assert result.fixed_source is None or result.fixed_source == textwrap.dedent(AXIS)
    x = jnp.arange(6.0).reshape(2, 3)
    # the working path (eager, and jit with the flag static) runs as before
    ns = load(AXIS)
    np.testing.assert_allclose(ns["reduce"](x, True), [3.0, 5.0, 7.0])
    np.testing.assert_allclose(jax.jit(ns["reduce"], static_argnums=1)(x, False), [3.0, 12.0])
    # the rewrite it is held back for fails on that same working path
    old = load(AXIS_OLD_FIX)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(old["reduce"], static_argnums=1)(x, False)


def test_the_safe_fix_still_applies_where_nothing_needs_a_python_value():
    src = """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def shift(x, t):
            if t > 0:
                y = x + 1.0
            else:
                y = x
            return jnp.sum(y, axis=0)
    """
    result = run(src)
    [finding] = result.findings
    assert finding.fix.safety is Safety.SAFE
    fixed = load(result.fixed_source)
    x = jnp.ones((2, 3))
    np.testing.assert_allclose(fixed["shift"](x, 1.0), [4.0, 4.0, 4.0])
    np.testing.assert_allclose(fixed["shift"](x, -1.0), [2.0, 2.0, 2.0])
    again = run(result.fixed_source)
    assert again.findings == [] and again.fixed_source is None  # idempotent


AUX = """
import jax
import jax.numpy as jnp


@jax.tree_util.register_pytree_node_class
class Layer:
    def __init__(self, w, use_bias):
        self.w = w
        self.use_bias = use_bias

    def tree_flatten(self):
        return (self.w,), (self.use_bias,)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], *aux)


@jax.jit
def apply(layer: Layer, x):
    if layer.use_bias:
        y = x @ layer.w + 1.0
    else:
        y = x @ layer.w
    return y
"""


def test_a_flag_in_hand_written_tree_flatten_aux_data_is_static():
    # the second broken fix: a `lax.cond` on a flag read from a custom pytree's aux data.
    # Modelled on ott-jax/ott's LinearProblem (`tree_flatten` returns `{"tau_a": self.tau_a}` as aux
    # data), which the project already read inside the class; here the flag is read outside it.
    assert run(AUX).findings == []
    ns = load(AUX)
    w = jnp.eye(2)
    np.testing.assert_allclose(ns["apply"](ns["Layer"](w, True), jnp.ones(2)), [2.0, 2.0])
    # buggy: the flag is a child (a traced leaf), reported
    buggy = AUX.replace("return (self.w,), (self.use_bias,)", "return (self.w, self.use_bias), ()").replace(
        "return cls(children[0], *aux)", "return cls(*children)"
    )
    [finding] = run(buggy).findings
    assert finding.code == "JAX301"


def test_a_condition_on_an_attribute_the_file_cannot_show_is_not_reported():
    # the class of `cfg` is out of sight: whether `cfg.use_bias` is a leaf or aux data is a guess,
    # and where the analysis cannot tell, it does not report (issue #29)
    src = """
        import jax

        @jax.jit
        def apply(cfg, x):
            if cfg.use_bias:
                y = x + 1.0
            else:
                y = x
            return y
    """
    assert run(src).findings == []
    # a value computed with jax from the attribute is traced whatever it holds: still safe
    [finding] = run(
        src.replace("if cfg.use_bias:", "if jnp.any(cfg.use_bias):").replace(
            "import jax\n", "import jax\n        import jax.numpy as jnp\n"
        )
    ).findings
    assert finding.fix.safety is Safety.SAFE


# Modelled on stanford-crfm/levanter@9263f81e8b453241332c2c0b2d2001bfb2d2241c:
# src/levanter/layers/attention.py:704 (`_maybe_flatten(q, axes, name)`: `if axes:` on a list of
# `Axis` objects). The analysis took `axes` for traced; the `lax.cond` it wrote as safe raises on
# the list. Now the fix is unsafe.
TRUTHINESS = """
import equinox as eqx
import jax
import jax.numpy as jnp


@eqx.filter_jit
def maybe_flatten(q, axes):
    if axes:
        q = q.reshape(-1)
    else:
        q = q[None]
    return q
"""


def test_a_bare_parameter_truthiness_test_under_filter_jit_is_not_reported():
    # `eqx.filter_jit` traces only the arrays it is given: an unannotated `axes` may be (here is)
    # a Python list, static (`proven_traced._filtered_unshown`)
    result = run(TRUTHINESS)
    assert [f for f in result.findings if f.line == 9] == []
    assert result.fixed_source is None or "if axes:" in result.fixed_source
    # the twin annotated as an array is one: the list would not be given there
    annotated = run(TRUTHINESS.replace("def maybe_flatten(q, axes):", "def maybe_flatten(q, axes: jax.Array):"))
    assert [f.code for f in annotated.findings if f.line == 9] == ["JAX301"]
    ns = load(TRUTHINESS)  # the working program: filter_jit keeps the list static, Python decides
    assert ns["maybe_flatten"](jnp.ones((2, 2)), ["batch"]).shape == (4,)
    assert ns["maybe_flatten"](jnp.ones((2, 2)), []).shape == (1, 2, 2)
    # the rewrite it is held back for: `lax.cond` cannot take a list of Python objects
    with pytest.raises(TypeError):
        jax.lax.cond(["batch"], lambda: 1, lambda: 0)


# The same site as levanter's `_reshape_axes_for_bshd_bins` calls it: its nested
# `_maybe_flatten(q, axes, name)` tests `if axes:` on a list of axes that a project helper
# (`_bin_and_group_axes_by_function`) built from the traced `q`. The list's truthiness is its
# length, static under jit; the old safe `lax.cond(axes, ...)` raised "Pred must be a scalar" (run
# before and after on levanter's own code: benchmarks/blind/suites.py).
TRUTHY_LIST = """
import jax
import jax.numpy as jnp


def _bins(q):
    groups = {"B": [], "S": [q.shape[0]]}
    groups["B"] = [part for part in jnp.split(q, 2) if part.ndim == 1]
    return groups


def _maybe_stack(q, parts):
    if parts:
        q = jnp.stack(parts)
    else:
        q = q[None]
    return q


@jax.jit
def reshape(q):
    groups = _bins(q)
    return _maybe_stack(q, groups["B"])
"""


def test_truthiness_of_a_value_not_shown_to_be_an_array_is_unsafe():
    # `parts` is what a project helper returns: a preview finding (`traced_control_flow.evidence`)
    assert run(TRUTHY_LIST, preview=False).findings == []
    result = run(TRUTHY_LIST, preview=True)
    [finding] = result.findings
    assert finding.code == "JAX301" and finding.preview
    assert finding.fix.safety is Safety.UNSAFE
    assert "`parts` is tested for truthiness" in finding.message
    assert result.fixed_source is None  # a plain `fix --write` leaves the working code alone
    q = jnp.arange(4.0)
    assert load(TRUTHY_LIST)["reshape"](q).shape == (2, 2)
    # the rewrite it is held back from: `lax.cond` on a list raises, under jit and eagerly
    rewritten = run(TRUTHY_LIST, unsafe=True, preview=True).fixed_source
    assert "lax.cond(parts" in rewritten
    with pytest.raises(TypeError, match="Pred must be a scalar"):
        load(rewritten)["reshape"](q)


def test_truthiness_of_a_value_computed_with_jax_stays_safe():
    # buggy variant beside them: the tested value is an array computed in the function, so `if m:`
    # raises under jit today, and the `lax.cond` rewrite is the fix
    src = """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def clip(x):
            m = jnp.any(x > 1.0)
            if m:
                y = x / 2.0
            else:
                y = x
            return y
    """
    result = run(src)
    [finding] = result.findings
    assert finding.fix.safety is Safety.SAFE
    fixed = load(result.fixed_source)
    np.testing.assert_allclose(fixed["clip"](jnp.array([4.0, 0.0])), [2.0, 0.0])
    np.testing.assert_allclose(fixed["clip"](jnp.array([0.5, 0.0])), [0.5, 0.0])
    with pytest.raises(jax.errors.TracerBoolConversionError):
        load(src)["clip"](jnp.array([4.0, 0.0]))
    assert run(result.fixed_source).findings == []  # idempotent


# Modelled on google/tunix@c7d8950f12a9:tunix/models/qwen3/model.py:997: `if num_ep > 1:` reads
# `global_send_sizes`, which an earlier `if num_ep > 1:` binds; the rewrite passes it to the branch
# on every path, so with the condition false it raises NameError where the original ran.
UNBOUND_ON_SOME_PATHS = """
import jax
import jax.numpy as jnp


@jax.jit
def combine(x):
    k = jnp.sum(x)
    y = x + 1.0
    if k > 1.0:
        sizes = x * 2.0
    if k > 1.0:
        y = y + sizes
    return y
"""


def test_a_rewrite_reading_a_name_bound_on_some_paths_only_is_unsafe():
    result = run(UNBOUND_ON_SOME_PATHS)
    [second] = [f for f in result.findings if f.line == 12]
    assert second.fix.safety is Safety.UNSAFE
    assert "`sizes` is bound on some paths only" in second.message
    # what it is held back from: eagerly, the original runs with the condition false; the rewrite raises
    rewritten = run(UNBOUND_ON_SOME_PATHS, unsafe=True).fixed_source
    x = jnp.array([0.1, 0.2])
    with jax.disable_jit():
        np.testing.assert_allclose(load(UNBOUND_ON_SOME_PATHS)["combine"](x), [1.1, 1.2])
        with pytest.raises(NameError):
            load(rewritten)["combine"](x)
    # bound before on every path: the same rewrite stays safe
    bound = UNBOUND_ON_SOME_PATHS.replace("    y = x + 1.0\n", "    y = x + 1.0\n    sizes = jnp.zeros_like(x)\n")
    [again] = [f for f in run(bound).findings if f.line == 13]
    assert again.fix.safety is Safety.SAFE


# Safe needs proof (`jaxfix/analysis/proven_traced.py`): a condition is proven traced when an
# array operation makes it, or when this file passes a traced value into a function it transforms
# (through its own calls). Held-out2 (spent): none of 23 traced-control-flow findings on unseen
# code was real; e.g. AI-Hypercomputer/maxdiffusion@7cfb8801d41d1728f0232cd7ee59e900a151fecf
# src/maxdiffusion/models/wan/autoencoder_kl_wan.py:1167 (a static chunk count taken for traced)
# got a safe `lax.cond` whose branches return different shapes. Here: `model(x)` on a traced
# argument is taken to be the one pytree class's `__call__` of the file, a guess: not reported. The same helper reached through a call this file shows stays safe.
GUESSED_CALL = """
import equinox as eqx
import jax
import jax.numpy as jnp


class Gate(eqx.Module):
    level: jax.Array

    def __call__(self, x):
        if x > 0:
            return x
        return -x


@eqx.filter_jit
def apply(model, x: jax.Array):
    return model(x)
"""


def test_a_condition_traced_only_by_inference_is_not_reported():
    assert run(GUESSED_CALL).findings == []
    # shown by an annotation: `model: Gate` runs `Gate.__call__` on the traced `x`
    annotated = GUESSED_CALL.replace("def apply(model, x", "def apply(model: Gate, x")
    assert [(f.code, f.fix.safety) for f in run(annotated).findings] == [("JAX301", Safety.SAFE)]
    # proven: the jitted function passes its own traced argument to the method it calls by name
    proven = GUESSED_CALL.replace("return model(x)", "return Gate.__call__(model, x)")
    assert proven != GUESSED_CALL
    rows = [(f.code, f.fix.safety) for f in run(proven).findings]
    assert rows == [("JAX301", Safety.SAFE)]


def test_a_helper_given_a_traced_array_by_a_jitted_function_of_the_file_stays_safe():
    src = """
        import jax


        def leaky(v, slope):
            if v > 0:
                return v
            return slope * v


        @jax.jit
        def model(x):
            return leaky(2.0 * x - 1.0, 0.01)
    """
    result = run(src)
    assert [(f.code, f.fix.safety) for f in result.findings] == [("JAX301", Safety.SAFE)]
    ns = load(result.fixed_source)
    assert float(ns["model"](jnp.float32(1.0))) == 1.0 and abs(float(ns["model"](jnp.float32(0.0))) + 0.01) < 1e-6


# probml/probml-notebooks@4c0da5e918930e02de5f3e78278c90efe5688b66: notebooks/jax_intro.ipynb
# ("Strings"): `jax.jit(f)(42, "add")` fails on the str argument itself; a `jnp.where` on `y == "add"`
# would not change that (heldout10 had it as a safe fix). The only fix is a static argument.
TEXT_ARGUMENT = """
import jax


def f(x, y):
    if y == "add":
        return x + 1
    return x - 1


f_jit = jax.jit(f)
"""


def test_a_parameter_compared_with_a_string_gets_the_static_argument_advice_not_a_where():
    result = run(TEXT_ARGUMENT, unsafe=True)
    [finding] = result.findings
    assert finding.code == "JAX301" and finding.fix.safety is Safety.MANUAL
    assert "`y` is compared with a string" in finding.fix.title and "static_argnames" in finding.fix.title
    assert result.fixed_source is None
    f_jit = load(TEXT_ARGUMENT)["f_jit"]
    with pytest.raises(TypeError, match="not marked as static"):
        f_jit(42, "add")  # the program fails as written, whatever the branch becomes
    static = jax.jit(load(TEXT_ARGUMENT)["f"], static_argnames=("y",))
    assert int(static(42, "add")) == 43  # what the advice gives


def test_a_string_compared_parameter_made_static_at_every_call_keeps_the_static_argnames_fix():
    """The twin: every call passes the string literally, so the `static_argnames` fix applies."""
    source = TEXT_ARGUMENT.replace("f_jit = jax.jit(f)", 'f_jit = jax.jit(f)\nresult = f_jit(42, "add")')
    result = run(source, unsafe=True)
    [finding] = result.findings
    assert "static argument" in finding.fix.title and finding.fix.safety is not Safety.MANUAL, finding.fix.title


# ASKabalan/jax-fli@659abc6c src/jax_fli/fields/particles.py:142 (heldout15, found after the
# measurement): the two sides of the conditional expression are strings; the `lax.cond` rewrite,
# then offered as safe, raised TypeError on every call
TEXT_SIDES = """
import jax
import jax.numpy as jnp


@jax.jit
def paint(x, relative):
    mode = "relative" if relative > 0 else "absolute"
    return x, mode
"""


def test_a_conditional_expression_choosing_between_strings_gets_no_lax_cond():
    result = run(TEXT_SIDES, unsafe=True)
    [finding] = result.findings
    assert finding.code == "JAX301" and finding.fix.safety is Safety.MANUAL
    assert "a side is a string" in finding.message
    assert result.fixed_source is None  # nothing rewritten, even with --unsafe-fixes
    # what the rule offered before raises for any input
    old = load(TEXT_SIDES.replace('"relative" if relative > 0 else "absolute"',
                                  'jax.lax.cond(relative > 0, lambda: "relative", lambda: "absolute")'))
    with pytest.raises(TypeError):
        old["paint"](jnp.ones(2), 1.0)
    # the twin with numbers on both sides keeps its rewrite
    numbers = run(TEXT_SIDES.replace('"relative"', "1.0").replace('"absolute"', "0.0"), unsafe=True)
    assert [f.fix.safety for f in numbers.findings] == [Safety.SAFE]


# Ollie-spoon/flax-dae@<heldout19> dae/data_processing.py:243 (reduced; `i` is traced through one call of
# the project, and the function is meant to run with its Python default too): the safe `lax.cond` fix
# traced the true branch where the default made the test false, and raised (found by running it)
DEFAULTED_COUNTER = """
import jax
import jax.numpy as jnp


def fill(rows, tokens, i=0, max_tokens=0):
    if i < max_tokens:
        tokens = tokens.at[i].set(rows[i])
        return tokens
    return tokens


@jax.jit
def traced(rows, tokens, i):
    return fill(rows, tokens, i, 2)
"""


def test_a_condition_on_a_parameter_with_a_python_default_gets_an_unsafe_fix():
    result = run(DEFAULTED_COUNTER)
    [finding] = [f for f in result.findings if f.code == "JAX301"]
    assert finding.fix.safety is Safety.UNSAFE and "Python default `0`" in finding.fix.title
    assert result.fixed_source is None  # no safe fix applies: the program is left as it works
    works = load(DEFAULTED_COUNTER)["fill"](jnp.ones((0, 4)), jnp.zeros((0, 4)))
    assert works.shape == (0, 4)


# the same shape recursing on itself (the evident intent of the code above): `lax.cond` would trace
# the recursion without end
RECURSIVE = """
import jax
import jax.numpy as jnp


def fill(rows, tokens, i, max_tokens):
    if i < max_tokens:
        tokens = tokens.at[i].set(rows[i])
        return fill(rows, tokens, i + 1, max_tokens)
    return tokens


@jax.jit
def traced(rows, tokens, i):
    return fill(rows, tokens, i, 2)
"""


def test_a_branch_that_recurses_is_a_manual_fix():
    result = run(RECURSIVE, unsafe=True)
    [finding] = [f for f in result.findings if f.code == "JAX301"]
    assert finding.fix.safety is Safety.MANUAL and "calls `fill` again" in finding.message
    assert result.fixed_source is None


GUESS = """
import jax
import jax.numpy as jnp


@jax.jit
def checked_guess(x0_guess):
    if not jnp.all(jnp.isfinite(x0_guess)):
        return None
    return x0_guess
"""


def test_a_branch_that_gives_none_is_never_rewritten_into_jnp_where():
    """heldout26 (after its measurement), sfincs_jax v3_driver.py:9929: `if not
    jnp.all(jnp.isfinite(x0_guess)): return None` then `return x0_guess` was rewritten by a "safe"
    fix into `return jnp.where(jnp.logical_not(...), None, x0_guess)`, which raises TypeError at
    every call (the driver's restart path then failed where the original solved). Neither
    `jnp.where` nor `lax.cond` can give `None` on one path and an array on the other: manual, the
    file unchanged. The same for an assignment of `None` in one branch; an array on both paths
    keeps its safe `jnp.where`, which runs."""
    result = run(GUESS)
    [finding] = result.findings
    assert finding.fix is None or finding.fix.safety is Safety.MANUAL
    assert "structure" in finding.message
    assert result.fixed_source is None or result.fixed_source == textwrap.dedent(GUESS)
    finite = jnp.ones(3)
    assert load(GUESS)["checked_guess"].__wrapped__(finite) is finite  # eager: the working path
    with pytest.raises(TypeError):  # the rewrite it is held back for
        jnp.where(jnp.logical_not(jnp.all(jnp.isfinite(finite))), None, finite)
    assigned = GUESS.replace("        return None\n    return x0_guess", "        x0_guess = None\n    return x0_guess")
    [finding] = run(assigned).findings
    assert finding.fix is None or finding.fix.safety is Safety.MANUAL
    zeros = GUESS.replace("return None", "return jnp.zeros_like(x0_guess)")
    result = run(zeros)
    [finding] = result.findings
    assert finding.fix.safety is Safety.SAFE and "jnp.where" in result.fixed_source
    fixed = load(result.fixed_source)["checked_guess"]
    np.testing.assert_allclose(fixed(jnp.array([1.0, jnp.inf])), [0.0, 0.0])
    np.testing.assert_allclose(fixed(finite), finite)


# FynnSu/transformer-from-scratch@<heldout30> src/model.py:376: a layer loop `for i in range(n)`
# over `params[i]`, a Python list of per-layer weights. Its safe `fori_loop` fix made `i` traced, and
# indexing the list with it raised `TracerIntegerConversionError` where the loop had run. The rewrite
# is unsafe now; indexing an array with the counter works either way (run below).
LAYERS = """
import jax
import jax.numpy as jnp


@jax.jit
def encode(params, x, n):
    for i in range(n):
        x = jnp.tanh(x @ params[i])
    return x
"""


def test_a_loop_counter_that_indexes_a_value_makes_the_fori_loop_unsafe():
    [finding] = run(LAYERS).findings
    assert finding.code == "JAX303" and finding.fix.safety is Safety.UNSAFE
    assert "`params[i]` indexes with the loop counter" in finding.fix.title
    assert run(LAYERS).fixed_source is None  # not applied by a plain `fix`
    fixed = run(LAYERS, unsafe=True).fixed_source
    params, x = [jnp.eye(2), jnp.eye(2)], jnp.ones((1, 2))
    # the original, with `n` a Python int closed over; the rewrite, given the list, fails
    ok = load(LAYERS.replace("@jax.jit\n", ""))["encode"](params, x, 2)
    assert ok.shape == (1, 2)
    rewritten = load(fixed)["encode"]
    with pytest.raises(jax.errors.TracerIntegerConversionError):
        rewritten(params, x, 2)
    # an array of layers takes the traced index: the same rewrite works there
    stacked = jnp.stack(params)
    np.testing.assert_allclose(rewritten(stacked, x, 2), ok)
