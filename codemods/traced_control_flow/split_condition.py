"""Split the static part of a mixed `if` condition off into a Python `if` of its own.

`if mode == "train" and x > 0:` with `mode` static and `x` traced: only `x > 0` is the problem.
Turning the whole condition into `jnp.where`/`lax.cond` would trace the static test too (and
both branches even when the static part says the branch can never run, which is what guards
like `mask is not None and mask.any()` are for). The fix nests instead:

    if mode == "train":          # stays Python: decided once, at trace time
        if x > 0:                # JAX301 again, fixed with `jnp.where`/`lax.cond` next round
            ...

`and`: `if S and T: A` -> `if S: (if T: A)`; with `else: B` (B one statement line, which the
split copies) -> `if S: (if T: A else: B) else: B`. `or`: `if S or T: A [else: B]` (A one
statement line) -> `if S: A else: (if T: A [else: B])`, and `if S or T: return A` -> `if S:
return A` then `if T: return A` (an early return must stay at the function's top level to
become `lax.cond`, so `and` with a `return` in a branch is not split). `elif` chains are left
to the caller.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.static_values import is_static_call_name
from jaxfix.model import Fix
from jaxfix.rewriting.functions import FunctionRewrite


def operands(test: cst.BaseExpression) -> tuple[type, list[cst.BaseExpression]] | None:
    """(operator type, operands) of a chain of one boolean operator (`a and b and c`), else None."""
    if not isinstance(test, cst.BooleanOperation):
        return None
    op = type(test.operator)
    out: list[cst.BaseExpression] = []

    def flatten(e: cst.BaseExpression) -> None:
        if isinstance(e, cst.BooleanOperation) and isinstance(e.operator, op) and not e.lpar:
            flatten(e.left)
            flatten(e.right)
        else:
            out.append(e)

    flatten(test)
    return op, out


def static_and_traced(fn: FunctionRewrite, test: cst.BaseExpression, stmt) -> tuple[list, list] | None:
    """(static operands, traced operands) of a boolean chain with both kinds, else None."""
    found = operands(test)
    if found is None:
        return None
    _, parts = found
    traced = [p for p in parts if fn.test_traced(p, stmt)]
    static = [p for p in parts if not any(p is t for t in traced)]
    return (static, traced) if static and traced else None


def split_fix(fn: FunctionRewrite, n: cst.If) -> Fix | None:
    """The split of `n`'s mixed condition into an outer static `if` (see the module docstring), or
    None when its shape is not one handled here (no mixed chain, an `elif`, a long duplicated block)."""
    found = operands(n.test)
    parts = static_and_traced(fn, n.test, n)
    if found is None or parts is None or isinstance(n.orelse, cst.If):
        return None
    op, chain = found
    static, traced = parts
    word = "and" if op is cst.And else "or"
    static_test = _join(fn, static, word)
    traced_test = _join(fn, traced, word)
    body = n.body
    orelse = n.orelse
    if _returns(n):
        # an early return nested in a static `if` could not become `lax.cond`; but `if S or T: return A`
        # is `if S: return A` then `if T: return A`, both still at the function's top level
        if op is cst.And or orelse is not None or not _one_line(body):
            return None
        first = n.with_changes(test=static_test, body=_copy(body))
        second = n.with_changes(test=traced_test, body=_copy(body), leading_lines=[])
        return _finish(fn, n, chain, static, traced, static_test, traced_test, cst.FlattenSentinel([first, second]))
    if op is cst.And:
        if orelse is not None and not _one_line(orelse.body):
            return None
        inner = n.with_changes(test=traced_test, leading_lines=[], orelse=_copy(orelse))
        new = n.with_changes(test=static_test, body=cst.IndentedBlock(body=[inner]), orelse=_copy(orelse))
    else:
        if not _one_line(body):
            return None
        inner = n.with_changes(test=traced_test, body=_copy(body), leading_lines=[], orelse=_copy(orelse))
        new = n.with_changes(test=static_test, body=_copy(body), orelse=cst.Else(body=cst.IndentedBlock(body=[inner])))
    return _finish(fn, n, chain, static, traced, static_test, traced_test, new)


def _finish(fn: FunctionRewrite, n: cst.If, chain, static, traced, static_test, traced_test, new) -> Fix:
    """The fix replacing `n` by `new`; unsafe when the static operands move ahead of traced ones and may have effects."""
    title = f"keep the static `{fn.code(static_test)}` as a Python `if` and nest the traced `{fn.code(traced_test)}` inside it"
    hazards = []
    reordered = [p for p in chain if any(p is s for s in static)] + [p for p in chain if any(p is t for t in traced)]
    if any(a is not b for a, b in zip(reordered, chain)) and not all(_pure(fn, s) for s in static):
        hazards.append("the static part now runs before the traced part; check it has no side effects")
    return fn.finish(title, hazards, replace={n: new}, span=n)


def _returns(n: cst.If) -> bool:
    """`n` (its branches) holds a `return` outside nested functions."""
    found = False

    class V(cst.CSTVisitor):
        def visit_Return(self, r: cst.Return) -> None:
            nonlocal found
            found = True

        def visit_FunctionDef(self, f: cst.FunctionDef) -> bool:
            return False

        def visit_Lambda(self, f: cst.Lambda) -> bool:
            return False

    n.visit(V())
    return found


def _join(fn: FunctionRewrite, parts: list[cst.BaseExpression], word: str) -> cst.BaseExpression:
    if len(parts) == 1:
        return parts[0]
    return fn.parse_expr(f" {word} ".join(fn.code(p) for p in parts))


def _one_line(block: cst.BaseSuite) -> bool:
    """A block of exactly one simple statement line (what the split may copy)."""
    stmts = block.body if isinstance(block, cst.IndentedBlock) else [block]
    return len(stmts) == 1 and isinstance(stmts[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite))


def _copy(node):
    return None if node is None else node.deep_clone()


def _pure(fn: FunctionRewrite, e: cst.BaseExpression) -> bool:
    """`e` calls nothing but static queries (`len`, `isinstance`, `jnp.ndim`...): evaluating it earlier is harmless."""
    pure = True

    class V(cst.CSTVisitor):
        def visit_Call(self, c: cst.Call) -> None:
            nonlocal pure
            if not is_static_call_name(fn.names.qualify(c.func)):
                pure = False

    e.visit(V())
    return pure
