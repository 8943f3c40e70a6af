"""One finding, one fix (issue #33): `fix` applies the fixes `check` names, each once.

With the real rules: a loop `check` calls manual is not rewritten because another fix of its body
made it fixable (before, a second round turned it into `lax.fori_loop` in the same run); a fix that
only waited for an overlapping one (a `jnp.where` inside a `while` the `while_loop` rewrite moved)
still applies, as `check` named it. Programs written for the purpose, the shapes of the issue's
ODE script.
"""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
from pytree_cache_support import load_module

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

CONFIG = Config(select=("ALL",), unsafe_fixes=True)

MANUAL_LOOP = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp


    @jax.jit
    def doubled(xs, n):
        out = jnp.zeros(4)
        for i in range(n):
            out[i] = xs[i] * 2.0
        return out
    """
)


def _fixes(result) -> list[tuple[int, str, str]]:
    return [(f.line, f.code, f.fix.safety.value if f.fix else "none") for f in result.findings]


def test_a_loop_check_calls_manual_is_not_rewritten_after_another_fix():
    checked = analyze(MANUAL_LOOP, "m.py", CONFIG)
    assert _fixes(checked) == [(8, "JAX303", "manual"), (9, "JAX403", "safe")]
    fixed = analyze(MANUAL_LOOP, "m.py", CONFIG, fix=True)
    assert fixed.error is None and fixed.rounds == 1
    assert [(f.line, f.code) for f in fixed.fixes_applied] == [(9, "JAX403")]
    assert fixed.fixed_source == MANUAL_LOOP.replace("out[i] = xs[i] * 2.0", "out = out.at[i].set(xs[i] * 2.0)")
    assert "fori_loop" not in fixed.fixed_source
    # the loop is left for the next run, where `check` shows the fix it now has: unsafe, as its body
    # indexes the parameter `xs` with the counter (a Python list there could not take a traced index)
    again = analyze(fixed.fixed_source, "m.py", CONFIG)
    assert _fixes(again) == [(8, "JAX303", "unsafe")]
    assert "fori_loop" in again.findings[0].fix.title and "`xs[i]`" in again.findings[0].fix.title
    final = analyze(fixed.fixed_source, "m.py", CONFIG, fix=True)
    assert analyze(final.fixed_source, "m.py", CONFIG, fix=True).fixed_source is None  # idempotent
    # behaviour: the twice-fixed program runs under jit with a traced bound
    mod = load_module(final.fixed_source, "doubled")
    xs = jnp.arange(4.0)
    assert jnp.allclose(mod.doubled(xs, jnp.asarray(3)), jnp.array([0.0, 2.0, 4.0, 0.0]))


NESTED = textwrap.dedent(
    """\
    import jax
    import jax.numpy as jnp


    @jax.jit
    def integrate(y0, dt):
        t = jnp.zeros(())
        y = y0
        while t < 1.0:
            y = y + dt * (-0.5 * y)
            if jnp.max(y) > 2.0:
                y = y / 2
            t = t + dt
        return y
    """
)


def test_a_fix_that_waited_for_an_overlapping_one_still_applies_as_check_named_it():
    checked = analyze(NESTED, "m.py", CONFIG)
    shown = {(f.line, f.code): f.fix.title for f in checked.findings}
    assert set(shown) == {(9, "JAX302"), (11, "JAX301")}
    fixed = analyze(NESTED, "m.py", CONFIG, fix=True)
    assert fixed.error is None and fixed.rounds == 2 and fixed.remaining == []
    # both at their lines in the original text, with the fixes `check` named
    assert {(f.line, f.code): f.fix.title for f in fixed.fixes_applied} == shown
    text = fixed.fixed_source
    assert "jax.lax.while_loop(" in text and "jnp.where(" in text and "\n    while " not in text
    assert analyze(text, "m.py", CONFIG, fix=True).fixed_source is None  # idempotent
    # behaviour: the rewrite under jit equals the original run eagerly
    original, rewritten = load_module(NESTED, "nested_a"), load_module(text, "nested_b")
    y0 = jnp.array([1.0, 3.0, 5.0])
    with jax.disable_jit():
        expected = original.integrate(y0, 0.25)
    assert jnp.allclose(rewritten.integrate(y0, 0.25), expected)
