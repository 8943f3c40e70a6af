"""Python control flow on values that are traced inside `jax.jit` (and vmap, lax bodies).

## What it does
Finds Python `if`/`elif`/conditional expressions (JAX301), `while` loops (JAX302) and
`for ... in range(...)` loops (JAX303) whose condition or bound is a traced value inside a
function that runs under a trace; `int()`/`float()`/`bool()`/`.item()`/`.tolist()` on traced
values (JAX304); `assert`, `and`, `or` and `not` on traced values (JAX305); array shapes and
slice bounds computed from traced values (`jnp.zeros(n)`, `jnp.arange(n)`, `x[:n]`; JAX307).
NumPy functions applied to traced values are JAX402's (trace-time semantics), which decides
from a measured table; JAX306 is retired.

A function runs under a trace when it is decorated with `@jax.jit`, `@partial(jax.jit, ...)`,
`@eqx.filter_jit`, `@jax.vmap`, wrapped by `jax.jit(f, ...)` anywhere in the module, passed as a
body to `lax.scan`/`fori_loop`/`while_loop`/`cond`/`switch`/`jax.vmap`, or called from such code
with traced arguments (helpers, methods of pytree classes, properties). Traced values are the
non-static parameters and everything computed from them, including any `jax.numpy` result.
Conditions on `.shape`, `.ndim`, `.dtype`, `.size`, `len()`, `isinstance()`, `is None`, static
arguments, literals and module constants are static and never flagged.

## Why is this bad?
Under a trace a value has no concrete Python truth value or integer value: the code raises
`TracerBoolConversionError`, `ConcretizationTypeError`, `TracerIntegerConversionError` or
`TracerArrayConversionError` the first time it is traced. The code only ever worked eagerly.

## Known problems
The analysis is within one module. A parameter that callers in other modules pass as a Python
value is assumed traced unless it has a literal default that no call site in this module passes.
A `jnp.where` rewrite broadcasts: if the two original branches returned different shapes, the
rewrite returns the broadcast shape (the original could never run under jit anyway).
Where the evidence that a value is an array is weak, the rule stays silent: `self` is traced only
in classes the module registers as pytrees (`register_pytree_node_class`, `flax.struct.dataclass`,
`eqx.Module`, `nn.Module`, `NamedTuple`, a `tree_flatten` method), so a method of a class whose
pytree base lives in another module is not checked through `self`; the truth of a parameter
annotated `Sequence`/`tuple`/`list` is taken as static even if a caller passes an array.

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

## Fix, decided per site
- **`static_argnames`** when every condition at the site depends only on parameters that every
  call site in the module passes as hashable literals (a config flag, a mode string, a loop
  bound), and the function is jitted here with `jax.jit`: the name is added to the
  `static_argnames` of its decorator (`@jax.jit` becomes `@partial(jax.jit, static_argnames=...)`)
  or of its `jax.jit(f, ...)` call, keeping the options already there. This is also the choice
  for loops in functions that are differentiated in the module (a static-bound loop
  differentiates, `while_loop` does not).
- **`jnp.where`** when each branch is a single `return` or a single assignment of one variable
  with a cheap, pure expression (names, arithmetic, elementwise `jnp` functions); `elif` chains
  nest. Both sides are evaluated, so a side with `sqrt`, `log`, a division or a power gets the
  double-where form (its argument is replaced by a safe value where it is not taken), which keeps
  gradients free of NaN.
- **`lax.cond`** for everything else a function can express: several assigned variables (tuple
  outputs; variables assigned before the `if` are passed as operands), expensive or nested
  branches, and early returns (the code after `if c: return A` moves into the false branch).
  Nested conditions inside the branches are rewritten in the next round.
- **`lax.while_loop`** for `while` on a traced condition, carrying every variable that the body
  assigns and that exists before the loop; **`lax.fori_loop`** for `for i in range(traced)`.
- **manual** for: `break`/`continue`/`return` inside a loop, side effects (expression statements,
  attribute or item assignment) in a branch or loop body, `raise`, a variable first assigned
  inside a branch or loop and used afterwards, an early return inside a loop or nested block,
  `int()`/`.item()` and `assert`.
- JAX307 a traced shape or slice bound: `static_argnames` when the call sites allow it, else
  **manual** (the output shape would depend on data).
- JAX305 `a and b` / `not a` outside a condition: `jnp.logical_and`/`logical_or`/`logical_not`.

## Options
None.

## Fix safety
The reference behaviour is the original run eagerly (`jax.disable_jit()`), since it cannot run
under jit. Fixes are **safe** when the rewrite computes the same values, dtypes and gradients
for every input the original accepted eagerly. They are **unsafe** (message says which hazard)
when: a branch produces a Python number literal and another an array (`jnp.where` promotes the
literal, and `lax.cond` requires equal types, so the dtype may differ from the eager original's
Python scalar on that path); a loop carry starts as a Python literal and the body changes it
with traced values (a zero-trip loop then returns the promoted dtype); the function is
differentiated in the module and the fix uses `while_loop`/`fori_loop` with traced bounds
(reverse mode fails); a parameter becomes static though it is not annotated `int`/`bool`/`str`
(a caller outside the module passing an array would now fail, and each distinct value compiles
once); `a and b` becomes `logical_and` on operands that are not comparisons (the original returns
an operand, the rewrite a boolean array).

## References
- https://docs.jax.dev/en/latest/control-flow.html
- https://docs.jax.dev/en/latest/errors.html
- https://docs.jax.dev/en/latest/_autosummary/jax.lax.cond.html
- https://docs.jax.dev/en/latest/_autosummary/jax.lax.while_loop.html
- https://docs.jax.dev/en/latest/_autosummary/jax.numpy.where.html
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, is_hashable_literal, jit_contexts
from jaxfix.analysis.trace_screen import MAY_NAME_A_TRANSFORM, ScreenFunction, any_site
from jaxfix.analysis.traced import analyse_function
from dataclasses import replace

from jaxfix.analysis.walk import walk
from jaxfix.edits import apply_edits
from jaxfix.model import Edit, Finding, Fix, ImportRequest, Safety
from jaxfix.rulebase import Code, Example, Rule, RuleContext

# elementwise jax.numpy functions that are cheap and pure enough to evaluate on both sides
CHEAP_JNP = frozenset(
    """abs absolute negative positive sign square sqrt cbrt exp exp2 expm1 log log1p log2 log10
    sin cos tan sinh cosh tanh arcsin arccos arctan arctan2 arcsinh arccosh arctanh maximum minimum
    clip where add subtract multiply divide true_divide floor_divide power float_power mod remainder
    floor ceil round rint trunc reciprocal logical_and logical_or logical_not isnan isinf isfinite
    asarray astype zeros_like ones_like full_like real imag conj hypot sinc""".split()
)
# ops whose untaken side can be NaN/inf (value or gradient): arg position -> safe stand-in
UNSAFE_OPS = {
    "sqrt": "1.0",
    "log": "1.0",
    "log2": "1.0",
    "log10": "1.0",
    "log1p": "0.0",
    "reciprocal": "1.0",
    "arcsin": "0.0",
    "arccos": "0.0",
    "arctanh": "0.0",
    "rsqrt": "1.0",
    "power": None,  # base only
    "float_power": None,
}
# jax.numpy functions whose arguments at these positions / keywords are shapes or sizes
SHAPE_ARGS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "zeros": ((0,), ("shape",)),
    "ones": ((0,), ("shape",)),
    "empty": ((0,), ("shape",)),
    "full": ((0,), ("shape",)),
    "arange": ((0, 1, 2), ("start", "stop", "step")),
    "eye": ((0, 1), ("N", "M")),
    "identity": ((0,), ("n",)),
    "linspace": ((2,), ("num",)),
    "reshape": ((1,), ("shape", "newshape")),
    "broadcast_to": ((1,), ("shape",)),
    "tri": ((0, 1), ("N", "M")),
    "repeat": ((), ("total_repeat_length",)),
}
SCALAR_CONVERSIONS = frozenset({"int", "float", "bool", "complex"})


def _may_flag(fn: ScreenFunction, n: ast.AST) -> bool:  # noqa: C901
    """Could `check` report `n`, a node of traced function `fn`? (Mirrors `_FunctionChecker.visit`.)"""
    kind = type(n)
    if kind is ast.If or kind is ast.While or kind is ast.IfExp or kind is ast.Assert:
        return fn.test_traced(n.test)
    if kind is ast.For:
        return isinstance(n.iter, ast.Call) and fn.screen.names.qualify_ast(n.iter.func) == "range" and fn.traced(n.iter)
    if kind is ast.BoolOp:
        return any(fn.test_traced(v) for v in n.values[:-1])
    if kind is ast.UnaryOp:
        return isinstance(n.op, ast.Not) and fn.test_traced(n.operand)
    if kind is ast.Call:
        q = fn.screen.names.qualify_ast(n.func) or ""
        args = [*n.args, *(k.value for k in n.keywords)]
        if q in SCALAR_CONVERSIONS and any(fn.traced(a) for a in args):
            return True
        if isinstance(n.func, ast.Attribute) and n.func.attr in ("item", "tolist") and fn.traced(n.func.value):
            return True
        if q.startswith("jax.numpy."):
            positions, keywords = SHAPE_ARGS.get(q.rsplit(".", 1)[-1], ((), ()))
            pos = [a for a in n.args if not isinstance(a, ast.Starred)]
            shape_args = [pos[i] for i in positions if i < len(pos)]
            shape_args += [k.value for k in n.keywords if k.arg in keywords]
            return any(fn.traced(a) for a in shape_args)
        return False
    if kind is ast.Subscript:
        parts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
        return any(
            fn.traced(p.lower) or fn.traced(p.upper) or fn.traced(p.step) for p in parts if isinstance(p, ast.Slice)
        )
    return False

_FAMILY = "traced-control-flow"


class TracedControlFlowRule(Rule):
    __doc__ = __doc__

    name = _FAMILY
    codes = (
        Code("JAX301", "traced-if", "`if`/`elif`/conditional expression on a traced value", "sometimes"),
        Code("JAX302", "traced-while", "`while` loop on a traced condition", "sometimes"),
        Code("JAX303", "traced-range", "`for` over `range()` of a traced value", "sometimes"),
        Code("JAX304", "traced-to-python", "`int()`/`float()`/`bool()`/`.item()`/`.tolist()` on a traced value", "never"),
        Code("JAX305", "traced-bool-op", "`assert`/`and`/`or`/`not` on a traced value", "sometimes"),
        Code("JAX307", "traced-shape", "array shape or slice bound computed from a traced value", "sometimes"),
    )
    prefilter = ("jit", "vmap", "lax", "pmap")
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    verify_reference = "eager"
    examples = (
        Example(
            "@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    else:\n        return 2 * x\n",
            "@jax.jit\ndef f(x):\n    return jnp.where(x > 0, x, 2 * x)\n",
        ),
        Example(
            "def g(x, n):\n    i = 0\n    while i < n:\n        i += 1\n    return x + i\n\ng_jit = jax.jit(g)\ng_jit(10, 20)\n",
            "def g(x, n):\n    i = 0\n    while i < n:\n        i += 1\n    return x + i\n\n"
            'g_jit = jax.jit(g, static_argnames=("n",))\ng_jit(10, 20)\n',
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """Some function that may run under a trace has a site this rule reports on a value that
        may be traced (`jaxfix.analysis.trace_screen`: the stdlib-AST over-approximation of the
        analysis `check` runs)."""
        return any_site(tree, _may_flag)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
        for info in list(jc.traced_functions()):
            yield from _FunctionChecker(self, ctx, jc, info).run()


class _FunctionChecker:
    def __init__(self, rule: TracedControlFlowRule, ctx: RuleContext, jc: JitContexts, info: FuncInfo) -> None:
        self.rule = rule
        self.ctx = ctx
        self.jc = jc
        self.info = info
        self.facts = info.facts
        self.covered: set[cst.CSTNode] = set()
        self.names = ctx.names
        self._taken: set[str] | None = None

    # -- traversal ------------------------------------------------------------------
    def run(self) -> Iterator[Finding]:
        node = self.info.node
        out: list[Finding] = []
        checker = self

        class V(cst.CSTVisitor):
            def __init__(self) -> None:
                self.stmts: list[cst.CSTNode] = []

            def on_visit(self, n: cst.CSTNode) -> bool:
                if n is not node and isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                    return False
                if n in checker.facts.before:
                    self.stmts.append(n)
                stmt = self.stmts[-1] if self.stmts else None
                found = checker.visit(n, stmt)
                if found is not None:
                    out.append(found)
                return True

            def on_leave(self, original_node: cst.CSTNode) -> None:
                if original_node in checker.facts.before and self.stmts and self.stmts[-1] is original_node:
                    self.stmts.pop()

        if isinstance(node, cst.Lambda):
            walk(node.body, V())
        else:
            walk(node.body, V())
        return iter(out)

    def traced(self, expr: cst.BaseExpression, stmt) -> bool:
        return self.facts.traced(expr, stmt)

    def test_traced(self, expr: cst.BaseExpression, stmt) -> bool:
        """`bool(expr)` needs a traced value (the truth of a Python tuple/list is static)."""
        return self.facts.test_traced(expr, stmt)

    def visit(self, n: cst.CSTNode, stmt) -> Finding | None:
        if n in self.covered:
            return None
        if isinstance(n, cst.If):
            return self.check_if(n, stmt)
        if isinstance(n, cst.While):
            if self.test_traced(n.test, n):
                self.cover(n.test)
                return self.finding("JAX302", n, f"`while` condition `{self.code(n.test)}` is traced", self.fix_while(n))
            return None
        if isinstance(n, cst.For):
            return self.check_for(n)
        if isinstance(n, cst.IfExp):
            if self.test_traced(n.test, stmt):
                self.cover(n.test)
                return self.finding(
                    "JAX301", n, f"conditional expression on traced `{self.code(n.test)}`", self.fix_ifexp(n)
                )
            return None
        if isinstance(n, cst.Assert):
            if self.test_traced(n.test, stmt):
                self.cover(n.test)
                return self.finding(
                    "JAX305",
                    n,
                    f"`assert` on traced `{self.code(n.test)}`",
                    self.ctx.manual(
                        "an assert cannot check a traced value: use `equinox.error_if` or "
                        "`jax.experimental.checkify.check`, or remove it"
                    ),
                )
            return None
        if isinstance(n, cst.BooleanOperation):
            if self.test_traced(n.left, stmt):
                self.cover(n.left)
                return self.finding("JAX305", n, f"`{self.op(n)}` on traced `{self.code(n.left)}`", self.fix_boolop(n))
            return None
        if isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not):
            if self.test_traced(n.expression, stmt):
                return self.finding("JAX305", n, f"`not` on traced `{self.code(n.expression)}`", self.fix_boolop(n))
            return None
        if isinstance(n, cst.Call):
            return self.check_call(n, stmt) or self.check_shape_call(n, stmt)
        if isinstance(n, cst.Subscript):
            return self.check_slice(n, stmt)
        return None

    def cover(self, expr: cst.CSTNode) -> None:
        """Mark the boolean structure of a reported condition so it is not reported again."""
        self.covered.add(expr)
        if isinstance(expr, cst.BooleanOperation):
            self.cover(expr.left)
            self.cover(expr.right)
        elif isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            self.cover(expr.expression)
        elif isinstance(expr, cst.Call):
            q = self.names.qualify(expr.func)
            if q == "bool":
                self.covered.add(expr)

    # -- helpers ----------------------------------------------------------------------
    def finding(self, code: str, node: cst.CSTNode, message: str, fix: Fix | None) -> Finding:
        if fix is not None:
            if fix.safety is Safety.MANUAL:
                message = f"{message}; manual: {fix.title}"
            elif fix.safety is Safety.UNSAFE:
                message = f"{message}; {fix.title}"
            else:
                message = f"{message}; {fix.title}"
        return self.ctx.finding(self.rule, code, node, message, fix)

    def code(self, node: cst.CSTNode) -> str:
        text = self.ctx.module.code_for_node(node).strip()
        return text if len(text) <= 60 else text[:57] + "..."

    def op(self, n: cst.BooleanOperation) -> str:
        return "and" if isinstance(n.operator, cst.And) else "or"

    def ref(self, qualname: str, imports: list[ImportRequest]) -> str:
        spelled, reqs = self.names.reference(qualname)
        imports.extend(reqs)
        return spelled

    def parse_stmt(self, text: str, at: cst.CSTNode | None = None) -> cst.BaseStatement:
        """Parse generated code; a line too long at `at`'s indentation is wrapped the way black would."""
        if at is not None:
            indent = self.ctx.position(at).start.column
            if any(len(line) + indent > 88 for line in text.splitlines()):
                text = _blacken(text, 88 - indent)
        return cst.parse_statement(text, config=self.ctx.module.config_for_parsing)

    def parse_expr(self, text: str) -> cst.BaseExpression:
        return cst.parse_expression(text, config=self.ctx.module.config_for_parsing)

    def unique(self, base: str) -> str:
        """A name free in this function: not read or bound in it, nor at module level, nor an
        enclosing function's local, nor given to another fix of this function in this scan."""
        if self._taken is None:
            taken = set(_names_read(self.info.node)) | set(self.jc.module_funcs) | set(self.jc.module_names)
            taken |= set(self.names.bindings)
            parent = self.info.parent
            while parent is not None:
                taken |= parent.facts.locals if parent.facts is not None else set()
                parent = parent.parent
            self._taken = taken
        return self.ctx.fresh_name(base, self._taken)

    # -- JAX307 shapes and slices ----------------------------------------------------------
    def check_shape_call(self, n: cst.Call, stmt) -> Finding | None:
        q = self.names.qualify(n.func) or ""
        if not q.startswith("jax.numpy."):
            return None
        positions, keywords = SHAPE_ARGS.get(q.rsplit(".", 1)[-1], ((), ()))
        if not positions and not keywords:
            return None
        pos = [a.value for a in n.args if a.keyword is None and not a.star]
        shape_args = [pos[i] for i in positions if i < len(pos)]
        shape_args += [a.value for a in n.args if a.keyword is not None and a.keyword.value in keywords]
        traced = [a for a in shape_args if self.traced(a, stmt)]
        if not traced:
            return None
        fix = self.static_fix(traced, n) or self.ctx.manual(
            "the output shape would depend on a traced value: make it a static argument, "
            "or use a fixed maximum size with masking"
        )
        return self.finding("JAX307", n, f"`{q.rsplit('.', 1)[-1]}` gets traced size `{self.code(traced[0])}`", fix)

    def check_slice(self, n: cst.Subscript, stmt) -> Finding | None:
        bounds = []
        for el in n.slice:
            if isinstance(el.slice, cst.Slice):
                bounds += [b for b in (el.slice.lower, el.slice.upper, el.slice.step) if b is not None]
        traced = [b for b in bounds if self.traced(b, stmt)]
        if not traced:
            return None
        fix = self.static_fix(traced, n) or self.ctx.manual(
            "slice bounds must be static: use `lax.dynamic_slice` with a static size, "
            "or make the bound a static argument"
        )
        return self.finding("JAX307", n, f"slice bound `{self.code(traced[0])}` is traced", fix)

    # -- JAX304 ---------------------------------------------------------------
    def check_call(self, n: cst.Call, stmt) -> Finding | None:
        q = self.names.qualify(n.func)
        args = [a.value for a in n.args]
        if q in SCALAR_CONVERSIONS and len(args) == 1 and not n.args[0].star and self.traced(args[0], stmt):
            if n in self.covered:
                return None
            return self.finding(
                "JAX304",
                n,
                f"`{q}()` of traced `{self.code(args[0])}` needs a concrete value",
                self.ctx.manual(
                    "keep it an array (`x.astype(...)`), make the argument static "
                    "(`static_argnames`), or print it with `jax.debug.print`"
                ),
            )
        if (
            isinstance(n.func, cst.Attribute)
            and n.func.attr.value in ("item", "tolist")
            and not n.args
            and self.traced(n.func.value, stmt)
        ):
            return self.finding(
                "JAX304",
                n,
                f"`.{n.func.attr.value}()` of traced `{self.code(n.func.value)}` needs a concrete value",
                self.ctx.manual("keep it an array, or print it with `jax.debug.print`"),
            )
        return None

    # -- JAX305 and/or/not ---------------------------------------------------------------
    def fix_boolop(self, n) -> Fix:
        imports: list[ImportRequest] = []
        new = self.predicate(n, imports)
        boolean = self.is_boolean(n)
        safety = Safety.SAFE if boolean else Safety.UNSAFE
        title = "use `jnp.logical_*`" + ("" if boolean else " (unsafe: returns a boolean array, not an operand)")
        return self.ctx.rewrite(title, safety, replace={n: new}, imports=imports)

    def is_boolean(self, e: cst.BaseExpression) -> bool:
        if isinstance(e, cst.Comparison):
            return True
        if isinstance(e, cst.BooleanOperation):
            return self.is_boolean(e.left) and self.is_boolean(e.right)
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Not):
            return True
        if isinstance(e, cst.Call):
            q = self.names.qualify(e.func) or ""
            return q.split(".")[-1] in ("isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "any", "all")
        if isinstance(e, cst.Name) and e.value in ("True", "False"):
            return True
        return False

    def predicate(self, e: cst.BaseExpression, imports: list[ImportRequest]) -> cst.BaseExpression:
        """The condition as an array expression: `and`/`or`/`not` become `jnp.logical_*`."""
        if isinstance(e, cst.BooleanOperation):
            fn = "logical_and" if isinstance(e.operator, cst.And) else "logical_or"
            func = self.parse_expr(self.ref(f"jax.numpy.{fn}", imports))
            return cst.Call(
                func=func,
                args=[
                    cst.Arg(self.predicate(e.left, imports), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Arg(self.predicate(e.right, imports)),
                ],
            )
        if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Not):
            func = self.parse_expr(self.ref("jax.numpy.logical_not", imports))
            return cst.Call(func=func, args=[cst.Arg(self.predicate(e.expression, imports))])
        return _strip_parens(e)

    # -- JAX301 if / elif ------------------------------------------------------------------
    def check_if(self, n: cst.If, stmt) -> Finding | None:
        chain = _if_chain(n)
        traced_tests = [i for i, branch in enumerate(chain) if self.test_traced(branch.test, branch)]
        if not traced_tests:
            return None
        for branch in chain:
            self.covered.add(branch)
            self.cover(branch.test)
        first = chain[traced_tests[0]]
        desc = f"`{'elif' if traced_tests[0] else 'if'}` condition `{self.code(first.test)}` is traced"
        if traced_tests[0] != 0:
            fix = self.ctx.manual("an `elif` on a traced value after a static test: nest it as `else: if ...:` first")
            return self.finding("JAX301", first, desc, fix)
        fix = self.static_fix([b.test for b in chain], n) or self.fix_if(n, chain)
        return self.finding("JAX301", n, desc, fix)

    def fix_if(self, n: cst.If, chain: list[cst.If]) -> Fix:
        problem = self.branch_problem(n) or next(
            (p for b in chain if (p := self.guard_problem(b.test, b)) is not None), None
        )
        if problem:
            return self.ctx.manual(problem)
        block, index = self.enclosing_block(n)
        if block is None:
            return self.ctx.manual("the `if` is not in a plain block")
        if _always_returns(_stmts(n.body)) or any(_contains_return(_stmts(b.body)) for b in chain) or (
            _final_else(chain) is not None and _contains_return(_final_else(chain))
        ):
            return self.fix_if_return(n, chain, block, index)
        return self.fix_if_assign(n, chain)

    def branch_problem(self, n: cst.If) -> str | None:
        for kind in _statement_kinds(n):
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

    def has_comments(self, n: cst.CSTNode) -> bool:
        own = n.with_changes(leading_lines=[]) if hasattr(n, "leading_lines") else n
        return "#" in self.ctx.module.code_for_node(own)

    def guard_problem(self, test: cst.BaseExpression, stmt) -> str | None:
        """`mask is not None and mask.any()`: the static operand guards code that would fail when
        it is false, and `jnp.where`/`lax.cond` evaluate or trace both sides."""
        parts: list[cst.BaseExpression] = []

        def flatten(e: cst.BaseExpression) -> None:
            if isinstance(e, cst.BooleanOperation):
                flatten(e.left)
                flatten(e.right)
            else:
                parts.append(e)

        flatten(test)
        if len(parts) > 1:
            static = [p for p in parts if not self.traced(p, stmt)]
            if static:
                return (
                    f"the static part `{self.code(static[0])}` of the condition may guard the branch: "
                    "split it into an outer Python `if` on the static part and an inner condition on the traced part"
                )
        return None

    def enclosing_block(self, n: cst.CSTNode) -> tuple[cst.IndentedBlock | None, int]:
        parent = self.ctx.parent(n)
        if isinstance(parent, cst.IndentedBlock):
            return parent, list(parent.body).index(n)
        return None, -1

    # early-return form
    def fix_if_return(self, n: cst.If, chain: list[cst.If], block: cst.IndentedBlock, index: int) -> Fix:
        func = self.info.node
        if not isinstance(func, cst.FunctionDef) or block is not func.body:
            return self.ctx.manual(
                "an early `return` inside a nested block or loop: restructure into one `return lax.cond(...)` by hand"
            )
        rest = list(block.body[index + 1 :])
        paths = self.return_paths(n, rest)
        if paths is None:
            return self.ctx.manual(
                "not every path after the traced `if` ends in `return`: make both branches return, then use `lax.cond`"
            )
        true_path, false_path = paths
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        removals = {s: cst.RemoveFromParent() for s in rest}
        where = None if self.has_comments(n) else self.where_for_returns(n, chain, rest, imports, hazards)
        if where is not None:
            new_stmt = self.parse_stmt(f"return {where}\n", at=n).with_changes(leading_lines=n.leading_lines)
            return self.finish(
                "replace with `jnp.where`", hazards, replace={n: new_stmt, **removals}, imports=imports, span=n
            )
        if self.literal_mismatch([_ret_value(s) for s in _all_returns(true_path + false_path)]):
            hazards.append("a branch returns a Python number while another returns an array: check the dtypes agree")
        if _contains_return_in_loop(true_path + false_path):
            return self.ctx.manual("a `return` inside a loop in a branch: restructure by hand")
        operands = self.operands(true_path + false_path, n)
        t_name, f_name = self.unique("true_branch"), self.unique("false_branch")
        t_def = self.make_def(t_name, operands, true_path, None)
        f_def = self.make_def(f_name, operands, false_path, None)
        cond = self.ref("jax.lax.cond", imports)
        pred = self.ctx.module.code_for_node(self.predicate(n.test, imports))
        call = f"return {cond}({pred}, {t_name}, {f_name}{''.join(', ' + o for o in operands)})\n"
        stmts = self.layout(n, [t_def, f_def, self.parse_stmt(call, at=n)])
        return self.finish(
            "replace the early return with `lax.cond`",
            hazards,
            replace={n: cst.FlattenSentinel(stmts), **removals},
            imports=imports,
            span=n,
        )

    def return_paths(self, n: cst.If, rest: list[cst.BaseStatement]):
        body = _stmts(n.body)
        orelse = n.orelse
        if orelse is None:
            false_path = rest
        elif isinstance(orelse, cst.If):
            false_path = [_as_if(orelse)] + rest
        else:
            false_path = _stmts(orelse.body) + rest
        if not _always_returns(body):
            return None
        if not _always_returns(false_path):
            return None
        if _always_returns(false_path[:-1]) if false_path else False:
            pass
        return body, false_path

    def where_for_returns(self, n, chain, rest, imports, hazards) -> str | None:
        """`jnp.where(c1, A, jnp.where(c2, B, C))` when every branch is one cheap `return`."""
        values = []
        for branch in chain:
            stmts = _stmts(branch.body)
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
        return self.where_chain(values, last, imports, hazards)

    def where_chain(self, values, last, imports, hazards) -> str | None:
        exprs = [v for _, v in values] + [last]
        if not all(self.is_cheap(e) for e in exprs):
            return None
        if any(isinstance(e, (cst.Tuple, cst.List, cst.Dict)) for e in exprs):
            return None
        if self.literal_mismatch(exprs):
            hazards.append("a branch is a Python number and another an array: `jnp.where` promotes the number")
        where = self.ref("jax.numpy.where", imports)
        text = self.code_of(last)
        for test, value in reversed(values):
            pred_node = self.predicate(test, imports)
            pred = self.ctx.module.code_for_node(pred_node)
            taken = self.double_where(value, pred, True, imports)
            not_taken = self.double_where_text(text, last if text == self.code_of(last) else None, pred, imports)
            text = f"{where}({pred}, {taken}, {not_taken})"
        return text

    def double_where_text(self, text, node, pred, imports) -> str:
        if node is None:
            return text
        return self.double_where(node, pred, False, imports)

    def double_where(self, e: cst.BaseExpression, pred: str, taken_when_true: bool, imports) -> str:
        """`e` with the arguments of NaN-prone ops replaced by a safe value where `e` is not taken."""
        where = self.ref("jax.numpy.where", imports)
        checker = self
        replacements: dict[cst.CSTNode, cst.BaseExpression] = {}

        def guard(arg: cst.BaseExpression, safe: str) -> cst.BaseExpression:
            a = checker.code_of(arg)
            text = f"{where}({pred}, {a}, {safe})" if taken_when_true else f"{where}({pred}, {safe}, {a})"
            return checker.parse_expr(text)

        class V(cst.CSTVisitor):
            def visit_Call(self, c: cst.Call) -> None:
                q = checker.names.qualify(c.func) or ""
                name = q.rsplit(".", 1)[-1]
                if q.startswith("jax.numpy.") and name in UNSAFE_OPS and c.args:
                    a0 = c.args[0].value
                    if checker.traced(a0, None):
                        safe = UNSAFE_OPS[name] or "1.0"
                        replacements[a0] = guard(a0, safe)

            def visit_BinaryOperation(self, b: cst.BinaryOperation) -> None:
                if isinstance(b.operator, (cst.Divide, cst.FloorDivide, cst.Modulo)) and checker.traced(b.right, None):
                    if not isinstance(b.right, (cst.Integer, cst.Float)):
                        replacements[b.right] = guard(b.right, "1")
                if isinstance(b.operator, cst.Power) and checker.traced(b.left, None):
                    if not (isinstance(b.right, cst.Integer) and int(b.right.value, 0) >= 0):
                        replacements[b.left] = guard(b.left, "1.0")

        walk(e, V())
        if not replacements:
            return self.code_of(e)

        class T(cst.CSTTransformer):
            def on_leave(self, original, updated):
                if original in replacements:
                    rep = replacements[original]
                    if isinstance(original, cst.BaseExpression) and original.lpar:
                        rep = rep.with_changes(lpar=original.lpar, rpar=original.rpar)
                    return rep
                return updated

        return self.ctx.module.code_for_node(e.visit(T()))

    def code_of(self, e: cst.CSTNode) -> str:
        return self.ctx.module.code_for_node(_strip_parens(e) if isinstance(e, cst.BaseExpression) else e)

    def is_cheap(self, e: cst.BaseExpression) -> bool:
        if isinstance(e, (cst.Name, cst.Integer, cst.Float, cst.Imaginary)):
            return True
        if isinstance(e, cst.Attribute):
            return self.is_cheap(e.value)
        if isinstance(e, cst.Subscript):
            return self.is_cheap(e.value) and all(
                isinstance(s.slice, cst.Index) and self.is_cheap(s.slice.value) for s in e.slice
            )
        if isinstance(e, cst.BinaryOperation):
            return self.is_cheap(e.left) and self.is_cheap(e.right) and not isinstance(e.operator, cst.MatrixMultiply)
        if isinstance(e, cst.UnaryOperation):
            return not isinstance(e.operator, cst.Not) and self.is_cheap(e.expression)
        if isinstance(e, cst.Comparison):
            return self.is_cheap(e.left) and all(self.is_cheap(c.comparator) for c in e.comparisons)
        if isinstance(e, cst.Call):
            q = self.names.qualify(e.func) or ""
            if q.startswith("jax.numpy.") and q.split(".")[-1] in CHEAP_JNP:
                return all(self.is_cheap(a.value) and not a.star for a in e.args)
            return False
        return False

    def literal_mismatch(self, exprs) -> bool:
        kinds = set()
        for e in exprs:
            if e is None:
                continue
            lit = _number_literal(e)
            kinds.add(lit if lit is not None else "array")
        return len(kinds) > 1 and kinds != {"float", "array"}

    # assignment form
    def fix_if_assign(self, n: cst.If, chain: list[cst.If]) -> Fix:
        branches = [_stmts(b.body) for b in chain]
        final = _final_else(chain)
        branches.append(final if final is not None else [])
        assigned: list[str] = []
        for body in branches:
            for name in _ordered_assigned(body):
                if name not in assigned:
                    assigned.append(name)
        if not assigned:
            return self.ctx.manual("the branches assign nothing: nothing to select between")
        bound = self.bound_before(n)
        for name in assigned:
            everywhere = all(name in assigned_names_in(body) for body in branches)
            if not everywhere and name not in bound:
                return self.ctx.manual(
                    f"`{name}` is assigned in only some branches and not before the `if`: "
                    "give it a value before the `if`, then use `lax.cond`"
                )
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        # jnp.where: one variable, each branch one simple assignment (comments survive only in lax.cond)
        if len(assigned) == 1 and not self.has_comments(n):
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
                where = self.where_chain(list(zip(tests, values[:-1])), values[-1], imports, hazards)
                if where is not None:
                    new_stmt = self.parse_stmt(f"{var} = {where}\n", at=n).with_changes(leading_lines=n.leading_lines)
                    return self.finish(
                        "replace with `jnp.where`", hazards, replace={n: new_stmt}, imports=imports, span=n
                    )
        # lax.cond with the assigned variables as outputs
        for var in assigned:
            kinds = set()
            for body in branches:
                value = _single_assignment_value(_assignments_of(body, var), var)
                if value is None or value is False:
                    continue
                kinds.add(_number_literal(value) or "array")
            if len(kinds) > 1 and kinds != {"float", "array"}:
                hazards.append(f"`{var}` is a Python number in one branch and an array in another: check the dtypes agree")
        operands = [v for v in assigned if v in bound]
        outs = ", ".join(assigned) + ("," if len(assigned) == 1 and False else "")
        ret = assigned[0] if len(assigned) == 1 else ", ".join(assigned)
        t_name, f_name = self.unique("true_branch"), self.unique("false_branch")
        t_body = branches[0]
        f_body = ([_as_if(n.orelse)] if isinstance(n.orelse, cst.If) else (final or []))
        t_def = self.make_def(t_name, operands, t_body, ret)
        f_def = self.make_def(f_name, operands, f_body, ret)
        cond = self.ref("jax.lax.cond", imports)
        pred = self.ctx.module.code_for_node(self.predicate(n.test, imports))
        call = f"{outs} = {cond}({pred}, {t_name}, {f_name}{''.join(', ' + o for o in operands)})\n"
        stmts = self.layout(n, [t_def, f_def, self.parse_stmt(call, at=n)])
        return self.finish(
            "replace with `lax.cond`", hazards, replace={n: cst.FlattenSentinel(stmts)}, imports=imports, span=n
        )

    def bound_before(self, n: cst.CSTNode) -> set[str]:
        """Parameters, plus names assigned in the function textually before `n` (a sound-enough over-approximation
        of 'definitely bound' for straight-line code; names first bound in an earlier branch count too)."""
        func = self.info.node
        bound = set(self.info.params)
        pos = self.ctx.position(n).start
        for stmt, _env in self.facts.before.items():
            try:
                p = self.ctx.position(stmt).start
            except KeyError:
                continue
            if (p.line, p.column) < (pos.line, pos.column) and not _is_inside(stmt, n, self.ctx):
                if isinstance(stmt, cst.BaseSmallStatement):
                    bound |= assigned_names_in_small(stmt)
                elif isinstance(stmt, cst.For) and self.ctx.position(stmt).end.line < pos.line:
                    bound |= set()
        del func
        return bound

    def operands(self, stmts, n) -> list[str]:
        names = []
        bound = self.bound_before(n)
        for name in _ordered_assigned(stmts):
            if name in bound and name not in names:
                names.append(name)
        return names

    def make_def(self, name: str, params: list[str], body: list[cst.BaseStatement], ret: str | None) -> cst.FunctionDef:
        indent = self.ctx.module.config_for_parsing.default_indent
        text = "".join(self.ctx.module.code_for_node(s) for s in body) or "pass\n"
        if ret is not None:
            text += f"return {ret}\n"
        src = f"def {name}({', '.join(params)}):\n" + textwrap.indent(text, indent, lambda line: True)
        src = "\n".join(line.rstrip() if not line.strip() else line for line in src.split("\n"))
        return self.parse_stmt(src)

    def layout(self, n: cst.CSTNode, stmts: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        """Blank lines as black puts them: around nested defs, none at the start of a block."""
        block, index = self.enclosing_block(n)
        at_start = block is not None and index == 0
        out = []
        for i, stmt in enumerate(stmts):
            if i == 0:
                lines = list(n.leading_lines)
                if not at_start and not any(isinstance(x, cst.EmptyLine) and x.comment is None for x in lines[:1]):
                    lines.insert(0, cst.EmptyLine(indent=False))
                if at_start and not lines:
                    lines = []
                stmt = stmt.with_changes(leading_lines=lines)
            elif isinstance(stmt, cst.FunctionDef) or isinstance(stmts[i - 1], cst.FunctionDef):
                stmt = stmt.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            out.append(stmt)
        return out

    def finish(self, title: str, hazards: list[str], *, span: cst.CSTNode | None = None, **kw) -> Fix:
        if hazards:
            fix = self.ctx.rewrite(f"{title} (unsafe: {'; '.join(hazards)})", Safety.UNSAFE, **kw)
        else:
            fix = self.ctx.rewrite(title, Safety.SAFE, **kw)
        return self.spanning(fix, span) if span is not None else fix

    def spanning(self, fix: Fix, node: cst.CSTNode) -> Fix:
        """One edit covering all of `node`'s lines, so that fixes of constructs nested inside it
        (which were computed on the old text) overlap with it and wait for the next round."""
        if not fix.edits:
            return fix
        source = self.ctx.source
        starts = [0]
        for line in source.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        pos = self.ctx.position(node)
        a = min(starts[pos.start.line - 1], *(e.start for e in fix.edits))
        b = max(starts[min(pos.end.line, len(starts) - 1)], *(e.end for e in fix.edits))
        new_text = apply_edits(source, list(fix.edits))
        tail = len(source) - b
        return replace(fix, edits=(Edit(a, b, new_text[a : len(new_text) - tail]),))

    # -- conditional expression ------------------------------------------------------------
    def fix_ifexp(self, n: cst.IfExp) -> Fix:
        static = self.static_fix([n.test], n)
        if static is not None:
            return static
        problem = self.guard_problem(n.test, None)
        if problem:
            return self.ctx.manual(problem)
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        where = self.where_chain([(n.test, n.body)], n.orelse, imports, hazards)
        if where is not None:
            new = self.parse_expr(where)
            if n.lpar:
                new = new.with_changes(lpar=n.lpar, rpar=n.rpar)
            return self.finish("replace with `jnp.where`", hazards, replace={n: new}, imports=imports, span=n)
        if self.literal_mismatch([n.body, n.orelse]):
            hazards.append("one side is a Python number: check both sides give the same dtype")
        cond = self.ref("jax.lax.cond", imports)
        pred = self.ctx.module.code_for_node(self.predicate(n.test, imports))
        text = f"{cond}({pred}, lambda: {self.code_of(n.body)}, lambda: {self.code_of(n.orelse)})"
        new = self.parse_expr(text)
        if n.lpar:
            new = new.with_changes(lpar=n.lpar, rpar=n.rpar)
        return self.finish("replace with `lax.cond`", hazards, replace={n: new}, imports=imports, span=n)

    # -- loops ---------------------------------------------------------------------------
    def loop_problem(self, n) -> str | None:
        if n.orelse is not None:
            return "the loop has an `else:` clause"
        for kind in _statement_kinds(n, loop=True):
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
        body_assigned = _ordered_assigned(_stmts(n.body))
        bound = self.bound_before(n)
        carried = [v for v in body_assigned if v in bound and v not in exclude]
        after_reads = self.reads_after(n) | _names_read(n.test if isinstance(n, cst.While) else None)
        for v in body_assigned:
            if v not in bound and v not in exclude and v in after_reads:
                return [], f"`{v}` is first assigned inside the loop and used after it: give it a value before the loop"
        return carried, None

    def reads_after(self, n) -> set[str]:
        block, index = self.enclosing_block(n)
        if block is None:
            return set(self.facts.locals)
        out: set[str] = set()
        for s in block.body[index + 1 :]:
            out |= _names_read(s)
        # the loop may itself be inside an outer loop/branch: be conservative
        if not isinstance(self.info.node, cst.FunctionDef) or block is not self.info.node.body:
            out |= set(self.facts.locals)
        return out

    def carry_hazards(self, n, carried: list[str], hazards: list[str]) -> None:
        literal_init = self.literal_inits(n)
        for v in carried:
            if v in literal_init and not self.dtype_stable(n, v):
                hazards.append(
                    f"`{v}` starts as a Python number and the body changes it with traced values: "
                    "a zero-trip loop returns it with the body's dtype"
                )
        if self.info.differentiated:
            hazards.append("this function is differentiated in this module and the loop is not reverse-differentiable")

    def literal_inits(self, n) -> set[str]:
        block, index = self.enclosing_block(n)
        out: set[str] = set()
        if block is None:
            return out
        for s in block.body[:index]:
            if isinstance(s, cst.SimpleStatementLine):
                for small in s.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                        name = small.targets[0].target.value
                        if _number_literal(small.value):
                            out.add(name)
                        else:
                            out.discard(name)
        return out

    def dtype_stable(self, n, var: str) -> bool:
        """Every update of `var` in the body only combines it with Python literals."""
        ok = True

        class V(cst.CSTVisitor):
            def visit_AugAssign(self, a: cst.AugAssign) -> None:
                nonlocal ok
                if isinstance(a.target, cst.Name) and a.target.value == var and not _number_literal(a.value):
                    ok = False

            def visit_Assign(self, a: cst.Assign) -> None:
                nonlocal ok
                if any(var in assigned_names_in_target(t.target) for t in a.targets):
                    if not _literal_arith_of(a.value, var):
                        ok = False

        walk(n.body, V())
        return ok

    def check_for(self, n: cst.For) -> Finding | None:
        it = n.iter
        if not (isinstance(it, cst.Call) and self.names.qualify(it.func) == "range"):
            return None
        if not self.traced(it, n):
            return None
        self.covered.add(it)
        fix = self.static_fix([a.value for a in it.args], n) or self.fix_for(n)
        return self.finding("JAX303", n, f"`range({self.code_args(it)})` has a traced bound", fix)

    def code_args(self, call: cst.Call) -> str:
        return ", ".join(self.code(a.value) for a in call.args)

    def fix_for(self, n: cst.For) -> Fix:
        it = n.iter
        args = [a.value for a in it.args]
        if any(a.keyword is not None or a.star for a in it.args) or not 1 <= len(args) <= 3:
            return self.ctx.manual("unusual `range(...)` arguments")
        if len(args) == 3 and not (isinstance(args[2], cst.Integer) and args[2].value == "1"):
            return self.ctx.manual("a `range` with a step: use `lax.fori_loop` over the trip count by hand")
        if not isinstance(n.target, cst.Name):
            return self.ctx.manual("the loop target is not a single name")
        problem = self.loop_problem(n)
        if problem:
            return self.ctx.manual(problem)
        loop_var = n.target.value
        if loop_var in self.reads_after(n):
            return self.ctx.manual(f"the loop variable `{loop_var}` is used after the loop")
        carried, problem = self.carried(n, {loop_var})
        if problem:
            return self.ctx.manual(problem)
        if not carried:
            return self.ctx.manual("the loop carries no value: nothing for `lax.fori_loop` to return")
        lo, hi = ("0", self.code_of(args[0])) if len(args) == 1 else (self.code_of(args[0]), self.code_of(args[1]))
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        self.carry_hazards(n, carried, hazards)
        fori = self.ref("jax.lax.fori_loop", imports)
        name = self.unique("loop_body")
        body = _stmts(n.body)
        if len(carried) == 1:
            fdef = self.make_def(name, [loop_var, carried[0]], body, carried[0])
            call = f"{carried[0]} = {fori}({lo}, {hi}, {name}, {carried[0]})\n"
        else:
            carry = self.unique("carry")
            unpack = self.parse_stmt(f"{', '.join(carried)} = {carry}\n")
            fdef = self.make_def(name, [loop_var, carry], [unpack, *body], ", ".join(carried))
            call = f"{', '.join(carried)} = {fori}({lo}, {hi}, {name}, ({', '.join(carried)}))\n"
        stmts = self.layout(n, [fdef, self.parse_stmt(call, at=n)])
        return self.finish(
            "replace with `lax.fori_loop`", hazards, replace={n: cst.FlattenSentinel(stmts)}, imports=imports, span=n
        )

    def fix_while(self, n: cst.While) -> Fix:
        static = self.static_fix([n.test], n)
        if static is not None:
            return static
        problem = self.loop_problem(n) or self.guard_problem(n.test, n)
        if problem:
            return self.ctx.manual(problem)
        carried, problem = self.carried(n, set())
        if problem:
            return self.ctx.manual(problem)
        if not carried:
            return self.ctx.manual("the loop assigns no variable that exists before it: the condition never changes")
        imports: list[ImportRequest] = []
        hazards: list[str] = []
        self.carry_hazards(n, carried, hazards)
        wl = self.ref("jax.lax.while_loop", imports)
        c_name, b_name = self.unique("loop_cond"), self.unique("loop_body")
        pred = self.ctx.module.code_for_node(self.predicate(n.test, imports))
        body = _stmts(n.body)
        ret_stmt = self.parse_stmt(f"return {pred}\n")
        if len(carried) == 1:
            v = carried[0]
            cdef = self.make_def(c_name, [v], [ret_stmt], None)
            bdef = self.make_def(b_name, [v], body, v)
            call = f"{v} = {wl}({c_name}, {b_name}, {v})\n"
        else:
            carry = self.unique("carry")
            unpack = self.parse_stmt(f"{', '.join(carried)} = {carry}\n")
            cdef = self.make_def(c_name, [carry], [unpack, ret_stmt], None)
            bdef = self.make_def(b_name, [carry], [unpack, *body], ", ".join(carried))
            call = f"{', '.join(carried)} = {wl}({c_name}, {b_name}, ({', '.join(carried)}))\n"
        stmts = self.layout(n, [cdef, bdef, self.parse_stmt(call, at=n)])
        return self.finish(
            "replace with `lax.while_loop`", hazards, replace={n: cst.FlattenSentinel(stmts)}, imports=imports, span=n
        )

    # -- static_argnames --------------------------------------------------------------------
    def static_fix(self, exprs: list[cst.BaseExpression], site: cst.CSTNode) -> Fix | None:
        info = self.info
        if not isinstance(info.node, cst.FunctionDef) or len(info.jit_sites) != 1:
            return None
        jsite = info.jit_sites[0]
        if jsite.wrapper != "jax.jit" or not jsite.options_known:
            return None
        params = [p for p in info.params if p in self.facts.entry_traced and any(_mentions(e, p) for e in exprs)]
        if not params:
            return None
        sites = self.jc.call_sites_of(info)
        if not sites:
            return None
        for p in params:
            if p in info.params[len(info.positional) :] and p not in [*info.positional]:
                pass
            for cs in sites:
                bound = self.jc.bind_args(info, cs.call)
                if bound is None:
                    return None
                arg = bound.get(p)
                if arg is None:
                    if p not in info.defaults or not is_hashable_literal(info.defaults[p]):
                        return None
                elif not is_hashable_literal(arg):
                    return None
        # with those parameters static, every condition at the site must become static
        entry = set(self.facts.entry_traced) - set(params)
        again = analyse_function(
            info.node, self.names, entry, self.facts.outer_traced, self.facts.receiver, self.facts.static_fields
        )
        stmt = site if site in again.before else None
        env = again.env_before(stmt) if stmt is not None else frozenset(again.all_traced)
        if any(again.expr_traced(e, env) for e in exprs):
            return None
        imports: list[ImportRequest] = []
        replace = self.static_edit(jsite, params, imports)
        if replace is None:
            return None
        annotated = all(info.annotations.get(p) in ("int", "bool", "str") for p in params)
        names = ", ".join(f"`{p}`" for p in params)
        title = f"make {names} a static argument of `jax.jit`"
        if annotated:
            return self.ctx.rewrite(title, Safety.SAFE, replace=replace, imports=imports)
        return self.ctx.rewrite(
            f"{title} (unsafe: a caller passing an array for {names} would fail; each distinct value compiles once)",
            Safety.UNSAFE,
            replace=replace,
            imports=imports,
        )

    def static_edit(self, jsite, params: list[str], imports) -> dict | None:
        """Replacements that make `params` static at `jsite`, keeping its other options.

        jax infers names from `static_argnums` (and numbers from `static_argnames`) only when
        one of the two is given; with both, each lists exactly what is static. So: a site with
        only `static_argnums` gets the positions added there; otherwise names are added to
        `static_argnames` (and, when both exist, positions to `static_argnums` as well).
        """
        info = self.info
        call = jsite.call
        has_nums = call is not None and _kwarg_arg(call, "static_argnums") is not None
        has_names = call is not None and _kwarg_arg(call, "static_argnames") is not None
        positions = [info.positional.index(p) for p in params if p in info.positional]
        if (has_nums and len(positions) != len(params)):
            return None  # a keyword-only parameter next to static_argnums: leave it to a human
        replace: dict = {}
        if has_nums:
            nums = list(jsite.static_argnums) + [i for i in positions if i not in jsite.static_argnums]
            nums_text = "(" + ", ".join(map(str, nums)) + ("," if len(nums) == 1 else "") + ")"
            replace[_kwarg_arg(call, "static_argnums").value] = self.parse_expr(nums_text)
            if not has_names:
                return replace
        existing = list(jsite.static_argnames)
        new_names = existing + [p for p in params if p not in existing]
        tuple_text = "(" + ", ".join(f'"{p}"' for p in new_names) + ("," if len(new_names) == 1 else "") + ")"
        if call is None:
            # bare decorator `@jax.jit` -> `@partial(jax.jit, static_argnames=(...))`
            deco = jsite.node
            partial = self.ref("functools.partial", imports)
            jit_text = self.ctx.module.code_for_node(deco.decorator)
            return {deco.decorator: self.parse_expr(f"{partial}({jit_text}, static_argnames={tuple_text})")}
        value = self.parse_expr(tuple_text)
        if has_names:
            replace[_kwarg_arg(call, "static_argnames").value] = value
            return replace
        args = list(call.args)
        last = args[-1]
        equal = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        new_arg = cst.Arg(value=value, keyword=cst.Name("static_argnames"), equal=equal, comma=last.comma)
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return {call: call.with_changes(args=[*args, new_arg])}




def _kwarg_arg(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


# -- small syntax helpers -------------------------------------------------------------------
def _blacken(text: str, width: int) -> str:
    try:
        import black
    except ImportError:  # pragma: no cover - black is a dependency
        return text
    try:
        return black.format_str(text, mode=black.Mode(line_length=max(width, 20)))
    except Exception:  # noqa: BLE001 - formatting is cosmetic
        return text


def _strip_parens(e: cst.BaseExpression) -> cst.BaseExpression:
    if getattr(e, "lpar", None):
        return e.with_changes(lpar=[], rpar=[])
    return e


def _stmts(block) -> list[cst.BaseStatement]:
    """The statements of a block; a one-line suite (`if c: a = 1; b = 2`) becomes one statement line."""
    if isinstance(block, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=list(block.body))]
    return list(block.body)


def _if_chain(n: cst.If) -> list[cst.If]:
    chain = [n]
    while isinstance(chain[-1].orelse, cst.If):
        chain.append(chain[-1].orelse)
    return chain


def _final_else(chain: list[cst.If]) -> list[cst.BaseStatement] | None:
    orelse = chain[-1].orelse
    if isinstance(orelse, cst.Else):
        return _stmts(orelse.body)
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
        other = [last.orelse] if isinstance(last.orelse, cst.If) else _stmts(last.orelse.body)
        return _always_returns(_stmts(last.body)) and _always_returns(other)
    return False


def _contains_return(stmts) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Return(self, node) -> None:
            nonlocal found
            found = True

        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

    for s in stmts:
        walk(s, V())
    return found


def _contains_return_in_loop(stmts) -> bool:
    found = False

    class V(cst.CSTVisitor):
        depth = 0

        def visit_For(self, node) -> None:
            self.depth += 1

        def leave_For(self, node) -> None:
            self.depth -= 1

        def visit_While(self, node) -> None:
            self.depth += 1

        def leave_While(self, node) -> None:
            self.depth -= 1

        def visit_Return(self, node) -> None:
            nonlocal found
            if self.depth:
                found = True

        def visit_FunctionDef(self, node) -> bool:
            return False

    for s in stmts:
        walk(s, V())
    return found


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


def _number_literal(e) -> str | None:
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, (cst.Minus, cst.Plus)):
        return _number_literal(e.expression)
    if isinstance(e, cst.Integer):
        return "int"
    if isinstance(e, cst.Float):
        return "float"
    if isinstance(e, cst.Name) and e.value in ("True", "False"):
        return "bool"
    return None


def _literal_arith_of(e, var: str) -> bool:
    """`var`, literals, and arithmetic of them only."""
    if isinstance(e, cst.Name):
        return e.value == var or e.value in ("True", "False")
    if _number_literal(e):
        return True
    if isinstance(e, cst.BinaryOperation):
        return _literal_arith_of(e.left, var) and _literal_arith_of(e.right, var)
    if isinstance(e, cst.UnaryOperation):
        return _literal_arith_of(e.expression, var)
    return False


def _statement_kinds(n: cst.CSTNode, loop: bool = False) -> set[str]:
    """Constructs in `n`'s body that block moving it into a function (not descending into defs)."""
    kinds: set[str] = set()

    class V(cst.CSTVisitor):
        loops = 0

        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_Lambda(self, node) -> bool:
            return False

        def visit_ClassDef(self, node) -> bool:
            return False

        def visit_For(self, node) -> None:
            if node is not n:
                self.loops += 1

        def leave_For(self, node) -> None:
            if node is not n:
                self.loops -= 1

        def visit_While(self, node) -> None:
            if node is not n:
                self.loops += 1

        def leave_While(self, node) -> None:
            if node is not n:
                self.loops -= 1

        def visit_Break(self, node) -> None:
            if not self.loops:
                kinds.add("break")

        def visit_Continue(self, node) -> None:
            if not self.loops:
                kinds.add("continue")

        def visit_Return(self, node) -> None:
            if loop:
                kinds.add("return")

        def visit_Raise(self, node) -> None:
            kinds.add("raise")

        def visit_Yield(self, node) -> None:
            kinds.add("yield")

        def visit_Global(self, node) -> None:
            kinds.add("global")

        def visit_Nonlocal(self, node) -> None:
            kinds.add("global")

        def visit_Del(self, node) -> None:
            kinds.add("del")

        def visit_Expr(self, node: cst.Expr) -> None:
            if not isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)):
                kinds.add("side-effect")

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if _has_subscript_or_attr(node.target):
                kinds.add("side-effect")

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if _has_subscript_or_attr(node.target):
                kinds.add("side-effect")

    body = n.body
    walk(body, V())
    if isinstance(n, cst.If):
        orelse = n.orelse
        while orelse is not None:
            walk(orelse.body, V())
            orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    return kinds


def _has_subscript_or_attr(t) -> bool:
    if isinstance(t, (cst.Subscript, cst.Attribute)):
        return True
    if isinstance(t, (cst.Tuple, cst.List)):
        return any(_has_subscript_or_attr(el.value) for el in t.elements)
    if isinstance(t, cst.StarredElement):
        return _has_subscript_or_attr(t.value)
    return False


def _ordered_assigned(stmts) -> list[str]:
    out: list[str] = []

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            if node.name.value not in out:
                out.append(node.name.value)
            return False

        def visit_Lambda(self, node) -> bool:
            return False

        def _add(self, target) -> None:
            for name in assigned_names_in_target(target):
                if name not in out:
                    out.append(name)

        def visit_AssignTarget(self, node) -> None:
            self._add(node.target)

        def visit_AugAssign(self, node) -> None:
            self._add(node.target)

        def visit_AnnAssign(self, node) -> None:
            if node.value is not None:
                self._add(node.target)

        def visit_For(self, node) -> None:
            self._add(node.target)

        def visit_NamedExpr(self, node) -> None:
            self._add(node.target)

    for s in stmts:
        walk(s, V())
    return out


def assigned_names_in(stmts) -> set[str]:
    return set(_ordered_assigned(stmts))


def assigned_names_in_small(s) -> set[str]:
    if isinstance(s, cst.Assign):
        out = set()
        for t in s.targets:
            out |= assigned_names_in_target(t.target)
        return out
    if isinstance(s, (cst.AugAssign, cst.AnnAssign)):
        return assigned_names_in_target(s.target)
    if isinstance(s, (cst.Import, cst.ImportFrom)):
        return set()
    return set()


def assigned_names_in_target(t) -> set[str]:
    if isinstance(t, cst.Name):
        return {t.value}
    if isinstance(t, (cst.Tuple, cst.List)):
        out = set()
        for el in t.elements:
            out |= assigned_names_in_target(el.value)
        return out
    if isinstance(t, cst.StarredElement):
        return assigned_names_in_target(t.value)
    return set()


def _single_assignment_value(body, var: str):
    """The value assigned to `var` when `body` is exactly one `var = e` / `var op= e` (None: body
    empty or `pass`, meaning `var` keeps its value); False when the body is anything else."""
    stmts = [s for s in body if not (isinstance(s, cst.SimpleStatementLine) and all(isinstance(x, cst.Pass) for x in s.body))]
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
            cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
            cst.DivideAssign: cst.Divide, cst.PowerAssign: cst.Power, cst.FloorDivideAssign: cst.FloorDivide,
            cst.ModuloAssign: cst.Modulo,
        }.get(type(op))
        if binop is None:
            return False
        right = s.value
        if isinstance(right, (cst.BinaryOperation, cst.IfExp, cst.Lambda, cst.BooleanOperation, cst.Comparison)) and not right.lpar:
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


def _names_read(node) -> set[str]:
    if node is None:
        return set()
    out: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            out.add(n.value)

    walk(node, V())
    return out


def _mentions(e: cst.CSTNode, name: str) -> bool:
    return name in _names_read(e)


def _is_inside(a: cst.CSTNode, b: cst.CSTNode, ctx: RuleContext) -> bool:
    p = ctx.parent(a)
    while p is not None:
        if p is b:
            return True
        p = ctx.parent(p)
    return False


# `<Name>Command` for each rule: libcst codemod commands, made on first access
__getattr__ = commands_for(TracedControlFlowRule)
