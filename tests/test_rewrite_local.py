"""`RuleContext.rewrite` transforms only the top-level statement holding its targets (a speed-up
for big files, measured for the LSP latency): the text must equal a whole-module transform."""

from __future__ import annotations

import libcst as cst

from jaxfix.edits import apply_edits
from jaxfix.model import Safety
from jaxfix.rulebase import RuleContext, _Rewriter

SOURCE = '''"""Module docstring."""
# a comment before the imports
import jax


def first(x):
    return x + 1


class Model:
    """Doc."""

    def method(self, y):
        # inside
        return jax.jit(lambda z: z * 2)(y)


@jax.jit
def decorated(x):
    return first(x)
'''


def whole_module(ctx: RuleContext, **changes) -> str:
    rewriter = _Rewriter(changes.get("replace", {}), changes.get("insert_before", {}), changes.get("insert_after", {}))
    return ctx.module.visit(rewriter).code


def nodes(module: cst.Module, kind):
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node):
            if isinstance(node, kind):
                found.append(node)
            return True

    module.visit(Collect())
    return found


def test_replacement_inside_a_method_equals_whole_module_transform():
    ctx = RuleContext(SOURCE, "m.py")
    (lam,) = nodes(ctx.module, cst.Lambda)
    fix = ctx.rewrite("t", Safety.SAFE, replace={lam: cst.parse_expression("double")})
    expected = whole_module(ctx, replace={lam: cst.parse_expression("double")})
    assert apply_edits(SOURCE, fix.edits) == expected
    assert "return jax.jit(double)(y)" in expected
    assert all(e.start >= SOURCE.index("class Model") for e in fix.edits)


def test_insertions_around_a_top_level_statement_and_decorators():
    ctx = RuleContext(SOURCE, "m.py")
    decorated = next(n for n in ctx.module.body if isinstance(n, cst.FunctionDef) and n.name.value == "decorated")
    new = cst.parse_statement("hoisted = jax.jit(first)\n")
    changes = {
        "insert_before": {decorated: [new]},
        "replace": {decorated.decorators[0]: cst.Decorator(cst.parse_expression("jax.vmap"))},
    }
    fix = ctx.rewrite("t", Safety.SAFE, **changes)
    assert apply_edits(SOURCE, fix.edits) == whole_module(ctx, **changes)


def test_targets_in_two_statements_and_removal():
    ctx = RuleContext(SOURCE, "m.py")
    first = ctx.module.body[2]
    (lam,) = nodes(ctx.module, cst.Lambda)
    changes = {"replace": {first: cst.RemovalSentinel.REMOVE, lam: cst.parse_expression("f")}}
    fix = ctx.rewrite("t", Safety.SAFE, **changes)
    assert apply_edits(SOURCE, fix.edits) == whole_module(ctx, **changes)
    assert "def first" not in apply_edits(SOURCE, fix.edits)
