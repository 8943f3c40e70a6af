"""Unit tests of the traced-control-flow rule: per-site fix decisions, messages, safety, edge cases.

The golden fixtures cover whole realistic files; these pin single decisions.
"""

from __future__ import annotations

import ast
import re
import textwrap

import pytest

from codemods.traced_control_flow import RULES
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from fixture_cases import run_jax3 as run


def rows(result) -> list[tuple[str, str]]:
    return [(f.code, f.fix.safety.value if f.fix else "none") for f in result.findings]


def test_rule_metadata():
    # one rule per code since the family was split; the config table stays the family's old name
    assert [rule.codes[0].code for rule in RULES] == ["JAX301", "JAX302", "JAX303", "JAX304", "JAX305", "JAX307"]
    for rule in RULES:
        assert len(rule.codes) == 1
        assert rule.name == rule.codes[0].name
        assert rule.table() == "traced-control-flow"
        assert rule.verify_reference == "eager"
        doc = rule.doc()
        assert doc.startswith(rule.codes[0].code)
        for section in ("What it does", "Why is this bad?", "Known problems", "Example", "Use instead", "Fix safety"):
            assert section in doc


def test_static_argnums_only_site_is_extended_by_position():
    result = run(
        """
        from functools import partial
        import jax

        @partial(jax.jit, static_argnums=(2,))
        def f(x, flag: bool, k):
            if flag:
                return x * k
            return x

        def use(x):
            return f(x, True, 3) + f(x, False, 3)
        """
    )
    assert rows(result) == [("JAX301", "safe")]
    assert "@partial(jax.jit, static_argnums=(2, 1))" in result.fixed_source


def test_static_argnames_site_is_extended_by_name_keeping_other_options():
    result = run(
        """
        import jax

        def f(x, n: int, mode: str):
            for _ in range(n):
                x = x * 2
            return x

        f_jit = jax.jit(f, static_argnames=("mode",), donate_argnums=0)
        f_jit(1.0, 3, "a")
        """
    )
    assert rows(result) == [("JAX303", "safe")]
    assert 'jax.jit(f, static_argnames=("mode", "n"), donate_argnums=0)' in result.fixed_source


def test_bare_decorator_becomes_partial_with_import():
    result = run(
        """
        import jax

        @jax.jit
        def f(x, mode: str):
            if mode == "neg":
                return -x
            return x

        y = f(1.0, "neg")
        """
    )
    assert "import functools" in result.fixed_source
    assert '@functools.partial(jax.jit, static_argnames=("mode",))' in result.fixed_source


def test_unannotated_static_candidate_is_unsafe_and_array_call_site_prevents_it():
    src = """
        import jax
        import jax.numpy as jnp

        def g(x, n):
            i = 0
            while i < n:
                i += 1
            return x + i

        g_jit = jax.jit(g)
        g_jit(1.0, 20)
        """
    result = run(src)
    assert rows(result) == [("JAX302", "unsafe")]
    assert "a caller passing an array" in result.findings[0].message
    assert result.fixed_source is None  # unsafe fixes need --unsafe-fixes
    # one call site passes an array: static is impossible, while_loop instead
    result = run(src + "g_jit(1.0, jnp.int32(3))\n")
    assert rows(result) == [("JAX302", "safe")]
    assert "jax.lax.while_loop(loop_cond, loop_body, i)" in result.fixed_source


@pytest.mark.parametrize(
    "body, reason",
    [
        ("while x > 0:\n        x = x - 1\n        if x < 3:\n            break", "`break` inside the loop"),
        ("while x > 0:\n        print(x)\n        x = x - 1", "side effects"),
        ("while x > 0:\n        y = x - 1\n        x = y\n    x = y", "`y` is first assigned inside the loop"),
        ("for i in range(x):\n        pass", "carries no value"),
        ("for i in range(0, x, 2):\n        x = x + i", "a `range` with a step"),
    ],
)
def test_loops_that_cannot_be_rewritten_are_manual(body, reason):
    result = run(f"import jax\n\n@jax.jit\ndef f(x):\n    {body}\n    return x\n")
    assert len(result.findings) >= 1
    first = result.findings[0]
    assert first.fix is not None and first.fix.safety.value == "manual"
    assert reason in first.message, first.message


def test_early_return_inside_loop_and_raise_are_manual():
    result = run(
        """
        import jax

        @jax.jit
        def f(x, xs):
            if x > 0:
                raise ValueError("positive")
            for i in range(3):
                if xs[i] > 0:
                    return xs[i]
            return x
        """
    )
    messages = [f.message for f in result.findings]
    assert any("raises" in m for m in messages)
    assert any("early `return` inside a nested block or loop" in m for m in messages)
    assert all(f.fix.safety.value == "manual" for f in result.findings)


def test_condition_parts_are_reported_once():
    result = run(
        """
        import jax

        @jax.jit
        def f(x, y):
            if x > 0 and not y > 0:
                return x
            return y
        """
    )
    assert rows(result) == [("JAX301", "safe")]
    assert "jax.numpy.logical_and(x > 0, jax.numpy.logical_not(y > 0))" in result.fixed_source


def test_python_literal_against_array_is_unsafe():
    result = run(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def f(x):
            if x > 0:
                return jnp.sin(x)
            return 0
        """
    )
    assert rows(result) == [("JAX301", "unsafe")]
    assert "promotes" in result.findings[0].message


def test_division_gets_double_where():
    result = run(
        """
        import jax

        @jax.jit
        def f(x, y):
            if y != 0:
                r = x / y
            else:
                r = x
            return r
        """
    )
    assert "r = jax.numpy.where(y != 0, x / jax.numpy.where(y != 0, y, 1), x)" in result.fixed_source


def test_generated_names_do_not_clash():
    result = run(
        """
        import jax

        def true_branch():
            return 1

        @jax.jit
        def f(x, false_branch):
            if x > 0:
                a = x * 2
                b = x
            else:
                a = x
                b = x * 3
            return a + b + false_branch
        """
    )
    fixed = result.fixed_source
    assert "def true_branch_2(" in fixed and "def false_branch_2(" in fixed
    assert "a, b = jax.lax.cond(x > 0, true_branch_2, false_branch_2)" in fixed


def test_jax304_and_numpy_calls_left_to_jax402():
    result = run(
        """
        import jax
        import numpy as np

        @jax.jit
        def f(x):
            n = float(x)
            y = x.tolist()
            z = np.mean(x)
            w = np.interp(x, x, x)
            return np.exp(x), n, y, z, w
        """
    )
    got = rows(result)
    assert got == [("JAX304", "manual"), ("JAX304", "manual")]  # NumPy calls are not this family's
    every = analyze(result.source, "t.py", Config(select=("ALL",), preview=True), fix=False)  # JAX402 is preview
    numpy = sorted((f.message.split("`")[1], f.fix.safety.value) for f in every.findings if f.code == "JAX402")
    assert [name for name, _ in numpy] == ["np.exp", "np.interp"], numpy  # np.mean works on tracers


def test_not_flagged_outside_a_trace_or_on_static_values():
    result = run(
        """
        import jax
        import numpy as np

        def eager(x):
            if x > 0:
                return int(x)
            return np.sin(x)

        @jax.jit
        def f(x):
            if x.shape[0] > 2 and x.ndim == 1:
                return x[:2]
            return x
        """
    )
    assert result.findings == []


def test_attribute_set_in_init_from_a_python_annotated_parameter_is_static():
    """jax's pallas Scheduler: `self.num_stages = num_stages` (`num_stages: int`), read by a loop
    bound in a class built under a trace. An attribute also written elsewhere (`bump`) or from an
    unannotated parameter stays traced."""
    result = run(
        """
        import jax

        class Stepper:
            def __init__(self, x, n: int, m):
                self.n = n
                self.m = m
                self.k = n
                total = x
                for _ in range(self.n - 1):
                    total = total + 1
                for _ in range(self.m):
                    total = total + 1
                for _ in range(self.k):
                    total = total + 1
                self.total = total

            def bump(self, v):
                self.k = v

        @jax.jit
        def f(x, y):
            return Stepper(x, 3, y).total
        """
    )
    flagged = sorted(re.search(r"range\((self\.\w+)", f.message).group(1) for f in result.findings)
    assert flagged == ["self.k", "self.m"]


def test_could_match_accepts_every_fixture_input_with_a_jax3_finding():
    from fixture_cases import discover_cases

    rules = {rule.codes[0].code: rule() for rule in RULES}
    checked = 0
    for case in discover_cases():
        codes = set(re.findall(r" (JAX3\d\d) ", case.findings_file.read_text())) if case.positive else set()
        if codes:
            checked += 1
            tree = ast.parse(case.input.read_text())
            for code in codes:
                assert rules[code].could_match(tree), (case.id, code)
    assert checked >= 20


def test_noqa_suppresses():
    result = run(
        """
        import jax

        @jax.jit
        def f(x):
            if x > 0:  # noqa: JAX301
                return x
            return -x
        """
    )
    assert result.findings == []


def test_while_with_literal_init_changed_by_traced_values_is_unsafe():
    result = run(
        """
        import jax

        @jax.jit
        def geometric(r, tol):
            total = 0
            term = 1.0
            while term > tol:
                total = total + term
                term = term * r
            return total
        """
    )
    assert rows(result) == [("JAX302", "unsafe")]
    assert "`total` starts as a Python number" in result.findings[0].message
    assert result.fixed_source is None
    fixed = run(textwrap.dedent(result.source), unsafe=True).fixed_source
    assert "total, term = jax.lax.while_loop(loop_cond, loop_body, (total, term))" in fixed


def test_counter_only_carry_is_safe():
    result = run(
        """
        import jax

        @jax.jit
        def count(n):
            i = 0
            while i * i < n:
                i += 1
            return i
        """
    )
    assert rows(result) == [("JAX302", "safe")]


def test_condition_mixing_a_static_guard_and_a_traced_test_is_split():
    # the static guard stays a Python `if`; only the traced part becomes `jnp.where` (issue #20)
    result = run(
        """
        import jax

        @jax.jit
        def f(x, mask=None):
            if mask is not None and mask.any():
                x = x * mask
            return x

        def use(x):
            return f(x, x > 0)
        """
    )
    assert rows(result) == [("JAX301", "safe")]
    finding = result.findings[0]
    assert (finding.line, finding.column) == (6, 29)  # the traced part `mask.any()`
    assert "has traced part `mask.any()`" in finding.message
    assert "keep the static `mask is not None` as a Python `if`" in finding.message
    assert "    if mask is not None:\n        x = jax.numpy.where(mask.any(), x * mask, x)\n" in result.fixed_source


def test_mixed_condition_guarding_an_early_return_is_manual():
    result = run(
        """
        import jax

        @jax.jit
        def f(x, mask=None):
            if mask is not None and mask.any():
                return x * mask
            return x

        def use(x):
            return f(x, x > 0)
        """
    )
    assert rows(result) == [("JAX301", "manual")]
    assert "split it into an outer Python `if`" in result.findings[0].message


def test_one_line_suites_and_comments_survive():
    result = run(
        """
        import jax

        @jax.jit
        def f(x):
            if x > 0: return x
            return -x

        @jax.jit
        def h(x):
            with jax.named_scope("s"):
                if x > 0:
                    # keep me
                    x = x * 2  # trailing
                else:
                    x = x - 1
            return x
        """
    )
    fixed = result.fixed_source
    assert "return jax.numpy.where(x > 0, x, -x)" in fixed
    # branches with comments go to lax.cond, which keeps the statements (and comments) verbatim
    assert "        # keep me\n            x = x * 2  # trailing\n" in fixed
    assert 'with jax.named_scope("s"):\n        def true_branch(x):' in fixed


def test_traced_shapes_and_slices():
    result = run(
        """
        import jax
        import jax.numpy as jnp

        @jax.jit
        def bad(x, k):
            return jnp.zeros(k) + x[:k].sum() + x[k]

        @jax.jit
        def fine(x):
            n = x.shape[0]
            return jnp.arange(n) + x[: n // 2].sum() + jnp.zeros((n, 2)).sum() + jnp.arange(3)
        """
    )
    assert rows(result) == [("JAX307", "manual"), ("JAX307", "manual")]
    assert "output shape would depend on a traced value" in result.findings[0].message


def test_a_tuple_carry_keeps_source_order_in_every_process(tmp_path):
    """`key, ra, rb = step(key, ra, rb)` in a loop: the carry was ordered by set iteration, so two
    runs of `jaxfix fix` (different PYTHONHASHSEED) wrote different diffs. Source order now."""
    import os
    import subprocess
    import sys

    path = tmp_path / "sampler.py"
    path.write_text(
        textwrap.dedent(
            """
            import jax

            def step(key, ra, rb):
                key, sub = jax.random.split(key)
                return key, ra + jax.random.uniform(sub), rb * ra

            @jax.jit
            def sample(key, n):
                ra, rb = 1.0, 2.0
                for _ in range(n):
                    key, ra, rb = step(key, ra, rb)
                return ra + rb
            """
        )
    )
    diffs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-m", "jaxfix", "fix", "--select", "JAX303", "--unsafe-fixes", "--no-cache", str(path)],
            capture_output=True, text=True, env=env, check=False,
        )
        assert "fori_loop" in out.stdout, out.stdout + out.stderr
        diffs.add(out.stdout)
    assert len(diffs) == 1
    assert "key, ra, rb = jax.lax.fori_loop(0, n, loop_body, (key, ra, rb))" in diffs.pop()
