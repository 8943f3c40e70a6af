"""JAX301's rewrites of a traced condition into array code: an `if` chain or a conditional
expression as `jnp.where` (cheap single values) or `lax.cond` (branch functions, early returns
moving the rest of the function into the false branch), and builtin `max`/`min` as
`jnp.maximum`/`jnp.minimum`. `traced_if` decides which site gets which; the `jnp.where` text
comes from `where.WhereBuilder`.
"""

from __future__ import annotations

import libcst as cst

from codemods.traced_control_flow.static_args import static_argnames_fix
from codemods.traced_control_flow.where import WhereBuilder, literal_mismatch
from jaxfix.analysis import render
from jaxfix.analysis.body_facts import (
    assigned_names_in,
    assigned_names_in_small,
    block_statements,
    number_literal,
    ordered_assigned,
    statement_kinds,
)
from jaxfix.analysis.walk import walk
from jaxfix.model import Fix, ImportRequest
from jaxfix.rewriting.functions import FunctionRewrite


class BranchRewrite:
    """`jnp.where` / `lax.cond` rewrites of one `if` chain or conditional expression."""

    def __init__(self, fn: FunctionRewrite) -> None:
        self.fn = fn
        self.where = WhereBuilder(fn)

    def fix_if(self, n: cst.If, chain: list[cst.If]) -> Fix:
        """The `jnp.where`/`lax.cond` rewrite of `if` chain `chain` headed by `n`: the early-return
        form when a branch returns, else the assignment form; manual when a branch cannot move."""
        problem = self.branch_problem(n) or next(
            (p for b in chain if (p := self.fn.guard_problem(b.test, b)) is not None), None
        )
        if problem:
            return self.fn.ctx.manual(problem)
        block, index = self.fn.enclosing_block(n)
        if block is None:
            return self.fn.ctx.manual("the `if` is not in a plain block")
        if (
            _always_returns(block_statements(n.body))
            or any(_contains_return(block_statements(b.body)) for b in chain)
            or (_final_else(chain) is not None and _contains_return(_final_else(chain)))
        ):
            return self.fix_if_return(n, chain, block, index)
        return self.fix_if_assign(n, chain)

    def branch_problem(self, n: cst.If) -> str | None:
        """Why a branch of `n` cannot become a `lax.cond` branch function, or None."""
        for kind in statement_kinds(n):
            if kind == "raise":
                return "a branch raises: use `equinox.error_if` or `checkify` for checks on traced values"
            if kind == "side-effect":
                return (
                    "a branch has side effects (a call statement, or attribute/item assignment); "
                    "both branches would run under `lax.cond`/`jnp.where`: make the branches pure first"
                )
            if kind in ("yield", "global", "del"):
                return f"a branch uses `{kind}`, which cannot move into a `lax.cond` branch function"
            if kind in ("break", "continue"):
                return f"`{kind}` inside a branch: rewrite the loop with `lax.while_loop` by hand"
        return None

    def fix_if_return(self, n: cst.If, chain: list[cst.If], block: cst.IndentedBlock, index: int) -> Fix:
        """`if c: return A` (and what follows it in the function) as one `return jnp.where(...)` or
        `return lax.cond(...)`, the rest of the function moving into the false branch."""
        func = self.fn.info.node
        if not isinstance(func, cst.FunctionDef) or block is not func.body:
            return self.fn.ctx.manual(
                "an early `return` inside a nested block or loop: restructure into one `return lax.cond(...)` by hand"
            )
        rest = list(block.body[index + 1 :])
        paths = self.return_paths(n, rest)
        if paths is None:
            return self.fn.ctx.manual(
                "not every path after the traced `if` ends in `return`: make both branches return, then use `lax.cond`"
            )
        true_path, false_path = paths
        problem = _structure_problem([_ret_value(s) for s in _all_returns(true_path + false_path)])
        if problem:
            return self.fn.ctx.manual(problem)
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        removals = {s: cst.RemoveFromParent() for s in rest}
        where = None if self.fn.has_comments(n) else self.where_for_returns(n, chain, rest, imports, hazards)
        if where is not None:
            new_stmt = self.fn.parse_stmt(f"return {where}\n", at=n).with_changes(leading_lines=n.leading_lines)
            return self.fn.finish(
                "replace with `jnp.where`", hazards, replace={n: new_stmt, **removals}, imports=imports, span=n
            )
        if literal_mismatch([_ret_value(s) for s in _all_returns(true_path + false_path)]):
            hazards.append("a branch returns a Python number while another returns an array: check the dtypes agree")
        if _contains_return_in_loop(true_path + false_path):
            return self.fn.ctx.manual("a `return` inside a loop in a branch: restructure by hand")
        operands = self.operands(true_path + false_path, n)
        stmts = self.cond_statements(n, operands, true_path, false_path, None, "return ", imports)
        return self.fn.finish(
            "replace the early return with `lax.cond`",
            hazards,
            replace={n: cst.FlattenSentinel(stmts), **removals},
            imports=imports,
            span=n,
        )

    def return_paths(self, n: cst.If, rest: list[cst.BaseStatement]):
        """(true path, false path) of statements ending in `return`, or None when one does not."""
        body = block_statements(n.body)
        orelse = n.orelse
        if orelse is None:
            false_path = rest
        elif isinstance(orelse, cst.If):
            false_path = [_as_if(orelse)] + rest
        else:
            false_path = block_statements(orelse.body) + rest
        if not _always_returns(body):
            return None
        if not _always_returns(false_path):
            return None
        return body, false_path

    def where_for_returns(self, n, chain, rest, imports, hazards) -> str | None:
        """`jnp.where(c1, A, jnp.where(c2, B, C))` when every branch is one cheap `return`."""
        values = []
        for branch in chain:
            stmts = block_statements(branch.body)
            if len(stmts) != 1 or _ret_value(stmts[0]) is None:
                return None
            values.append((branch.test, _ret_value(stmts[0])))
        final = _final_else(chain)
        tail = (final or []) + rest
        if final is not None and rest:
            return None
        if len(tail) != 1 or _ret_value(tail[0]) is None:
            return None
        last = _ret_value(tail[0])
        return self.where.where_chain(values, last, imports, hazards)

    def fix_if_assign(self, n: cst.If, chain: list[cst.If]) -> Fix:
        """Branches that assign variables as `v = jnp.where(...)` (one variable, cheap values) or
        `a, b = lax.cond(...)`, variables bound before the `if` passed as operands."""
        branches = [block_statements(b.body) for b in chain]
        final = _final_else(chain)
        branches.append(final if final is not None else [])
        assigned: list[str] = []
        for body in branches:
            for name in ordered_assigned(body):
                if name not in assigned:
                    assigned.append(name)
        if not assigned:
            return self.fn.ctx.manual("the branches assign nothing: nothing to select between")
        bound = self.fn.bound_before(n)
        for name in assigned:
            everywhere = all(name in assigned_names_in(body) for body in branches)
            if not everywhere and name not in bound:
                return self.fn.ctx.manual(
                    f"`{name}` is assigned in only some branches and not before the `if`: "
                    "give it a value before the `if`, then use `lax.cond`"
                )
        for var in assigned:
            problem = _structure_problem(
                [_single_assignment_value(_assignments_of(body, var), var) or cst.Name(var) for body in branches]
            )
            if problem:
                return self.fn.ctx.manual(problem)
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        # jnp.where: one variable, each branch one simple assignment (comments survive only in lax.cond)
        if len(assigned) == 1 and not self.fn.has_comments(n):
            var = assigned[0]
            values = []
            ok = True
            for body in branches:
                v = _single_assignment_value(body, var)
                if v is False:
                    ok = False
                    break
                values.append(v if v is not None else cst.Name(var))
            if ok:
                tests = [b.test for b in chain]
                where = self.where.where_chain(list(zip(tests, values[:-1])), values[-1], imports, hazards)
                if where is not None:
                    new_stmt = self.fn.parse_stmt(f"{var} = {where}\n", at=n).with_changes(
                        leading_lines=n.leading_lines
                    )
                    return self.fn.finish(
                        "replace with `jnp.where`", hazards, replace={n: new_stmt}, imports=imports, span=n
                    )
        # lax.cond with the assigned variables as outputs
        for var in assigned:
            kinds = set()
            for body in branches:
                value = _single_assignment_value(_assignments_of(body, var), var)
                if value is None or value is False:
                    continue
                kinds.add(number_literal(value) or "array")
            if len(kinds) > 1 and kinds != {"float", "array"}:
                hazards.append(
                    f"`{var}` is a Python number in one branch and an array in another: check the dtypes agree"
                )
        operands = [v for v in assigned if v in bound]
        outs = ", ".join(assigned)
        f_body = [_as_if(n.orelse)] if isinstance(n.orelse, cst.If) else (final or [])
        stmts = self.cond_statements(n, operands, branches[0], f_body, outs, f"{outs} = ", imports)
        return self.fn.finish(
            "replace with `lax.cond`", hazards, replace={n: cst.FlattenSentinel(stmts)}, imports=imports, span=n
        )

    def operands(self, stmts, n) -> list[str]:
        """Variables `stmts` assign that are bound before `n`: the branch functions' operands."""
        names = []
        bound = self.fn.bound_before(n)
        for name in ordered_assigned(stmts):
            if name in bound and name not in names:
                names.append(name)
        return names

    def cond_statements(self, n: cst.If, operands, true_body, false_body, ret, target, imports) -> list:
        """In place of `n`: `def true_branch(operands)`, `def false_branch(operands)` (each ending in
        `return ret` when given) and `<target>lax.cond(<n's test>, true_branch, false_branch, ...)`;
        none when the run wants no new code (`RuleContext.edits`), the names and `imports` decided."""
        t_name, f_name = self.fn.unique("true_branch"), self.fn.unique("false_branch")
        cond = self.fn.ref("jax.lax.cond", imports)
        pred = render.code_of(self.fn.ctx.module, self.fn.predicate(n.test, imports))
        if not self.fn.ctx.edits:
            return []
        t_def = self.fn.make_def(t_name, operands, true_body, ret, at=n)
        f_def = self.fn.make_def(f_name, operands, false_body, ret, at=n)
        call = f"{target}{cond}({pred}, {t_name}, {f_name}{''.join(', ' + o for o in operands)})\n"
        return self.fn.layout(n, [t_def, f_def, self.fn.parse_stmt(call, at=n)])

    def fix_ifexp(self, n: cst.IfExp) -> Fix:
        """`a if c else b` as `jnp.where(c, a, b)` or `lax.cond(c, lambda: a, lambda: b)`."""
        static = static_argnames_fix(self.fn, [n.test], n)
        if static is not None:
            return static
        problem = self.fn.guard_problem(n.test, None)
        if problem:
            return self.fn.ctx.manual(problem)
        problem = _structure_problem([n.body, n.orelse], noun="side")
        if problem:
            return self.fn.ctx.manual(problem)
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        where = self.where.where_chain([(n.test, n.body)], n.orelse, imports, hazards)
        if where is not None:
            new = self.fn.parse_expr(where)
            if n.lpar:
                new = new.with_changes(lpar=n.lpar, rpar=n.rpar)
            return self.fn.finish("replace with `jnp.where`", hazards, replace={n: new}, imports=imports, span=n)
        if literal_mismatch([n.body, n.orelse]):
            hazards.append("one side is a Python number: check both sides give the same dtype")
        cond = self.fn.ref("jax.lax.cond", imports)
        pred = render.code_of(self.fn.ctx.module, self.fn.predicate(n.test, imports))
        text = f"{cond}({pred}, lambda: {self.fn.code_of(n.body)}, lambda: {self.fn.code_of(n.orelse)})"
        new = self.fn.parse_expr(text)
        if n.lpar:
            new = new.with_changes(lpar=n.lpar, rpar=n.rpar)
        return self.fn.finish("replace with `lax.cond`", hazards, replace={n: new}, imports=imports, span=n)


def minmax_fix(fn: FunctionRewrite, call: cst.Call) -> Fix:
    """`max(a, b, c)` as `jnp.maximum(jnp.maximum(a, b), c)` (`min`: `jnp.minimum`); unsafe,
    because the two disagree on NaN. One iterable argument, or `default=`, is manual."""
    name = call.func.value
    args = [a for a in call.args if a.keyword is None and not a.star]
    if len(args) < 2 or len(args) != len(call.args):
        return fn.ctx.manual(
            f"`{name}` of one iterable compares its elements: use `jnp.{name}(x)` on an array "
            f"(all axes unless `axis=0`), or `jnp.{name}imum` on pairs"
        )
    imports: list[ImportRequest] = []
    func = fn.ref(f"jax.numpy.{name}imum", imports)
    text = fn.code_of(args[0].value)
    for arg in args[1:]:
        text = f"{func}({text}, {fn.code_of(arg.value)})"
    hazards = [
        f"a NaN argument propagates (Python `{name}` keeps the earlier argument when a comparison with NaN is false)"
    ]
    if literal_mismatch([a.value for a in args]):
        hazards.append("a Python number argument becomes an array")
    new = fn.parse_expr(text).with_changes(lpar=call.lpar, rpar=call.rpar)
    return fn.finish(f"replace with `jnp.{name}imum`", hazards, replace={call: new}, imports=imports)


# literals of text: no JAX type (ASKabalan/jax-fli@659abc6 src/jax_fli/fields/particles.py:142,
# `mode = "relative" if self.unit == ... else "absolute"`: its `lax.cond` rewrite raised TypeError)
_TEXT = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _structure(e: cst.BaseExpression) -> object:
    """What `lax.cond` compares of a branch's value that the text shows: `None`, and the items of
    a tuple display (anything else may be any array)."""
    if isinstance(e, cst.Name) and e.value == "None":
        return None
    if isinstance(e, cst.Tuple):
        return tuple(_structure(el.value) for el in e.elements if not isinstance(el, cst.StarredElement))
    return "value"


def _structure_problem(values: list[cst.BaseExpression | None], noun: str = "branch") -> str | None:
    """Why no `lax.cond`/`jnp.where` can select between the values the branches (the `noun`s) give
    (a bare `return` gives None): one is text, or they differ in what `_structure` shows. A
    `jnp.where` of `None` raises TypeError at every call (heldout26, sfincs_jax v3_driver.py: `if not
    jnp.all(jnp.isfinite(x0_guess)): return None` then `return x0_guess`, rewritten to
    `jnp.where(..., None, x0_guess)` by a "safe" fix)."""
    shown = [cst.Name("None") if v is None else v for v in values]
    if any(isinstance(v, _TEXT) for v in shown):
        return (
            f"a {noun} is a string, which `lax.cond`/`jnp.where` cannot return (only arrays and pytrees "
            "of them): make the condition static, or select a number and map it to the text outside"
        )
    if len({repr(_structure(v)) for v in shown}) > 1:
        return (
            f"the {noun}s differ in structure (a `None`, or tuples of other lengths), which "
            f"`lax.cond`/`jnp.where` reject: make the condition static, or give every {noun} the same shape"
        )
    return None


def _final_else(chain: list[cst.If]) -> list[cst.BaseStatement] | None:
    orelse = chain[-1].orelse
    if isinstance(orelse, cst.Else):
        return block_statements(orelse.body)
    return None


def _as_if(n: cst.If) -> cst.If:
    return n.with_changes(leading_lines=[])


def _ret_value(s: cst.CSTNode) -> cst.BaseExpression | None:
    if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and isinstance(s.body[0], cst.Return):
        return s.body[0].value
    return None


def _always_returns(stmts: list[cst.BaseStatement]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Return, cst.Raise)) for s in last.body)
    if isinstance(last, cst.If):
        if last.orelse is None:
            return False
        other = [last.orelse] if isinstance(last.orelse, cst.If) else block_statements(last.orelse.body)
        return _always_returns(block_statements(last.body)) and _always_returns(other)
    return False


def _contains_return(stmts) -> bool:
    finder = _ReturnFinder()
    for s in stmts:
        walk(s, finder)
    return finder.found


class _ReturnFinder(cst.CSTVisitor):
    """A `return` of the statements themselves (not of a nested def or lambda)."""

    found = False

    def visit_Return(self, node) -> None:
        self.found = True

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


def _contains_return_in_loop(stmts) -> bool:
    finder = _ReturnInLoopFinder()
    for s in stmts:
        finder.depth = 0
        walk(s, finder)
    return finder.found


class _ReturnInLoopFinder(cst.CSTVisitor):
    depth = 0
    found = False

    def visit_For(self, node) -> None:
        self.depth += 1

    def leave_For(self, node) -> None:
        self.depth -= 1

    def visit_While(self, node) -> None:
        self.depth += 1

    def leave_While(self, node) -> None:
        self.depth -= 1

    def visit_Return(self, node) -> None:
        if self.depth:
            self.found = True

    def visit_FunctionDef(self, node) -> bool:
        return False


def _all_returns(stmts) -> list[cst.SimpleStatementLine]:
    out = []

    class V(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node) -> None:
            if _ret_value(node) is not None:
                out.append(node)

        def visit_FunctionDef(self, node) -> bool:
            return False

    for s in stmts:
        walk(s, V())
    return out


def _single_assignment_value(body, var: str):
    """The value assigned to `var` when `body` is exactly one `var = e` / `var op= e` (None: body
    empty or `pass`, meaning `var` keeps its value); False when the body is anything else."""
    stmts = [
        s for s in body if not (isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body))
    ]
    if not stmts:
        return None
    if len(stmts) != 1 or not isinstance(stmts[0], cst.SimpleStatementLine) or len(stmts[0].body) != 1:
        return False
    s = stmts[0].body[0]
    if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name):
        if s.targets[0].target.value == var:
            return s.value
    if isinstance(s, cst.AugAssign) and isinstance(s.target, cst.Name) and s.target.value == var:
        op = s.operator
        binop = {
            cst.AddAssign: cst.Add,
            cst.SubtractAssign: cst.Subtract,
            cst.MultiplyAssign: cst.Multiply,
            cst.DivideAssign: cst.Divide,
            cst.PowerAssign: cst.Power,
            cst.FloorDivideAssign: cst.FloorDivide,
            cst.ModuloAssign: cst.Modulo,
        }.get(type(op))
        if binop is None:
            return False
        right = s.value
        if (
            isinstance(right, (cst.BinaryOperation, cst.IfExp, cst.Lambda, cst.BooleanOperation, cst.Comparison))
            and not right.lpar
        ):
            right = right.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.BinaryOperation(
            left=cst.Name(var),
            operator=binop(whitespace_before=cst.SimpleWhitespace(" "), whitespace_after=cst.SimpleWhitespace(" ")),
            right=right,
        )
    return False


def _assignments_of(body, var: str) -> list[cst.BaseStatement]:
    """The statement lines of `body` whose last small statement assigns `var` (for dtype checks)."""
    out = []
    for s in body:
        if isinstance(s, cst.SimpleStatementLine):
            for small in s.body:
                if var in assigned_names_in_small(small):
                    out = [cst.SimpleStatementLine(body=[small])]
    return out
