"""JAX502 `unrolled-python-loop-in-jit`: a Python `for` over a large static `range` in traced code,
unrolled into one copy of its body per trip."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

import libcst as cst

from codemods._command import commands_for
from codemods.compile_cost.nodes import all_nodes, binds_locally, own_nodes
from codemods.compile_cost.preview import flag
from jaxfix.analysis import astscan
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.pytrees import module_statements
from jaxfix.analysis.shapes import (
    ast_module_int_constants,
    int_value,
    module_int_constants,
)
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.staging import runs_eagerly
from jaxfix.analysis.trace_screen import (
    MAY_NAME_A_TRANSFORM,
    NO_ENTRIES,
    ScreenEntries,
    trace_screen,
)
from jaxfix.model import Finding, Fix, Safety
from jaxfix.rewriting.loops import LoopRewriter
from jaxfix.rulebase import Code, Invalid, Option, Rule, RuleContext, Valid

# Loops of this many trips or fewer are never reported, whatever `max-unrolled-trips` says: short
# loops are unrolled on purpose (it is what `lax.fori_loop(..., unroll=n)` does), and the bound
# lets `could_match` reject files whose only static loops are short (most of them).
MIN_UNROLLED_TRIPS = 16


class UnrolledLoopRule(Rule):
    """
    ## What it does
    Finds a Python `for i in range(...)` inside code that runs under a trace (`jax.jit`, a `lax`
    loop body, code called from those) whose bounds are static (integer literals and module-level
    integer constants) and whose trip count is above `max-unrolled-trips`, when the body does JAX
    work. A `range` with a traced bound is JAX303's business and is never reported here.

    ## Why is this bad?
    Tracing runs the Python loop: the compiled program holds one copy of the body per trip, so
    trace and compile time grow linearly with the trip count. Measured here (CPU, jax 0.10.2, a
    two-operation body on a 64-vector, trace+lower / XLA compile):

    | trips | unrolled | `lax.fori_loop` |
    | --- | --- | --- |
    | 30 | 54 / 151 ms | 17 / 55 ms |
    | 100 | 81 / 441 ms | 20 / 59 ms |
    | 300 | 429 / 1,522 ms | 31 / 62 ms |
    | 1,000 | 1,070 / 4,308 ms | 14 / 47 ms |

    A nest of short static loops counts the product of its trips: `range(20)` around `range(8)`
    is 160 copies of the inner body, reported at the outer loop (rolling it leaves 8 copies). A
    nest whose inner loop is itself above the threshold is reported at that inner loop only.

    ## Known problems
    Bounds that are static arguments (`static_argnames`) or parameter defaults are not known and
    not reported. A function traced only by `jax.vmap` called outside traced code (`vmap(f)(x)`
    at top level) is not reported: eager `vmap` dispatches each operation as it goes and compiles
    no program (`jaxfix.analysis.staging`). A loop nested inside another loop or branch is usually manual: the carry analysis
    shared with JAX303 takes every local as read after such a loop, including its index.

    ## Example
    ```python
    @jax.jit
    def simulate(x):
        for _ in range(1000):
            x = x + 0.01 * jnp.sin(x)
        return x
    ```

    ## Use instead
    ```python
    @jax.jit
    def simulate(x):
        return jax.lax.fori_loop(0, 1000, lambda _, x: x + 0.01 * jnp.sin(x), x)
    ```

    ## Options
    `max-unrolled-trips` (default 100): loops with more trips than this are reported. At 100 trips
    of a small body, unrolling already compiles about 7 times slower than `lax.fori_loop`. Values
    below 16 count as 16: short loops are unrolled on purpose (`lax.fori_loop(..., unroll=n)`
    does the same), and are never reported.

    ## Fix safety
    Unsafe. The loop becomes `lax.fori_loop` with the variables the body assigns and that exist
    before the loop as the carry (the rewrite of JAX303, shared with it). Floating-point results
    can differ in the last bits (XLA optimises a rolled loop differently), and every carried value
    must keep its shape and dtype from trip to trip (a growing array or a dtype change fails at
    trace time). With static bounds `fori_loop` lowers to `scan`, so it stays reverse-differentiable.
    Manual, with the reason, where the carry cannot be analysed: `break`/`continue`/`return`, call
    statements (`lst.append(...)`) or item/attribute assignment in the body, a value first assigned
    in the loop and used after it, the loop index used after the loop or used as a Python number
    in the body (in a shape, a slice, a condition, a Python list index: under `fori_loop` it is a
    traced integer), or a carried variable that holds a Python value rather than an array.

    ## References
    - https://docs.jax.dev/en/latest/_autosummary/jax.lax.fori_loop.html
    - https://docs.jax.dev/en/latest/control-flow.html
    """

    name = "unrolled-python-loop-in-jit"
    codes = (
        Code(
            "JAX502",
            "unrolled-python-loop-in-jit",
            "Python `for` over a large static `range` in traced code",
            "sometimes",
        ),
    )
    prefilter = ("range(",)
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    follows_calls = True  # also in a file whose functions traced code elsewhere calls
    options = (Option("max-unrolled-trips", 100, "Loops with more trips than this are reported (at least 16)."),)
    valid = (
        Valid(  # near miss: the long loop runs eagerly and calls a jitted step, compiled once
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def step(x):
                return x + 0.01 * jnp.sin(x)


            def simulate(x):
                for _ in range(1000):
                    x = step(x)
                return x
            """
        ),
        Valid(  # a short static loop is unrolled on purpose
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def polynomial(x):
                acc = jnp.zeros_like(x)
                for k in range(4):
                    acc = acc * x + k
                return acc
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def simulate(x):
                for _ in range(1000):
                    x = x + 0.01 * jnp.sin(x)
                return x
            """,
            fixed="""
            import jax
            import jax.numpy as jnp


            @jax.jit
            def simulate(x):
                def loop_body(_, x):
                    x = x + 0.01 * jnp.sin(x)
                    return x

                x = jax.lax.fori_loop(0, 1000, loop_body, x)
                return x
            """,
        ),
        Invalid(  # no automatic fix: the body appends to a list
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def rollout(x):
                states = []
                for _ in range(200):
                    x = jnp.tanh(x)
                    states.append(x)
                return jnp.stack(states)
            """
        ),
    )

    def could_match(self, tree: ast.Module, entries: ScreenEntries = NO_ENTRIES) -> bool:
        """A jax import and a `for` over `range(...)` whose arguments are integer literals, module-level
        names and arithmetic of those, in the own body of a function that may be traced (the trace
        screen), nested in enough such loops to make the copies. With `entries` (functions traced
        code of other modules calls), no jax import is needed: they are traced without one."""
        consts = ast_module_int_constants(tree)
        jax = any(
            astscan.imports_jax(node)
            for node in astscan.statements(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
        )
        if not jax and not entries:
            return False

        def trips(node: ast.AST) -> int:
            """Static trips of a `for` over `range` (1 for any other statement: it adds no copies)."""
            if (
                isinstance(node, ast.For)
                and isinstance(node.iter, ast.Call)
                and isinstance(node.iter.func, ast.Name)
                and node.iter.func.id == "range"
                and 1 <= len(node.iter.args) <= 3
                and not node.iter.keywords
            ):
                vals = [int_value(a, consts) for a in node.iter.args]
                if None not in vals and not (len(vals) == 3 and vals[2] == 0):
                    return len(range(*vals))
            return 1

        # Copies are a product of static trips of nested loops: at most the product of all the
        # module's (its statements, listed once for every screen), which rarely passes the bound.
        bound = 1
        for node in module_statements(tree):
            if type(node) is ast.For:
                bound *= max(trips(node), 1)  # an empty range multiplies nothing it is not around
                if bound > MIN_UNROLLED_TRIPS:
                    break
        else:
            return False
        # copies of the innermost body of nested static loops: the product of their trips
        traced_loops: set[int] | None = None  # the loops of traced functions' own bodies, on first need
        stack: list[tuple[ast.AST, int]] = [(node, 1) for node in tree.body]
        while stack:
            node, outer = stack.pop()
            copies = outer * trips(node)
            if copies > MIN_UNROLLED_TRIPS and isinstance(node, ast.For):
                if traced_loops is None:
                    traced_loops = {
                        id(n)
                        for fn in trace_screen(tree, entries=entries).traced_functions()
                        for n in fn.own
                        if type(n) is ast.For
                    }
                if id(node) in traced_loops:
                    return True
            for name in ("handlers", "cases", "finalbody", "orelse", "body"):
                block = getattr(node, name, None)
                if isinstance(block, list):
                    stack.extend((child, copies if name == "body" else outer) for child in block)
        return False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        threshold = max(ctx.option(self, "max-unrolled-trips"), MIN_UNROLLED_TRIPS)
        jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
        consts = ctx.fact(module_int_constants, lambda c: module_int_constants(c.module))
        for info in list(jc.traced_functions()):
            if not isinstance(info.node, cst.FunctionDef):
                continue
            if runs_eagerly(jc, info, ctx.names.qualify, ctx.parent):
                continue  # traced by an eager `vmap` only: nothing is compiled, nothing unrolled
            facts = info.facts
            own: dict[cst.For, int] = {}
            for loop in own_nodes(info.node, cst.For):
                trips = self.trips(ctx, info, loop, consts)
                if trips is not None and not facts.traced(loop.iter, loop):
                    own[loop] = trips
            nested = self.nesting(ctx, info, own)
            for loop, trips in own.items():
                inner = self.inner_copies(loop, own, nested)
                if trips > threshold:
                    what = f"this `for` loop runs {trips:,} times"
                    copies = trips
                elif (
                    self.static_parent(ctx, info, loop, own) is None
                    and trips > 1
                    and inner <= threshold < trips * inner
                ):
                    # a nest of short loops: rolling the outer one leaves `inner` copies
                    what = f"this `for` loop and the loops nested in it run {trips * inner:,} times"
                    copies = trips * inner
                else:
                    continue
                if not self.does_jax_work(ctx, info, loop):
                    continue
                fix = self.fix(ctx, jc, info, loop)
                if copies == trips:
                    message = f"{what} under a trace and is unrolled: the compiled program holds {copies:,} copies of its body"
                else:
                    message = (
                        f"{what} under a trace and are unrolled: the compiled program holds {copies:,} copies of the "
                        "innermost body"
                    )
                if fix.safety is not Safety.MANUAL:
                    message += f"; {fix.title}"
                yield flag(ctx.finding(self, "JAX502", loop, message, fix), "unrolled")

    @staticmethod
    def static_parent(ctx: RuleContext, info: FuncInfo, loop: cst.For, own: dict) -> cst.For | None:
        """The nearest enclosing static-range loop of `loop` in the same function."""
        p = ctx.parent(loop)
        while p is not None and p is not info.node:
            if isinstance(p, cst.For) and p in own:
                return p
            p = ctx.parent(p)
        return None

    def nesting(self, ctx: RuleContext, info: FuncInfo, own: dict) -> dict:
        children: dict[cst.For, list[cst.For]] = {}
        for loop in own:
            parent = self.static_parent(ctx, info, loop, own)
            if parent is not None:
                children.setdefault(parent, []).append(loop)
        return children

    def inner_copies(self, loop: cst.For, own: dict, nested: dict) -> int:
        """Copies of the innermost body per trip of `loop`: the largest product of nested trips."""
        return max((own[c] * self.inner_copies(c, own, nested) for c in nested.get(loop, ())), default=1)

    def trips(self, ctx: RuleContext, info: FuncInfo, loop: cst.For, consts: dict[str, int]) -> int | None:
        it = loop.iter
        if not (isinstance(it, cst.Call) and ctx.names.qualify(it.func) == "range"):
            return None
        if not 1 <= len(it.args) <= 3 or any(a.keyword is not None or a.star for a in it.args):
            return None
        for n in all_nodes(it, cst.Name):
            if n is not it.func and binds_locally(info, n.value):
                return None  # a local or parameter spelled like a module constant
        vals = [int_value(a.value, consts) for a in it.args]
        if any(v is None for v in vals) or (len(vals) == 3 and vals[2] == 0):
            return None
        return len(range(*vals))

    def does_jax_work(self, ctx: RuleContext, info: FuncInfo, loop: cst.For) -> bool:
        """The body stages operations: a `jax.numpy`/`lax`/... call or a value computed from traced ones."""
        facts = info.facts
        for call in own_nodes(loop.body, cst.Call):
            if is_staged_call_name(ctx.names.qualify(call.func)):
                return True
        for small in own_nodes(loop.body, (cst.Assign, cst.AugAssign, cst.Expr)):
            if facts.traced(small.value, small):
                return True
        return False

    def fix(self, ctx: RuleContext, jc: JitContexts, info: FuncInfo, loop: cst.For) -> Fix:
        # The JAX303 rewrite (traced bounds) is the same loop-to-fori_loop transformation.
        if not isinstance(loop.target, cst.Name):
            return ctx.manual("the loop target is not a single name")
        loops = LoopRewriter.in_function(ctx, jc, info)
        for call in own_nodes(loop.body, cst.Call):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in ("append", "extend"):
                return ctx.manual(
                    "the body appends to a list: build the stacked result with `lax.scan` (its `ys`) instead"
                )
        problem = loops.problem(loop) or self.index_problem(ctx, info, loop)
        if problem:
            return ctx.manual(problem)
        carried, problem = loops.carried(loop, {loop.target.value})
        if problem:
            return ctx.manual(problem)
        env = info.facts.env_before(loop)
        static = [v for v in carried if v not in env]
        if static:
            return ctx.manual(
                f"`{static[0]}` is a Python value the loop updates: in `lax.fori_loop` it would become a traced "
                "array; carry it by hand or keep the loop"
            )
        fix = loops.fori_loop(loop)
        if not fix.applicable:
            return fix
        theirs = []
        if "(unsafe: " in fix.title:
            theirs = [h for h in fix.title.split("(unsafe: ", 1)[1][:-1].split("; ") if "differentiable" not in h]
        hazards = [
            "floating-point results can differ in the last bits",
            "every carried value must keep its shape and dtype",
            *theirs,
        ]
        return replace(fix, safety=Safety.UNSAFE, title=f"replace with `lax.fori_loop` (unsafe: {'; '.join(hazards)})")

    def index_problem(self, ctx: RuleContext, info: FuncInfo, loop: cst.For) -> str | None:
        """Where the body uses the loop index as a Python int (it becomes a traced integer)."""
        var = loop.target.value
        facts = info.facts
        for occ in all_nodes(loop.body, cst.Name):
            if occ.value != var:
                continue
            parent = ctx.parent(occ)
            if isinstance(parent, cst.Attribute) and parent.attr is occ:
                continue
            if isinstance(parent, cst.Arg) and parent.keyword is occ:
                continue
            if isinstance(parent, (cst.AssignTarget, cst.Param)):
                return f"the loop index `{var}` is rebound in the body"
            cur: cst.CSTNode = occ
            while isinstance(parent, cst.BinaryOperation) or (
                isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, (cst.Minus, cst.Plus))
            ):
                cur, parent = parent, ctx.parent(parent)
            stmt = self.statement_of(ctx, facts, occ)
            if cur is not occ and facts.traced(cur, stmt):
                continue  # combined with an array: already an array
            if isinstance(parent, cst.Index):
                element = ctx.parent(parent)
                sub = ctx.parent(element)
                if (
                    isinstance(sub, cst.Subscript)
                    and facts.traced(sub.value, stmt)
                    and not facts.is_sequence(sub.value)
                ):
                    continue
            if isinstance(parent, cst.Arg) and parent.keyword is None:
                call = ctx.parent(parent)
                q = ctx.names.qualify(call.func) if isinstance(call, cst.Call) else None
                if is_staged_call_name(q):
                    positions = _SHAPE_POSITIONS.get(q.rsplit(".", 1)[-1], ()) if q.startswith("jax.numpy.") else ()
                    index = [a for a in call.args if a.keyword is None].index(parent)
                    if index not in positions:
                        continue
            if isinstance(parent, cst.Element):
                seq = ctx.parent(parent)
                arg = ctx.parent(seq)
                call = ctx.parent(arg)
                q = ctx.names.qualify(call.func) if isinstance(call, cst.Call) else None
                if q is not None and q.startswith("jax.lax.dynamic_"):
                    continue
            code = ctx.module.code_for_node(parent if isinstance(parent, cst.BaseExpression) else cur).strip()
            code = code if len(code) <= 40 else code[:37] + "..."
            return (
                f"the loop index `{var}` is used as a Python number (`{code}`): under `lax.fori_loop` it is a "
                "traced integer"
            )
        return None

    @staticmethod
    def statement_of(ctx: RuleContext, facts, node: cst.CSTNode) -> cst.CSTNode | None:
        p = node
        while p is not None and p not in facts.before:
            p = ctx.parent(p)
        return p


# positional shape arguments of jax.numpy creators (an index there must stay a Python int)
_SHAPE_POSITIONS = {
    "zeros": (0,),
    "ones": (0,),
    "empty": (0,),
    "full": (0,),
    "arange": (0, 1, 2),
    "eye": (0, 1),
    "identity": (0,),
    "linspace": (2,),
    "reshape": (1,),
    "broadcast_to": (1,),
    "tri": (0, 1),
    "zeros_like": (),
    "roll": (1,),
    "take": (),
}


# `UnrolledLoopCommand`: the rule as a libcst codemod, made on first access
__getattr__ = commands_for(UnrolledLoopRule)
