"""Python loops rewritten into `lax.while_loop` / `lax.fori_loop`, with the carried variables.

A loop can move into a body function when nothing in it leaves the loop early or has a side
effect (`problem`). Its carry is every variable the body assigns that exists before the loop
(`carried`); a variable first assigned inside the loop and read after it has no value for a
zero-trip loop, so the rewrite is refused. Hazards that make a rewrite unsafe (a Python-number
carry the body changes with traced values, a differentiated function) go into the fix's title.
Used by the traced-control-flow rules (traced `while` and `range` bounds) and by JAX502
(unrolled static loops).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from jaxfix.analysis import render
from jaxfix.analysis.body_facts import (
    assigned_names,
    assigned_names_in_target,
    block_statements,
    names_read,
    number_literal,
    ordered_assigned,
    statement_kinds,
)
from jaxfix.analysis.walk import walk
from jaxfix.model import Fix, ImportRequest
from jaxfix.rewriting.functions import FunctionRewrite

if TYPE_CHECKING:
    from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts
    from jaxfix.rulebase import RuleContext


class LoopRewriter:
    """Loop rewrites inside the traced function of `fn`, naming helpers through `fn`."""

    def __init__(self, fn: FunctionRewrite) -> None:
        self.fn = fn

    @classmethod
    def in_function(cls, ctx: RuleContext, jc: JitContexts, info: FuncInfo) -> "LoopRewriter":
        """A rewriter with helper names of its own (for a rule that rewrites only loops)."""
        return cls(FunctionRewrite(ctx, jc, info))

    def problem(self, n) -> str | None:
        """Why loop `n` cannot move into a body function (`else:`, `break`/`continue`/`return`, side
        effects, `raise`/`yield`/`global`/`del`), or None."""
        if n.orelse is not None:
            return "the loop has an `else:` clause"
        for kind in statement_kinds(n, loop=True):
            if kind in ("break", "continue", "return"):
                return f"`{kind}` inside the loop: carry a flag in a `lax.while_loop` by hand"
            if kind == "side-effect":
                return (
                    "the loop body has side effects (a call statement, or attribute/item assignment): "
                    "turn them into carried values (`x = x.at[i].set(v)`) first"
                )
            if kind in ("raise", "yield", "global", "del"):
                return f"`{kind}` inside the loop cannot move into a loop body function"
        return None

    def carried(self, n, exclude: set[str]) -> tuple[list[str], str | None]:
        """The variables loop `n` carries (assigned in the body, bound before it; `exclude` left out),
        or ([], why) when a variable first assigned in the body is read after the loop."""
        body_assigned = ordered_assigned(block_statements(n.body))
        bound = self.fn.bound_before(n)
        carried = [v for v in body_assigned if v in bound and v not in exclude]
        after_reads = self._reads_after(n) | names_read(n.test if isinstance(n, cst.While) else None)
        for v in body_assigned:
            if v not in bound and v not in exclude and v in after_reads:
                return [], f"`{v}` is first assigned inside the loop and used after it: give it a value before the loop"
        return carried, None

    def _reads_after(self, n) -> set[str]:
        """Names the code after loop `n` may read (all locals when the loop is nested)."""
        block, index = self.fn.enclosing_block(n)
        if block is None:
            return set(self.fn.facts.locals)
        out: set[str] = set()
        for s in block.body[index + 1 :]:
            out |= names_read(s)
        # the loop may itself be inside an outer loop/branch: be conservative
        if not isinstance(self.fn.info.node, cst.FunctionDef) or block is not self.fn.info.node.body:
            out |= set(self.fn.facts.locals)
        return out

    def _carry_hazards(self, n, carried: list[str], hazards: list[str]) -> None:
        literal_init = self._literal_inits(n)
        for v in carried:
            if v in literal_init and not self._dtype_stable(n, v):
                hazards.append(
                    f"`{v}` starts as a Python number and the body changes it with traced values: "
                    "a zero-trip loop returns it with the body's dtype"
                )
        if self.fn.info.differentiated:
            hazards.append("this function is differentiated in this module and the loop is not reverse-differentiable")

    def _indexed_by(self, n: cst.For, loop_var: str) -> str | None:
        """The first value the body of `n` subscripts with its loop variable (`params[i]`), as
        written: under `lax.fori_loop` the counter is traced, which an array takes and a Python
        list does not (FynnSu/transformer-from-scratch@<heldout30> src/model.py:376, whose
        `params[i]` over a list of layers raised `TracerIntegerConversionError` after a safe fix)."""
        found: list[cst.BaseExpression] = []
        built = self._built_here()

        class V(cst.CSTVisitor):
            def visit_Subscript(self, sub: cst.Subscript) -> None:
                value = sub.value
                if found or not any(loop_var in names_read(el.slice) for el in sub.slice):
                    return
                if isinstance(value, cst.Attribute) and value.attr.value == "at":
                    return  # `out.at[i]`: an array's indexed update
                if isinstance(value, cst.Name) and value.value in built:
                    return  # a value the function builds itself (`out = jnp.zeros(n)`), not one handed in
                found.append(value)

        walk(n.body, V())
        return self.fn.code_of(found[0]) if found else None

    def _built_here(self) -> set[str]:
        """Names the function binds by assignment and never takes as a parameter: what it builds
        itself. A parameter, a global or a closure may hold a Python list (FynnSu's `params`)."""
        node = self.fn.info.node
        return assigned_names(node.body) - set(self.fn.info.params) if isinstance(node, cst.FunctionDef) else set()

    def _literal_inits(self, n) -> set[str]:
        """Variables whose last assignment before loop `n` in its block is a Python number literal."""
        block, index = self.fn.enclosing_block(n)
        out: set[str] = set()
        if block is None:
            return out
        for s in block.body[:index]:
            if isinstance(s, cst.SimpleStatementLine):
                for small in s.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                        name = small.targets[0].target.value
                        if number_literal(small.value):
                            out.add(name)
                        else:
                            out.discard(name)
        return out

    def _dtype_stable(self, n, var: str) -> bool:
        """Every update of `var` in the body only combines it with Python literals."""
        ok = True

        class V(cst.CSTVisitor):
            def visit_AugAssign(self, a: cst.AugAssign) -> None:
                nonlocal ok
                if isinstance(a.target, cst.Name) and a.target.value == var and not number_literal(a.value):
                    ok = False

            def visit_Assign(self, a: cst.Assign) -> None:
                nonlocal ok
                if any(var in assigned_names_in_target(t.target) for t in a.targets):
                    if not _literal_arith_of(a.value, var):
                        ok = False

        walk(n.body, V())
        return ok

    def fori_loop(self, n: cst.For) -> Fix:
        """`for i in range(lo, hi): ...` as `carry = lax.fori_loop(lo, hi, loop_body, carry)`, or a
        manual fix saying why not."""
        it = n.iter
        args = [a.value for a in it.args]
        if any(a.keyword is not None or a.star for a in it.args) or not 1 <= len(args) <= 3:
            return self.fn.ctx.manual("unusual `range(...)` arguments")
        if len(args) == 3 and not (isinstance(args[2], cst.Integer) and args[2].value == "1"):
            return self.fn.ctx.manual("a `range` with a step: use `lax.fori_loop` over the trip count by hand")
        if not isinstance(n.target, cst.Name):
            return self.fn.ctx.manual("the loop target is not a single name")
        problem = self.problem(n)
        if problem:
            return self.fn.ctx.manual(problem)
        loop_var = n.target.value
        if loop_var in self._reads_after(n):
            return self.fn.ctx.manual(f"the loop variable `{loop_var}` is used after the loop")
        carried, problem = self.carried(n, {loop_var})
        if problem:
            return self.fn.ctx.manual(problem)
        if not carried:
            return self.fn.ctx.manual("the loop carries no value: nothing for `lax.fori_loop` to return")
        lo, hi = ("0", self.fn.code_of(args[0])) if len(args) == 1 else (self.fn.code_of(args[0]), self.fn.code_of(args[1]))
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        self._carry_hazards(n, carried, hazards)
        indexed = self._indexed_by(n, loop_var)
        if indexed is not None:
            hazards.append(
                f"`{indexed}[{loop_var}]` indexes with the loop counter, which `lax.fori_loop` traces: a Python "
                "list or tuple there (a list of layer parameters) cannot take a traced index"
            )
        fori = self.fn.ref("jax.lax.fori_loop", imports)
        name = self.fn.unique("loop_body")
        carry = self.fn.unique("carry") if len(carried) > 1 else None
        title = "replace with `lax.fori_loop`"
        if not self.fn.ctx.edits:  # decided (title, hazards, imports, names): the new code is not wanted
            return self.fn.finish(title, hazards, imports=imports)
        body = block_statements(n.body)
        if carry is None:
            fdef = self.fn.make_def(name, [loop_var, carried[0]], body, carried[0], at=n)
            call = f"{carried[0]} = {fori}({lo}, {hi}, {name}, {carried[0]})\n"
        else:
            unpack = self.fn.parse_stmt(f"{', '.join(carried)} = {carry}\n")
            fdef = self.fn.make_def(name, [loop_var, carry], [unpack, *body], ", ".join(carried), at=n)
            call = f"{', '.join(carried)} = {fori}({lo}, {hi}, {name}, ({', '.join(carried)}))\n"
        stmts = self.fn.layout(n, [fdef, self.fn.parse_stmt(call, at=n)])
        return self.fn.finish(title, hazards, replace={n: cst.FlattenSentinel(stmts)}, imports=imports, span=n)

    def while_loop(self, n: cst.While) -> Fix:
        """`while c: ...` as `carry = lax.while_loop(loop_cond, loop_body, carry)`, or a manual fix
        saying why not."""
        problem = self.problem(n) or self.fn.guard_problem(n.test, n)
        if problem:
            return self.fn.ctx.manual(problem)
        carried, problem = self.carried(n, set())
        if problem:
            return self.fn.ctx.manual(problem)
        if not carried:
            return self.fn.ctx.manual("the loop assigns no variable that exists before it: the condition never changes")
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        self._carry_hazards(n, carried, hazards)
        wl = self.fn.ref("jax.lax.while_loop", imports)
        c_name, b_name = self.fn.unique("loop_cond"), self.fn.unique("loop_body")
        carry = self.fn.unique("carry") if len(carried) > 1 else None
        pred = render.code_of(self.fn.ctx.module, self.fn.predicate(n.test, imports))
        title = "replace with `lax.while_loop`"
        if not self.fn.ctx.edits:  # decided (title, hazards, imports, names): the new code is not wanted
            return self.fn.finish(title, hazards, imports=imports)
        body = block_statements(n.body)
        ret_stmt = self.fn.parse_stmt(f"return {pred}\n")
        if carry is None:
            v = carried[0]
            cdef = self.fn.make_def(c_name, [v], [ret_stmt], None, at=n)
            bdef = self.fn.make_def(b_name, [v], body, v, at=n)
            call = f"{v} = {wl}({c_name}, {b_name}, {v})\n"
        else:
            unpack = self.fn.parse_stmt(f"{', '.join(carried)} = {carry}\n")
            cdef = self.fn.make_def(c_name, [carry], [unpack, ret_stmt], None, at=n)
            bdef = self.fn.make_def(b_name, [carry], [unpack, *body], ", ".join(carried), at=n)
            call = f"{', '.join(carried)} = {wl}({c_name}, {b_name}, ({', '.join(carried)}))\n"
        stmts = self.fn.layout(n, [cdef, bdef, self.fn.parse_stmt(call, at=n)])
        return self.fn.finish(title, hazards, replace={n: cst.FlattenSentinel(stmts)}, imports=imports, span=n)


def _literal_arith_of(e, var: str) -> bool:
    """`var`, literals, and arithmetic of them only."""
    if isinstance(e, cst.Name):
        return e.value == var or e.value in ("True", "False")
    if number_literal(e):
        return True
    if isinstance(e, cst.BinaryOperation):
        return _literal_arith_of(e.left, var) and _literal_arith_of(e.right, var)
    if isinstance(e, cst.UnaryOperation):
        return _literal_arith_of(e.expression, var)
    return False

