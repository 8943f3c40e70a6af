"""JAX301 traced-if: an `if`, `elif` or conditional expression whose condition is traced.

## What it does
Finds `if`/`elif` statements and `a if c else b` expressions whose condition is a traced value,
and builtin `max(a, b)`/`min(a, b)` (which compare their arguments with `>`/`<`) on traced
values, inside a function that runs under a trace: decorated with `@jax.jit` (or `partial(jax.jit,
...)`, `eqx.filter_jit`, `jax.vmap`), wrapped by `jax.jit(f)` anywhere in the module, passed
as a body to `lax.scan`/`fori_loop`/`while_loop`/`cond`/`switch`, or called from such code with
traced arguments. Conditions on `.shape`, `.ndim`, `.dtype`, `.size`, `len()`, `isinstance()`,
`is None`, static arguments, literals and module constants are static and never flagged, and so
are shape and dtype queries (`jnp.shape`, `lax.broadcast_shapes`, `jnp.issubdtype`,
`jnp.iscomplexobj`, `jnp.finfo(...)`, tuple arithmetic on shapes), a `tree_map` of such a test
over the leaves, and helpers of the module whose body only reads shapes or dtypes.

## Why is this bad?
A traced value has no Python truth value: the first trace raises
`TracerBoolConversionError` (or `ConcretizationTypeError`). The code only ever worked eagerly.

## Known problems
Reported only where this module proves the value traced: a parameter of a function it
transforms (and what such a function passes on through calls this module shows), a data
attribute of an object whose class it shows (the method's receiver, a parameter annotated with
the class or given an instance of it by every call the module shows, through `nnx.value_and_grad(loss_fn)(model)`
too), or what an array operation makes. A value only a caller in another module, a
framework convention or a guessed class makes traced is not reported: on public code nobody
had tuned on, such findings were all wrong. The transformed def is the one last
bound above the transform (a later plain-Python redefinition of the name is not), a parameter with a default
that no call in the module passes (a `**kwargs` at a call may not pass it; a caller in another
module is not seen) is that Python default, and in a notebook a parameter every call gives a str
(which jit rejects) is not traced. A function imported from the project (not from jax, NumPy or another array library)
has its body elsewhere: whether its result is traced is undecidable here, so a condition on
it is not reported. A `jnp.where` rewrite broadcasts: if the two original branches returned different
shapes, the rewrite returns the broadcast shape (the original could never run under jit).
`self` is traced only in classes the module registers as pytrees. Under `eqx.filter_jit` (and
`filter_vmap`), which trace array leaves only, a parameter is undecidable and not reported unless
it is annotated as an array or a pytree class of the module, used as only an array is (`x.shape`),
or given an array by a call in the module; so is a `**kwargs` value. A branch that every traced
call of a helper rules out with a literal flag (`if not for_jit:` where each jitted caller passes
`for_jit=True`) is not traced. A parameter no call in the module passes holds its default, which jit never traces:
a literal, or for a `def` outside functions a dotted name (`Kind.A`) (`jaxfix.analysis.defaults`);
a caller outside the project that passes it is not seen.

## Preview
Shown only with `--preview`: a condition traced only as what a call of a project helper or an
object's method returns, given a traced argument (`if can_use_kernel(x, w):`).

## Example
```python
@jax.jit
def f(x):
    if x > 0:
        return x
    else:
        return 2 * x
```

## Use instead
```python
@jax.jit
def f(x):
    return jnp.where(x > 0, x, 2 * x)
```

The fix is decided per site:
- **split** when the condition joins static and traced operands with `and`/`or`
  (`mode == "train" and x > 0`): the finding points at the traced operand, the static operands
  stay a Python `if` and the traced ones get their own `if` nested inside it, which the next
  round turns into `jnp.where`/`lax.cond`. `if S and T: A` becomes `if S: if T: A` (an `else`
  of one line is copied into both levels); `if S or T: A` becomes `if S: A else: if T: A` (A of
  one line), and `if S or T: return A` becomes `if S: return A` then `if T: return A`.
- **`static_argnames`** when the condition depends only on parameters that every call site in
  the module passes as hashable literals, and the function is jitted here with `jax.jit`.
  Otherwise a parameter compared with a string literal (`mode == "add"`) gets the manual advice
  to make it static: a string cannot be a traced argument, so no `jnp.where` would help.
- **`jnp.where`** when each branch is a single `return`, or a single assignment of one
  variable, of a cheap pure expression; `elif` chains nest. A side with `sqrt`, `log`, a
  division or a power gets the double-where form, which keeps gradients free of NaN.
- **`lax.cond`** for everything else a function can express: several assigned variables,
  expensive or nested branches, early returns (the code after `if c: return A` moves into the
  false branch). Conditions nested in the branches are rewritten in the next round.
- **`jnp.maximum`/`jnp.minimum`** for builtin `max`/`min` of two or more arguments (nested
  pairwise); `max(xs)` of one iterable is manual (`jnp.max` reduces every axis unless told).
- **manual** for side effects, `raise`, `break`/`continue` in a branch, a variable first
  assigned in only some branches, an early return inside a loop or nested block, a static
  operand of `and`/`or` that the split cannot separate (an `and` guarding an early `return`,
  longer branches it would copy), and an `elif` on a traced value after a static test.

## Fix safety
The reference behaviour is the original run eagerly (`jax.disable_jit()`). The fix is safe when
it computes the same values, dtypes and gradients for every input the original accepted
eagerly. It is unsafe (the message says why) when one branch produces a Python number literal
and another an array (`jnp.where` promotes the literal, `lax.cond` requires equal types), or
when a parameter becomes static though it is not annotated `int`/`bool`/`str` (a caller outside
the module passing an array would now fail, and each distinct value compiles once), or when the
condition reads a parameter with a Python number or bool default (`def fill(..., i=0): if i < n:`,
a recursion counter: a call that leaves the default branches in Python today, and `lax.cond` traces
both branches). Manual when a branch calls the function itself again (a recursion the Python test
ends would never end under `lax.cond`). The
`jnp.maximum`/`jnp.minimum` fix is always unsafe: NaN propagates through it, while Python's
`max` keeps the earlier argument when a comparison with NaN is false.

## References
- https://docs.jax.dev/en/latest/control-flow.html
- https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError
- https://docs.jax.dev/en/latest/_autosummary/jax.numpy.where.html
- https://docs.jax.dev/en/latest/_autosummary/jax.lax.cond.html
"""

from __future__ import annotations

import ast

import libcst as cst

from codemods._command import commands_for
from codemods.traced_control_flow.sites import (
    MINMAX,
    FunctionSites,
    Site,
    SiteRule,
    if_chain,
)
from codemods.traced_control_flow.split_condition import split_fix
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
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.traced import is_str_literal
from jaxfix.analysis.walk import walk
from jaxfix.model import Fix, ImportRequest
from jaxfix.rewriting.functions import FunctionRewrite
from jaxfix.rulebase import Code, Invalid, Rule, Valid


class TracedIfRule(SiteRule, Rule):
    __doc__ = __doc__

    name = "traced-if"
    codes = (Code("JAX301", "traced-if", "`if`/`elif`/conditional expression on a traced value", "sometimes"),)
    valid = (
        Valid(
            """
            import jax


            @jax.jit
            def flatten(x):
                if x.ndim > 1:
                    return x.reshape(-1)
                return x
            """
        ),
        Valid(
            """
            from functools import partial

            import jax
            import jax.numpy as jnp


            @partial(jax.jit, static_argnames=("mode",))
            def pick(x, mode):
                if mode == "abs":
                    return jnp.abs(x)
                return x
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def leaky(x):
                return jnp.where(x > 0, x, 0.1 * x)
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            def is_floating(a):
                return jnp.issubdtype(a.dtype, jnp.floating)


            @jax.jit
            def normalise(a):
                if not is_floating(a):
                    a = a.astype(jnp.float32)
                return a / jnp.linalg.norm(a)
            """
        ),
        Valid(
            """
            import equinox as eqx
            import jax


            class Window(eqx.Module):
                size: int = eqx.field(static=True)
                scale: jax.Array

                def __check_init__(self):
                    if self.size < 1:
                        raise ValueError("empty window")


            @jax.jit
            def build(scale):
                return Window(4, scale).scale
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def leaky(x):
                if x > 0:
                    return x
                else:
                    return 0.1 * x
            """,
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def leaky(x):
                return jnp.where(x > 0, x, 0.1 * x)
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def bounce(x, v):
                if x.sum() > 0:
                    x = x - v
                    v = -v
                else:
                    x = x + v
                return x, v
            """,
            """
            import jax


            @jax.jit
            def bounce(x, v):
                def true_branch(x, v):
                    x = x - v
                    v = -v
                    return x, v

                def false_branch(x, v):
                    x = x + v
                    return x, v

                x, v = jax.lax.cond(x.sum() > 0, true_branch, false_branch, x, v)
                return x, v
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def scale(x, double: bool):
                if double:
                    return 2 * x
                return x


            y = scale(1.0, True)
            """,
            """
            import functools

            import jax


            @functools.partial(jax.jit, static_argnames=("double",))
            def scale(x, double: bool):
                if double:
                    return 2 * x
                return x


            y = scale(1.0, True)
            """,
        ),
        Invalid(
            """
            from functools import partial

            import jax


            @partial(jax.jit, static_argnames=("mode",))
            def augment(x, mode):
                if mode == "train" and x.sum() > 0:
                    x = x * 2.0
                return x
            """,
            """
            from functools import partial

            import jax


            @partial(jax.jit, static_argnames=("mode",))
            def augment(x, mode):
                if mode == "train":
                    x = jax.numpy.where(x.sum() > 0, x * 2.0, x)
                return x
            """,
        ),
        Invalid(
            """
            import equinox as eqx
            import jax


            class Potential(eqx.Module):
                a: jax.Array

                def __check_init__(self):
                    if (self.a < 0) or (self.a > 1):
                        raise ValueError("a must be in [0, 1]")


            @jax.jit
            def energy(a, r):
                return Potential(a).a * r
            """,
            None,
        ),
    )

    screened = (ast.If, ast.IfExp, ast.Call)

    @staticmethod
    def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
        if type(n) is ast.Call:  # builtin `max`/`min` (`sites.minmax_site`)
            return (
                type(n.func) is ast.Name
                and n.func.id in MINMAX
                and fn.screen.names.qualify_ast(n.func) in MINMAX
                and any(fn.traced(a) for a in n.args)
            )
        return (type(n) is ast.If or type(n) is ast.IfExp) and fn.test_traced(n.test)

    @staticmethod
    def message(fn: FunctionRewrite, site: Site) -> str:
        if site.kind == "minmax":
            name = site.node.func.value
            return (
                f"builtin `{name}` compares traced `{fn.code(site.traced[0])}` with `{'>' if name == 'max' else '<'}`"
            )
        if site.kind == "ifexp":
            return f"conditional expression on traced `{fn.code(site.node.test)}`"
        if site.traced:  # a condition with static operands too: only these are the problem
            parts = ", ".join(f"`{fn.code(t)}`" for t in site.traced)
            return f"`{site.kind}` condition `{fn.code(site.node.test)}` has traced part {parts}"
        return f"`{site.kind}` condition `{fn.code(site.node.test)}` is traced"

    @staticmethod
    def decide(sites: FunctionSites, site: Site) -> Fix:
        """`static_argnames`, else `jnp.where`, else `lax.cond`, else manual with the reason."""
        fn = sites.rewrite
        if site.kind == "elif":
            return fn.ctx.manual("an `elif` on a traced value after a static test: nest it as `else: if ...:` first")
        if site.kind == "ifexp":
            return _BranchRewrite(fn).fix_ifexp(site.node)
        if site.kind == "minmax":
            return _fix_minmax(fn, site.node)
        chain = if_chain(site.node)
        static = static_argnames_fix(fn, [b.test for b in chain], site.node)
        if static is not None:
            return static
        compared = _compared_with_text(fn, [b.test for b in chain])
        if compared:
            return fn.ctx.manual(_TEXT_ARGUMENT.format(names=", ".join(f"`{p}`" for p in compared)))
        return split_fix(fn, site.node) or _BranchRewrite(fn).fix_if(site.node, chain)


# A parameter compared with a string literal holds a `str`, which jit cannot trace: the call fails
# on the argument itself (probml/probml-notebooks@4c0da5e9: notebooks/jax_intro.ipynb, `jax.jit(f)(42,
# "add")`), and a `jnp.where` on the comparison would not help; only a static argument does.
_TEXT_ARGUMENT = (
    "{names} is compared with a string, and a string cannot be a traced argument (the jitted call "
    "fails on it): make it a static argument (`static_argnames`) where the function is jitted"
)


def _compared_with_text(fn: FunctionRewrite, tests: list[cst.BaseExpression]) -> list[str]:
    """The traced parameters that `tests` compare with a string literal (`mode == "add"`)."""
    comparisons: list[cst.Comparison] = []

    class V(cst.CSTVisitor):
        def visit_Comparison(self, node: cst.Comparison) -> None:
            comparisons.append(node)

    for test in tests:
        walk(test, V())
    found: list[str] = []
    for node in comparisons:
        operands = (node.left, *(c.comparator for c in node.comparisons))
        if any(is_str_literal(x) for x in operands):
            for x in operands:
                if isinstance(x, cst.Name) and x.value in fn.facts.entry_traced and x.value not in found:
                    found.append(x.value)
    return found


class _BranchRewrite:
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
        if any(isinstance(side, _TEXT) for side in (n.body, n.orelse)):
            return self.fn.ctx.manual(
                "a side is a string, which `lax.cond`/`jnp.where` cannot return (only arrays and pytrees "
                "of them): make the condition static, or select a number and map it to the text outside"
            )
        if _structure(n.body) != _structure(n.orelse):
            return self.fn.ctx.manual(
                "the two sides differ in structure (a `None`, or tuples of other lengths), which "
                "`lax.cond`/`jnp.where` reject: make the condition static, or give both sides the same shape"
            )
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


def _fix_minmax(fn: FunctionRewrite, call: cst.Call) -> Fix:
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


# `<Name>Command` for the rule: a libcst codemod command, made on first access
__getattr__ = commands_for(TracedIfRule)
