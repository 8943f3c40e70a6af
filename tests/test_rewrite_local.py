"""`RuleContext.rewrite` transforms only the top-level statement holding its targets (a speed-up
for big files, measured for the LSP latency): the text must equal a whole-module transform."""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.statement_text import Rewriter
from jaxfix.edits import apply_edits
from jaxfix.model import Safety
from jaxfix.rulebase import RuleContext

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
    rewriter = Rewriter(changes.get("replace", {}), changes.get("insert_before", {}), changes.get("insert_after", {}))
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


SPLICED = """import jax


def outer(x, flag):
    # a comment line
    y = (x +
         1)  # trailing

    if flag:
        z = y
    elif x:
        z = -y
    else:
        for i in range(3):
            z = i
        # footer comment of the loop body
    match flag:
        case 1:
            z = jax.numpy.where(x,
                                y, z)
        case _:
            pass
    while x:
      x = x - 1
    return z
"""

NEW_BLOCK = "if a:\n    b = (1,\n         2)\n"


def statement_targets(ctx: RuleContext):
    return [
        n for n in nodes(ctx.module, cst.BaseStatement) if isinstance(ctx.parent(n), (cst.IndentedBlock, cst.Module))
    ]


def spliced_and_transformed(ctx: RuleContext, **changes) -> tuple[str | None, str]:
    from jaxfix.analysis import render
    from jaxfix.analysis.statement_text import StatementPositions, path_to

    rewriter = Rewriter(changes.get("replace", {}), changes.get("insert_before", {}), changes.get("insert_after", {}))
    targets = [*rewriter.replace, *rewriter.before, *rewriter.after]
    top = ctx.top_level_statement(targets[0])
    text = render.code_of(ctx.module, top)
    positions = StatementPositions(ctx)(top)
    new = render.spliced(
        ctx.module, top, text, positions, ctx.parents, rewriter.replace, rewriter.before, rewriter.after, targets
    )
    return new, ctx._transformed(rewriter, top, path_to(targets, ctx.parents))


def test_spliced_text_equals_the_transformed_statement_for_every_statement_and_change():
    """`render.spliced` renders only the new code into the old text: for each statement of a block
    (nested blocks, a `match` case, two-space blocks, comments, an `elif`) replaced by a block,
    removed, or with statements inserted around it, the text equals the transformed statement's."""
    ctx = RuleContext(SPLICED, "m.py")
    new = cst.parse_statement(NEW_BLOCK)
    done = 0
    for stmt in statement_targets(ctx):
        for changes in (
            {"replace": {stmt: new}},
            {"replace": {stmt: cst.RemovalSentinel.REMOVE}},
            {"replace": {stmt: cst.FlattenSentinel([new, new])}},
            {"insert_before": {stmt: [new]}, "insert_after": {stmt: [new, new]}},
        ):
            spliced, transformed = spliced_and_transformed(ctx, **changes)
            if spliced is not None:
                done += 1
                assert spliced == transformed, (type(stmt).__name__, changes)
    assert done >= 40


def test_spliced_text_for_expressions_nested_targets_and_neighbours():
    """Replaced expressions (inside parentheses that continue on indented lines), a target inside a
    replaced statement (left as the transform leaves it), an insertion after one statement and
    before the next (one point, in the transform's order), and the cases left to the transform:
    an `elif` (rendered by its `if`), an emptied block (rendered as `pass`)."""
    ctx = RuleContext(SPLICED, "m.py")
    outer = ctx.module.body[1]
    names = [n for n in nodes(ctx.module, cst.Name) if ctx.top_level_statement(n) is outer and n is not outer.name]
    new = cst.parse_statement(NEW_BLOCK)
    assert len(names) > 20
    for name in names:
        spliced, transformed = spliced_and_transformed(ctx, replace={name: cst.parse_expression("(a,\n b)")})
        assert spliced == transformed
    if_ = next(n for n in outer.body.body if isinstance(n, cst.If))
    inner = if_.body.body[0]
    spliced, transformed = spliced_and_transformed(ctx, replace={if_: new, inner: new})
    assert spliced == transformed
    first, second = outer.body.body[0], outer.body.body[1]
    other = cst.parse_statement("c = 3\n")
    spliced, transformed = spliced_and_transformed(ctx, insert_after={first: [new]}, insert_before={second: [other]})
    assert spliced == transformed
    assert spliced.index("b = (1,") < spliced.index("c = 3")
    assert spliced_and_transformed(ctx, replace={if_.orelse: new})[0] is None
    only = if_.body.body[0]
    assert spliced_and_transformed(ctx, replace={only: cst.RemovalSentinel.REMOVE})[0] is None
