"""The jit-placement `could_match` screens, both ways, against the rules themselves.

Every positive case is a text the rule reports on (run with the screen bypassed) and the screen
must admit; every negative case is correct code the rule finds nothing in and the screen must
reject without a libcst parse (module-level jit, relative-import or jax-internal jit, jit in
`__init__`/`main`/tests, under a lambda, stored or returned...). The soundness half on the whole
jax/flax/optax corpus is `scripts/screen_soundness.py`.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from codemods.jit_placement.jit_in_loop import JitInLoopRule
from codemods.jit_placement.jit_per_call import JitPerCallRule
from codemods.jit_placement.jit_rewrap_in_loop import JitRewrapInLoopRule
from jaxfix.engine.config import Config
from jaxfix.rulebase import RuleContext

RULES = (JitInLoopRule(), JitPerCallRule(), JitRewrapInLoopRule())


def screen_and_rule(source: str) -> tuple[bool, list[str]]:
    """(could_match of any of the family's rules, the codes their `check` reports with the
    screens bypassed); each rule's screen must also admit every text its own code is found in."""
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    ctx = RuleContext(source, "m.py", options=Config().options(), tree=tree)
    codes = []
    for rule in RULES:
        found = sorted(f.code for f in rule.check(ctx))
        assert not found or rule.could_match(tree), f"{rule.codes[0].code} found but its screen rejects the text"
        codes += found
    return any(rule.could_match(tree) for rule in RULES), sorted(codes)


POSITIVE = {
    # outside loops a call site's callable named by a name must be a local one (`_bound_names`)
    "jit_of_a_local_lambda_per_call": """
        import jax

        def step(x, scale):
            f = lambda v: v * scale
            return jax.jit(f)(x)

        for i in range(3):  # called per step: each call compiles again
            step(i, 2.0)
        """,
    "jit_of_a_module_function_in_a_loop": """
        import jax

        def g(v):
            return v * 2

        def run(xs):
            for x in xs:
                x = jax.jit(g)(x)
            return xs
        """,
    # a decorated nested def only ever called in its function's own code (`_def_may_be_only_called`)
    # (called in a comprehension it is made once per call and reused over the elements, as a
    # local `g = jax.jit(f)` is: not reported)
    "decorated_def_called_in_an_expression": """
        import jax

        def step(xs):
            @jax.jit
            def inner(v):
                return v * 2
            return inner(xs) + 1

        for i in range(3):  # called per step: each call compiles again
            step(i)
        """,
    "decorated_def_called_through_grad": """
        import jax

        def step(x):
            @jax.jit
            def loss(v):
                return (v * v).sum()
            return jax.grad(loss)(x)

        for i in range(3):  # called per step: each call compiles again
            step(i)
        """,
    "decorated_def_in_a_loop_of_module_code_called_in_a_class_body": """
        import jax

        for scale in (1.0, 2.0):
            @jax.jit
            def f(v):
                return v * scale

            class Holder:
                value = f(1.0)
        """,
    "import_as_in_loop": """
        import jax as jx

        def run(x, n):
            for i in range(n):
                x = jx.jit(lambda v: v + i)(x)
            return x
        """,
    "from_import_alias_per_call": """
        from jax import jit as J

        def step(x):
            return J(lambda v: v * 2)(x)

        for i in range(3):  # called per step: each call compiles again
            step(i)
        """,
    "bare_from_import_nested_def": """
        from jax import jit

        def step(x):
            def inner(v):
                return v * 2
            return jit(inner)(x)

        for i in range(3):  # called per step: each call compiles again
            step(i)
        """,
    "unimported_jax_name": """
        def step(x):
            return jax.jit(lambda v: v * 2)(x)

        for i in range(3):  # called per step: each call compiles again
            step(i)
        """,
    "nested_function": """
        import jax

        def outer(x):
            def inner(y):
                return jax.jit(lambda v: v + y)(y)
            return [inner(v) for v in x]
        """,
    "method": """
        import jax

        class Model:
            def step(self, x):
                return jax.jit(lambda v: v * 2)(x)

            def run(self, xs):
                return [self.step(x) for x in xs]
        """,
    "comprehension_in_function": """
        import jax

        def run(x):
            return [jax.jit(lambda v: v + i)(x) for i in range(3)]
        """,
    "comprehension_at_module_level": """
        import jax
        ys = [jax.jit(lambda v: v + i)(i) for i in range(3)]
        """,
    "comprehension_in_class_body": """
        import jax

        class Table:
            ys = [jax.jit(lambda v: v + i)(i) for i in range(3)]
        """,
    "comprehension_sharing_a_line_first": """
        import jax
        ys = [jax.jit(lambda v: v + i)(i) for i in range(3)]; a = 1
        """,
    "comprehension_sharing_a_line_last": """
        import jax
        a = 1; ys = [jax.jit(lambda v: v + i)(i) for i in range(3)]
        """,
    "bound_then_called": """
        import jax

        def step(x):
            f = jax.jit(lambda v: v * 2)
            return f(x)

        def run(xs):
            return [step(x) for x in xs]  # called per element: each call compiles again
        """,
    "bound_in_a_loop_called_in_a_nested_def_and_at_module_level": """
        import jax

        def run(xs, n):
            for i in range(n):
                f = jax.jit(lambda v: v + i)

                def g(v):
                    return f(v)

                xs = g(xs) + f(xs)
            return xs

        for k in range(3):
            h = jax.jit(lambda v: v * k)
            print(h(1.0))
        """,
    "decorated_nested_def": """
        import jax

        def step(x):
            @jax.jit
            def inner(v):
                return v * 2
            return inner(x)

        for i in range(3):  # called per step: each call compiles again
            step(i)
        """,
    "partial_decorated_nested_def": """
        import functools
        import jax

        def step(x, n):
            @functools.partial(jax.jit, static_argnums=1)
            def inner(v, k):
                return v * k
            return inner(x, n)

        for i in range(3):  # called per step: each call compiles again
            step(i, 2)
        """,
    "decorated_def_in_module_loop": """
        import jax

        for i in range(3):
            @jax.jit
            def body(v):
                return v + i
            body(1.0)
        """,
    "while_test": """
        import jax

        def run(i):
            while jax.jit(lambda v: v < 3)(i):
                i = i + 1
            return i
        """,
    "module_level_for_loop": """
        import jax

        for i in range(3):
            y = jax.jit(lambda v: v + i)(i)
        """,
    "filter_jit": """
        import equinox as eqx

        def run(x, n):
            for i in range(n):
                x = eqx.filter_jit(lambda v: v + i)(x)
            return x
        """,
    "pmap_of_grad_chain": """
        import jax

        def run(x, n):
            for i in range(n):
                x = jax.pmap(jax.grad(lambda v: v * i))(x)
            return x
        """,
    "module_function_rewrapped_in_loop": """
        import jax

        def f(v):
            return v + 1

        def run(x, n):
            for i in range(n):
                x = jax.jit(f)(x)
            return x
        """,
    "function_under_other_decorator": """
        import functools
        import jax

        @functools.cache
        def step(x):
            return jax.jit(lambda v: v * 2)(x)

        for i in range(3):  # called per step: each call compiles again
            step(i)
        """,
    "comprehension_in_a_decorator": """
        import jax

        def register(values):
            return lambda f: f

        @register([jax.jit(lambda v: v + i)(i) for i in range(3)])
        def f():
            return 1
        """,
    "bound_method_in_loop": """
        import jax

        class Model:
            def apply(self, v):
                return v * 2

        def run(m, x, n):
            for i in range(n):
                x = jax.jit(m.apply)(x)
            return x
        """,
    "method_of_a_new_object": """
        import jax

        class Model:
            def __init__(self, k):
                self.k = k

            def apply(self, v):
                return v * self.k

        def step(x, k):
            return jax.jit(Model(k).apply)(x)

        for i in range(3):  # called per step: each call compiles again
            step(1.0, i)
        """,
    "loop_in_main": """
        import jax

        def main():
            for i in range(3):
                jax.jit(lambda v: v + i)(i)
        """,
}

NEGATIVE = {
    # `T(F)` outside loops with `F` a module function or an unknown name: not fresh
    "jit_of_a_module_function_per_call": """
        import jax
        from jax.sharding import PartitionSpec as P

        def _psum(x):
            return jax.lax.psum(x, "i")

        def broadcast(x):
            return jax.jit(_psum, out_shardings=P())(x)
        """,
    "jit_of_an_imported_function_per_call": """
        import jax
        from mylib import kernel

        def run(x):
            f = jax.jit(kernel)
            return f(x)
        """,
    # decorated nested defs the planner leaves alone: the name is returned, passed on, used in a
    # nested function or a class body, or never called (`_def_may_be_only_called`)
    "decorated_def_returned": """
        import jax

        def make(scale):
            @jax.jit
            def f(x):
                return x * scale
            return f
        """,
    "decorated_def_passed_on": """
        import jax

        def make(xs):
            @jax.jit
            def f(x):
                return x * 2
            return f(xs), jax.vmap(f)
        """,
    "decorated_def_called_from_a_nested_function": """
        import jax

        def outer(xs):
            @jax.jit
            def f(x):
                return x * 2

            def g(v):
                return f(v)
            return g(xs)
        """,
    "decorated_def_called_from_a_lambda": """
        import jax

        def outer(xs):
            @jax.jit
            def f(x):
                return x * 2
            return list(map(lambda v: f(v), xs))
        """,
    "decorated_def_used_in_a_class_body_of_its_function": """
        import jax

        def outer(xs):
            @jax.jit
            def f(x):
                return x * 2

            class Holder:
                run = f(xs)
            return Holder
        """,
    "decorated_def_never_used": """
        import jax

        def outer(xs):
            @jax.jit
            def f(x):
                return x * 2
            return xs
        """,
    "module_level_jit": """
        import jax

        def g(v):
            return v + 1

        f = jax.jit(g)
        y = jax.jit(lambda v: v)(1.0)
        """,
    "relative_import_jit": """
        from .api import jit

        def run(x, n):
            for i in range(n):
                x = jit(lambda v: v + i)(x)
            return x
        """,
    "jax_internal_jit": """
        from jax._src.api import jit
        from jax._src import api

        def run(x, n):
            for i in range(n):
                x = jit(lambda v: v + i)(x)
                x = api.jit(lambda v: v - i)(x)
            return x
        """,
    "star_import_jit": """
        from jax import *

        def step(x):
            return jit(lambda v: v * 2)(x)
        """,
    "local_alias_of_jit": """
        import jax
        J = jax.jit

        def step(x):
            return J(lambda v: v * 2)(x)
        """,
    "in_init": """
        import jax

        class Model:
            def __init__(self, x):
                self.y = jax.jit(lambda v: v * 2)(x)
        """,
    "in_main_and_tests": """
        import jax

        def main():
            return jax.jit(lambda v: v * 2)(1.0)

        def test_step():
            assert jax.jit(lambda v: v * 2)(1.0) == 2.0
        """,
    "returned_or_stored": """
        import jax

        def make():
            return jax.jit(lambda v: v * 2)

        def keep(cache):
            cache["f"] = jax.jit(lambda v: v * 2)
            g = h = jax.jit(lambda v: v)
            return g, h
        """,
    # `f = T(F)` is a site only where every other `f` in its scope is called (`_bound_calls`):
    # jax's lowering.py binds `jax.jit(...)` in a loop and passes it to `export`
    "bound_then_passed_on_or_never_used": """
        import jax

        def lower(dims, export):
            for d in dims:
                jitted = jax.jit(lambda v: v + d)
                export(jitted)(d)
            for d in dims:
                unused = jax.jit(lambda v: v * d)
            for d in dims:
                kept = jax.jit(lambda v: v - d)
                kept(d)
                print(kept)

        class Table:
            for d in range(3):
                f = jax.jit(lambda v: v + 1)
                f(d)
        """,
    "under_a_lambda": """
        import jax

        def run(xs):
            for x in xs:
                apply = lambda v: jax.jit(lambda w: w + 1)(v)
                x = apply(x)
            return xs
        """,
    "decorated_method_and_module_def": """
        import functools
        import jax

        @jax.jit
        def f(v):
            return v + 1

        class Model:
            @functools.partial(jax.jit, static_argnums=0)
            def apply(self, x):
                return x
        """,
    "loop_iterable_runs_once": """
        import jax

        for y in jax.jit(lambda v: v * 2)(jax.numpy.arange(3)):
            pass
        """,
    "comprehension_first_iterable_runs_once": """
        import jax
        ys = [y for y in jax.jit(lambda v: v * 2)(jax.numpy.arange(3))]
        """,
    "class_bodies": """
        import jax

        def make():
            class Model:
                @jax.jit
                def apply(self, x):
                    return x
            return Model

        for i in range(3):
            class Table:
                y = jax.jit(lambda v: v + 1)(1.0)
        """,
    "starred_or_keyword_function": """
        import jax

        def step(fs, x):
            a = jax.jit(*fs)(x)
            b = jax.jit(fun=fs[0])(x)
            return a, b
        """,
    "wrapping_transforms_only": """
        import jax

        def run(x, n):
            for i in range(n):
                x = jax.vmap(lambda v: v + i)(x)
                x = jax.grad(lambda v: v * i)(x)
            return x
        """,
}


@pytest.mark.parametrize("name", sorted(POSITIVE))
def test_screen_admits_what_the_rule_reports(name):
    admitted, codes = screen_and_rule(POSITIVE[name])
    assert codes, f"{name}: the case must be one the rule reports"
    assert admitted, f"{name}: the rule reports {codes} but the screen rejects it"


@pytest.mark.parametrize("name", sorted(NEGATIVE))
def test_screen_rejects_correct_code(name):
    admitted, codes = screen_and_rule(NEGATIVE[name])
    assert codes == [], f"{name}: the rule reports {codes}; not a negative case"
    assert not admitted, f"{name}: correct code admitted (a libcst parse for nothing)"


def test_sites_are_found_past_the_first_top_level_statement():
    # the transform call in the first function is not a site (module-level style factory);
    # the screen must keep looking and find the one in the later function
    source = """
        import jax

        def make():
            return jax.jit(lambda v: v)

        x = 1

        def step(y):
            return jax.jit(lambda v: v + 1)(y)

        for i in range(3):
            step(i)
        """
    admitted, codes = screen_and_rule(source)
    assert codes == ["JAX202"] and admitted


@pytest.mark.parametrize(
    ("name", "admitting"),
    [
        ("import_as_in_loop", ["JAX201", "JAX203"]),  # a loop: both loop rules parse (a lambda is not told apart)
        ("from_import_alias_per_call", ["JAX202"]),
        ("decorated_def_in_module_loop", ["JAX201"]),  # a decorated def is never a re-wrapped module function
        ("loop_in_main", ["JAX201", "JAX203"]),
        # its caller's loop calls `step`, which the factory screen cannot tell from a jit factory
        ("bound_then_called", ["JAX201", "JAX202"]),
    ],
)
def test_each_rule_screens_for_its_own_placement(name, admitting):
    tree = ast.parse(textwrap.dedent(POSITIVE[name]))
    assert [rule.codes[0].code for rule in RULES if rule.could_match(tree)] == admitting
