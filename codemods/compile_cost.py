"""Compile and run cost: code that works but measures, compiles or embeds far more than it should.

Three rules (JAX5xx):

- JAX501 `unblocked-timing`: a `time.perf_counter()` region around JAX work that reads the clock
  before the result is ready (async dispatch: it times the dispatch only).
- JAX502 `unrolled-python-loop-in-jit`: a Python `for` over a large static `range` inside traced
  code, unrolled into that many copies of its body (compile time grows with the trip count).
- JAX503 `large-captured-constant`: a jitted function reading a large module-level array, which
  is embedded in the compiled program as a constant.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

import libcst as cst

from codemods._command import commands_for
from jaxfix.analysis.jit_contexts import JIT_NAMES, PARTIAL_NAMES, FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.names import dotted_name
from jaxfix.analysis.scopes import names_read
from jaxfix.analysis.trace_screen import MAY_NAME_A_TRANSFORM, trace_screen
from jaxfix.analysis.traced import assigned_names, is_staged_call_name, param_names
from jaxfix.analysis.walk import statements, walk
from jaxfix.model import Finding, Fix, ImportRequest, Safety
from jaxfix.rulebase import Code, Example, Option, Rule, RuleContext

# -- shared helpers -------------------------------------------------------------------------------

CLOCKS = frozenset(
    {
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.time",
        "time.time_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "timeit.default_timer",
    }
)
_CLOCK_IDENTS = frozenset(q.rsplit(".", 1)[-1] for q in CLOCKS)
TIMEIT_CALLS = {"timeit.timeit": "stmt", "timeit.repeat": "stmt", "timeit.Timer": "stmt"}
# jax calls that do not start device work worth waiting for (or that wait themselves).
_NOT_COMPUTE = frozenset(
    {
        "jax.random.PRNGKey",
        "jax.random.key",
        "jax.random.key_data",
        "jax.random.wrap_key_data",
        "jax.numpy.shape",
        "jax.numpy.ndim",
        "jax.numpy.size",
    }
)
# Calls that wait for their argument's value (it is copied to the host or printed).
BLOCKING_CALLS = frozenset(
    {
        "jax.block_until_ready",
        "jax.device_get",
        "numpy.asarray",
        "numpy.array",
        "numpy.asanyarray",
        "float",
        "int",
        "bool",
        "complex",
        "print",
        "repr",
        "str",
        "list",
        "tuple",
    }
)
BLOCKING_METHODS = frozenset({"block_until_ready", "item", "tolist", "__array__"})
_BLOCKING_PREFIXES = ("numpy.testing.",)


def _imports_jax(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] in ("jax", "equinox", "flax") for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return bool(node.module) and node.module.split(".")[0] in ("jax", "equinox", "flax")
    return False


def _walk_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every statement of the module at any depth (a fifth of the nodes `ast.walk` visits)."""
    stack: list = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        for name in ("handlers", "cases", "finalbody", "orelse", "body"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                stack.extend(reversed(block))


def _walk_no_scopes(node: cst.CSTNode, kind) -> list:
    """Nodes of `kind` in `node`, not descending into nested defs, lambdas or classes."""
    out = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is not node and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(n, kind):
                out.append(n)
            return True

    walk(node, V())
    return out


def _statements(block) -> list[cst.BaseStatement]:
    if isinstance(block, cst.SimpleStatementSuite):
        return []
    return list(block.body)


# -- JAX501 ------------------------------------------------------------------------------------------


class UnblockedTimingRule(Rule):
    """
    ## What it does
    Finds a timed region, `t0 = time.perf_counter()` (also `time.time()`, `time.monotonic()`,
    their `_ns` forms and `timeit.default_timer()`) up to the next statement of the same block
    that reads the clock again, which runs JAX work and reads the clock before that work is done.
    JAX work is a call of a function jitted in this module (`@jax.jit`, `f_jit = jax.jit(f)`,
    `jax.jit(f)(x)`, also `jax.grad`/`jax.vmap` applied in place) or of `jax.numpy`, `jax.lax`,
    `jax.random`, `jax.nn` and `jax.scipy` functions. Also `timeit.timeit`/`timeit.repeat`/
    `timeit.Timer` given a `lambda` that calls JAX work.

    The region counts as blocked when, at or after its last JAX call, it calls
    `.block_until_ready()` or `jax.block_until_ready(...)`, or passes a JAX result to something
    that needs its value: `np.asarray`, `np.array`, `float`, `int`, `.item()`, `.tolist()`,
    `print`, `jax.device_get`, `np.testing.*`.

    ## Why is this bad?
    JAX dispatches work asynchronously: a jitted call returns as soon as the computation is
    queued, before it has run. A clock read right after it measures the dispatch only. Measured
    here (CPU, 1000x1000 matmul): 0.13 ms reported without blocking, 30.6 ms with
    `jax.block_until_ready`.

    ## Known problems
    Only regions whose start and end clock reads are in the same block are seen. A helper that
    blocks inside (a method, a function of another module) is not looked into, so a region that
    blocks that way is reported. Blocking on some other JAX value of the region than the last one
    is taken as blocking.

    ## Example
    ```python
    t0 = time.perf_counter()
    out = f_jit(x)
    print(time.perf_counter() - t0)
    ```

    ## Use instead
    ```python
    t0 = time.perf_counter()
    out = f_jit(x)
    jax.block_until_ready(out)
    print(time.perf_counter() - t0)
    ```

    ## Fix safety
    Safe: `jax.block_until_ready` returns its argument unchanged and only waits. The fix blocks
    on the names the region's last JAX call assigns, just before the closing clock read; where
    that assignment is inside a loop or branch and the name may not exist before it, it wraps
    the call in place (`out = jax.block_until_ready(f(x))`), which waits on every trip; a call
    whose result is discarded is wrapped in place. A `timeit` lambda's body is wrapped.

    ## References
    - https://docs.jax.dev/en/latest/async_dispatch.html
    - https://docs.jax.dev/en/latest/_autosummary/jax.block_until_ready.html
    """

    name = "unblocked-timing"
    codes = (Code("JAX501", "unblocked-timing", "timed region reads the clock before JAX work is done", "always"),)
    prefilter = ("perf_counter", "time.time", "monotonic", "default_timer", "timeit", "import time", "time_ns")
    examples = (
        Example(
            "t0 = time.perf_counter()\nout = f_jit(x)\nprint(time.perf_counter() - t0)\n",
            "t0 = time.perf_counter()\nout = f_jit(x)\njax.block_until_ready(out)\nprint(time.perf_counter() - t0)\n",
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A jax import and a call of a clock or `timeit` function."""
        idents = set(_CLOCK_IDENTS)
        jax = uses_timeit = False
        starts: list[ast.Call] = []
        for node in _walk_statements(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                jax = jax or _imports_jax(node)
                if isinstance(node, ast.ImportFrom) and node.module in ("time", "timeit"):
                    idents.update(a.asname for a in node.names if a.asname)  # `perf_counter as clock`
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                uses_timeit = uses_timeit or "timeit" in modules
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
                and not node.value.args
            ):
                starts.append(node.value)
        if not jax:
            return False
        for call in starts:  # `t0 = time.perf_counter()`: a timed region can start here
            func = call.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) in idents:
                return True
        if uses_timeit:  # `timeit.timeit(lambda: ...)`
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.args[0] if node.args else None, ast.Lambda):
                    return True
                if isinstance(node, ast.Call) and any(isinstance(k.value, ast.Lambda) for k in node.keywords):
                    return True
        return False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        return iter(_TimingChecker(self, ctx).run())


class _TimingChecker:
    def __init__(self, rule: UnblockedTimingRule, ctx: RuleContext) -> None:
        self.rule = rule
        self.ctx = ctx
        self.names = ctx.names
        self._scan()

    # which names are jitted functions --------------------------------------------------------------
    def _is_jit_expr(self, e: cst.BaseExpression) -> bool:
        """`jax.jit`, `partial(jax.jit, ...)`, `jax.jit(...)` (options only)."""
        if self.names.qualify(e) in JIT_NAMES:
            return True
        if isinstance(e, cst.Call):
            q = self.names.qualify(e.func)
            if q in JIT_NAMES:
                return True
            if q in PARTIAL_NAMES and e.args and self.names.qualify(e.args[0].value) in JIT_NAMES:
                return True
        return False

    def _scan(self) -> None:
        """One pass over the module: jitted names, the blocks that start a timed region, `timeit` calls."""
        checker = self
        self.jitted: set[str] = set()
        self.region_blocks: list[list[cst.BaseStatement]] = []
        self.timeit_calls: list[cst.Call] = []
        if any(checker.start_clock(s) for s in self.ctx.module.body):
            self.region_blocks.append(list(self.ctx.module.body))

        class V(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                if any(checker._is_jit_expr(d.decorator) for d in node.decorators):
                    checker.jitted.add(node.name.value)

            def visit_Assign(self, node: cst.Assign) -> None:
                value = node.value
                if isinstance(value, cst.Call) and checker._is_jit_expr(value.func):
                    for t in node.targets:
                        name = dotted_name(t.target)
                        if name is not None:
                            checker.jitted.add(name)

            def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
                if any(checker.start_clock(s) for s in node.body):
                    checker.region_blocks.append(list(node.body))

            def visit_Call(self, node: cst.Call) -> None:
                if checker.names.qualify(node.func) in TIMEIT_CALLS:
                    checker.timeit_calls.append(node)

        walk(self.ctx.module, V())

    def is_jax_call(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Call):  # `jax.jit(f)(x)`, `jax.grad(f)(x)`, `jax.vmap(f)(x)`
            q = self.names.qualify(func.func) or ""
            return self._is_jit_expr(func.func) or q.startswith("jax.") or q.startswith("equinox.filter_")
        name = dotted_name(func)
        if name is not None and name in self.jitted:
            return True
        q = self.names.qualify(func)
        if q is None or q in _NOT_COMPUTE:
            return False
        return is_staged_call_name(q) and not q.startswith(("jax.experimental.", "jax._src."))

    def jax_calls(self, node: cst.CSTNode) -> list[cst.Call]:
        return [c for c in _walk_no_scopes(node, cst.Call) if self.is_jax_call(c)]

    def is_blocking(self, call: cst.Call, results: set[str]) -> bool:
        func = call.func
        q = self.names.qualify(func) if not isinstance(func, cst.Call) else None
        if isinstance(func, cst.Attribute) and func.attr.value == "block_until_ready":
            return True
        if q == "jax.block_until_ready":
            return True
        waits = q in BLOCKING_CALLS or (q or "").startswith(_BLOCKING_PREFIXES)
        if isinstance(func, cst.Attribute) and func.attr.value in BLOCKING_METHODS:
            return bool(names_read(func.value) & results) or bool(self.jax_calls(func.value))
        if waits:
            return any(bool(names_read(a.value) & results) or bool(self.jax_calls(a.value)) for a in call.args)
        return False

    def is_clock(self, call: cst.Call) -> bool:
        return self.names.qualify(call.func) in CLOCKS and not call.args

    # the walk ------------------------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        out: list[Finding] = []
        for stmts in self.region_blocks:
            i = 0
            while i < len(stmts):
                start = self.start_clock(stmts[i])
                if start is None:
                    i += 1
                    continue
                end = next((j for j in range(i + 1, len(stmts)) if self.clock_in(stmts[j])), None)
                if end is None:
                    break
                if any(start in names_read(s) for s in stmts[end:]):
                    found = self.check_region(stmts, i, end)
                    if found is not None:
                        out.append(found)
                i = end
        out.extend(self.check_timeit())
        return out

    def start_clock(self, stmt: cst.BaseStatement) -> str | None:
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return None
        small = stmt.body[0]
        if (
            isinstance(small, cst.Assign)
            and len(small.targets) == 1
            and isinstance(small.targets[0].target, cst.Name)
            and isinstance(small.value, cst.Call)
            and self.is_clock(small.value)
        ):
            return small.targets[0].target.value
        return None

    def clock_in(self, stmt: cst.BaseStatement) -> cst.Call | None:
        return next((c for c in _walk_no_scopes(stmt, cst.Call) if self.is_clock(c)), None)

    def check_region(self, stmts, i: int, end: int) -> Finding | None:
        region = stmts[i + 1 : end]
        last = None
        for k, stmt in enumerate(region):
            if self.jax_calls(stmt):
                last = k
        if last is None:
            return None
        results: set[str] = set()
        for stmt in region:
            for small in _walk_no_scopes(stmt, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                if small.value is not None and self.jax_calls(small.value):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for t in targets:
                        results |= names_read(t)
        for stmt in region[last:]:
            if any(self.is_blocking(c, results) for c in _walk_no_scopes(stmt, cst.Call)):
                return None
        # the end statement itself may block before its clock read (`print(out, time.time() - t0)` does not)
        fix = self.fix(stmts, i, end, region[last])
        clock = self.clock_in(stmts[end])
        call = self.jax_calls(region[last])[-1]
        what = self.ctx.module.code_for_node(call.func).strip()
        return self.ctx.finding(
            self.rule,
            "JAX501",
            clock,
            f"the clock is read before the result of `{what}(...)` is ready (JAX dispatches asynchronously, "
            f"so this times the dispatch only); {fix.title}",
            fix,
        )

    def last_simple(self, stmt: cst.BaseStatement) -> cst.BaseSmallStatement | None:
        """The last small statement in `stmt` (at any depth, not in nested scopes) with a JAX call."""
        smalls = [s for s in _walk_no_scopes(stmt, cst.BaseSmallStatement) if self.jax_calls(s)]
        return smalls[-1] if smalls else None

    def fix(self, stmts, i: int, end: int, last_stmt: cst.BaseStatement) -> Fix:
        imports: list[ImportRequest] = []
        block, reqs = self.names.reference("jax.block_until_ready")
        imports.extend(reqs)
        small = self.last_simple(last_stmt)
        if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and small.value is not None:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            target = targets[-1]
            bound = self.bound_before(stmts, stmts.index(last_stmt), small)
            names = names_read(target)
            inside = last_stmt is not small and not isinstance(last_stmt, cst.SimpleStatementLine)
            if not isinstance(small, cst.AugAssign) and (not inside or names <= bound):
                text = self.ctx.module.code_for_node(target).strip()
                if isinstance(target, cst.Tuple) and not target.lpar:
                    text = f"({text})"
                new = cst.parse_statement(f"{block}({text})\n", config=self.ctx.module.config_for_parsing)
                return self.ctx.rewrite(
                    f"insert `{block}({text})` before reading the clock",
                    Safety.SAFE,
                    insert_before={stmts[end]: [new]},
                    imports=imports,
                )
            if isinstance(small, cst.Assign):
                value = small.value
                wrapped = cst.Call(func=cst.parse_expression(block), args=[cst.Arg(value.with_changes(lpar=[], rpar=[]))])
                return self.ctx.rewrite(
                    f"wrap the call in `{block}(...)`",
                    Safety.SAFE,
                    replace={value: wrapped},
                    imports=imports,
                )
        # a discarded result (or an augmented assignment): wait on the last JAX call in place
        call = self.jax_calls(small if small is not None else last_stmt)[-1]
        wrapped = cst.Call(func=cst.parse_expression(block), args=[cst.Arg(call)])
        return self.ctx.rewrite(
            f"wrap the call in `{block}(...)`", Safety.SAFE, replace={call: wrapped}, imports=imports
        )

    def bound_before(self, stmts, index: int, small) -> set[str]:
        """Names surely bound when the loop/branch at `stmts[index]` starts: assigned earlier in the
        block, parameters and module names, and names the assignment itself reads (`s = step(s)`)."""
        bound: set[str] = set()
        for s in stmts[:index]:
            bound |= assigned_names(cst.IndentedBlock(body=[s]))
        bound |= names_read(small.value)
        return bound

    def check_timeit(self) -> list[Finding]:
        out = []
        for call in self.timeit_calls:
            q = self.names.qualify(call.func)
            stmt = next((a.value for a in call.args if a.keyword is None), None)
            kw = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "stmt"), None)
            stmt = kw if kw is not None else stmt
            if not isinstance(stmt, cst.Lambda):
                continue
            body = stmt.body
            calls = [body] if isinstance(body, cst.Call) else []
            calls += _walk_no_scopes(body, cst.Call)
            if not any(self.is_jax_call(c) for c in calls) or any(self.is_blocking(c, set()) for c in calls):
                continue
            imports: list[ImportRequest] = []
            block, reqs = self.names.reference("jax.block_until_ready")
            imports.extend(reqs)
            new_body = cst.Call(func=cst.parse_expression(block), args=[cst.Arg(body.with_changes(lpar=[], rpar=[]))])
            fix = self.ctx.rewrite(
                f"wrap the lambda's result in `{block}(...)`", Safety.SAFE, replace={body: new_body}, imports=imports
            )
            out.append(
                self.ctx.finding(
                    self.rule,
                    "JAX501",
                    call,
                    f"`{q.rsplit('.', 1)[-1]}` times a lambda that returns before its JAX work is done "
                    f"(asynchronous dispatch); {fix.title}",
                    fix,
                )
            )
        return out


def _walk_all(node: cst.CSTNode, kind) -> list:
    out = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if isinstance(n, kind):
                out.append(n)
            return True

    walk(node, V())
    return out




# -- shape arithmetic shared by JAX502 and JAX503 -------------------------------------------------------


def module_int_constants(module: cst.Module) -> dict[str, int]:
    """Module-level names bound exactly once, at top level, to an integer expression of literals and
    earlier such names (`N = 1024`, `SIZE = N * N`)."""
    counts: dict[str, int] = {}
    for name in _module_assigned_everywhere(module):
        counts[name] = counts.get(name, 0) + 1
    out: dict[str, int] = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                name = small.targets[0].target.value
                value = int_value(small.value, out)
                if value is not None and counts.get(name) == 1:
                    out[name] = value
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                value = int_value(small.value, out)
                if value is not None and counts.get(small.target.value) == 1:
                    out[small.target.value] = value
    return out


def _module_assigned_everywhere(module: cst.Module) -> list[str]:
    """Every binding of a name at module scope or through `global` (a name bound twice is not a constant)."""
    out: list[str] = []
    globals_: set[str] = set()
    for g in statements(module):  # `global` is a statement: no need to walk expressions
        if isinstance(g, cst.Global):
            globals_.update(n.name.value for n in g.names)
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out.append(stmt.name.value)
            continue
        out.extend(sorted(assigned_names(cst.IndentedBlock(body=[stmt]))) if not isinstance(stmt, cst.SimpleStatementLine) else [])
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    for t in small.targets:
                        out.extend(_target_names(t.target))
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    out.extend(_target_names(small.target))
                    if isinstance(small, cst.AugAssign):
                        out.extend(_target_names(small.target))
                elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        node = alias.asname.name if alias.asname is not None else alias.name
                        name = dotted_name(node)
                        if name:
                            out.append(name.split(".")[0])
    out.extend(sorted(globals_))  # a `global` statement means some function may rebind it
    return out


def _target_names(t: cst.BaseExpression) -> list[str]:
    if isinstance(t, cst.Name):
        return [t.value]
    if isinstance(t, (cst.Tuple, cst.List)):
        return [n for el in t.elements for n in _target_names(el.value)]
    if isinstance(t, cst.StarredElement):
        return _target_names(t.value)
    return []


def int_value(e: cst.BaseExpression, consts: dict[str, int]) -> int | None:
    """The value of an integer expression of literals and known constants, else None."""
    if isinstance(e, cst.Integer):
        return int(e.evaluated_value)
    if isinstance(e, cst.Name):
        return consts.get(e.value)
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, (cst.Minus, cst.Plus)):
        v = int_value(e.expression, consts)
        return None if v is None else (-v if isinstance(e.operator, cst.Minus) else v)
    if isinstance(e, cst.BinaryOperation):
        a, b = int_value(e.left, consts), int_value(e.right, consts)
        if a is None or b is None:
            return None
        op = e.operator
        if isinstance(op, cst.Add):
            return a + b
        if isinstance(op, cst.Subtract):
            return a - b
        if isinstance(op, cst.Multiply):
            return a * b
        if isinstance(op, cst.FloorDivide) and b:
            return a // b
        if isinstance(op, cst.Power) and 0 <= b <= 64:
            return a**b
        if isinstance(op, cst.LeftShift) and 0 <= b <= 64:
            return a << b
        return None
    return None


def _shape_size(e: cst.BaseExpression, consts: dict[str, int]) -> int | None:
    """Number of elements of a static shape: an int or a tuple/list of ints."""
    if isinstance(e, (cst.Tuple, cst.List)):
        size = 1
        for el in e.elements:
            if isinstance(el, cst.StarredElement):
                return None
            v = int_value(el.value, consts)
            if v is None or v < 0:
                return None
            size *= v
        return size
    v = int_value(e, consts)
    return v if v is not None and v >= 0 else None


# creator -> (positional index of the shape, keyword of the shape)
_SHAPE_FIRST = {
    f"{mod}.{fn}": (0, "shape")
    for mod in ("jax.numpy", "numpy")
    for fn in ("ones", "zeros", "empty", "full")
}
_SHAPE_ARG = {
    **_SHAPE_FIRST,
    "jax.random.normal": (1, "shape"),
    "jax.random.uniform": (1, "shape"),
    "jax.random.truncated_normal": (3, "shape"),
    "jax.random.bernoulli": (2, "shape"),
    "numpy.random.normal": (2, "size"),
    "numpy.random.uniform": (2, "size"),
    "numpy.random.randint": (2, "size"),
    "numpy.random.standard_normal": (0, "size"),
    "numpy.random.random": (0, "size"),
    "numpy.random.random_sample": (0, "size"),
    "numpy.random.rand": (-1, ""),
    "numpy.random.randn": (-1, ""),
}
_GENERATOR_METHODS = frozenset({"randn", "rand", "normal", "uniform", "standard_normal", "random", "random_sample"})
_WRAPPERS = frozenset(
    {"jax.numpy.asarray", "jax.numpy.array", "numpy.asarray", "numpy.array", "jax.device_put", "numpy.ascontiguousarray"}
)
_SIZE_METHODS = frozenset({"astype", "reshape", "copy", "block_until_ready", "T", "transpose", "ravel", "flatten"})


def array_size(e: cst.BaseExpression, names, consts: dict[str, int]) -> tuple[int, str] | None:
    """(elements, creator) for an array built with a static size: `jnp.ones((1000, 1000))`,
    `np.random.randn(512, 512)`, `jnp.asarray(np.random.randn(...))`, `jnp.eye(N)`, `.astype(...)`."""
    if isinstance(e, cst.Attribute) and e.attr.value == "T":
        return array_size(e.value, names, consts)
    if isinstance(e, cst.BinaryOperation):  # `jnp.asarray(...) / N`, `scale * jnp.ones(...)`
        sides = [r for r in (array_size(e.left, names, consts), array_size(e.right, names, consts)) if r is not None]
        return max(sides) if sides else None
    if isinstance(e, cst.UnaryOperation):
        return array_size(e.expression, names, consts)
    if not isinstance(e, cst.Call):
        return None
    func = e.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SIZE_METHODS and isinstance(func.value, (cst.Call, cst.Attribute)):
        return array_size(func.value, names, consts)  # `jnp.ones(...).astype(...)`, `np.random.randn(...).T.copy()`
    q = names.qualify(func)
    pos = [a.value for a in e.args if a.keyword is None and not a.star]
    kws = {a.keyword.value: a.value for a in e.args if a.keyword is not None}
    if (q is None or q not in _SHAPE_ARG) and isinstance(func, cst.Attribute) and func.attr.value in _GENERATOR_METHODS:
        head = func.value
        while isinstance(head, (cst.Attribute, cst.Call)):
            head = head.value if isinstance(head, cst.Attribute) else head.func
        if not (isinstance(head, cst.Name) and head.value in names.bindings and q is not None):
            # `rng.normal(size=...)`, `np.random.RandomState(0).randn(...)`, `default_rng().random((n, m))`
            q = f"numpy.random.{func.attr.value}"
    if q is None:
        return None
    if q in _WRAPPERS:
        return array_size(pos[0], names, consts) if pos else None
    if q in _SHAPE_ARG:
        index, key = _SHAPE_ARG[q]
        if index == -1:
            size = 1
            for p in pos:
                v = int_value(p, consts)
                if v is None:
                    return None
                size *= v
            return (size, q) if pos else None
        shape = kws.get(key) if key in kws else (pos[index] if index < len(pos) else None)
        if shape is None:
            return None
        size = _shape_size(shape, consts)
        return None if size is None else (size, q)
    short = q.rsplit(".", 1)[-1]
    if q.startswith(("jax.numpy.", "numpy.")) and q.count(".") == q.startswith("jax.") + 1:
        if short in ("eye", "identity") and pos:
            n = int_value(pos[0], consts)
            m = int_value(pos[1], consts) if short == "eye" and len(pos) > 1 else n
            if n is None or m is None:
                return None
            return n * m, q
        if short == "arange" and pos:
            vals = [int_value(p, consts) for p in pos[:3]]
            if any(v is None for v in vals) or (len(vals) == 3 and vals[2] == 0):
                return None
            return len(range(*vals)), q
        if short == "linspace" and len(pos) >= 2:
            num = kws.get("num", pos[2] if len(pos) > 2 else None)
            n = 50 if num is None else int_value(num, consts)
            return None if n is None else (n, q)
    return None


# -- JAX503 ------------------------------------------------------------------------------------------

_CREATOR_IDENTS = frozenset(
    {
        *(q.rsplit(".", 1)[-1] for q in _SHAPE_ARG),
        *_GENERATOR_METHODS,
        "eye",
        "identity",
        "arange",
        "linspace",
    }
)
# names that start a trace (jit, lax bodies, transforms): a file without any has nothing traced
_TRACING_IDENTS = frozenset(
    {"jit", "filter_jit", "pjit", "pmap", "vmap", "filter_vmap", "scan", "fori_loop", "while_loop", "cond",
     "switch", "map", "associative_scan", "checkpoint", "remat", "grad", "value_and_grad"}
)
# Wrappers under which the traced function's arrays are plain jit arguments (not mapped, not sharded).
_ARG_SAFE_JITS = frozenset({"jax.jit", "equinox.filter_jit"})
_LAYOUT_OPTIONS = frozenset({"in_shardings", "out_shardings", "in_axes", "donate_argnums", "donate_argnames"})


def _is_numpy_array(e: cst.BaseExpression, names, consts: dict[str, int]) -> bool:
    """The sized array `e` builds is a NumPy array (not converted with `jnp.asarray`/`jax.device_put`)."""
    if isinstance(e, cst.Attribute):
        return _is_numpy_array(e.value, names, consts)
    if isinstance(e, cst.UnaryOperation):
        return _is_numpy_array(e.expression, names, consts)
    if isinstance(e, cst.BinaryOperation):
        sides = [s for s in (e.left, e.right) if array_size(s, names, consts) is not None]
        return bool(sides) and all(_is_numpy_array(s, names, consts) for s in sides)
    if not isinstance(e, cst.Call):
        return False
    func = e.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SIZE_METHODS and isinstance(func.value, (cst.Call, cst.Attribute)):
        return _is_numpy_array(func.value, names, consts)
    q = names.qualify(func)
    if q is None or (q not in _SHAPE_ARG and isinstance(func, cst.Attribute) and func.attr.value in _GENERATOR_METHODS):
        head = func
        while isinstance(head, (cst.Attribute, cst.Call)):
            head = head.value if isinstance(head, cst.Attribute) else head.func
        return not (isinstance(head, cst.Name) and names.qualify(head) not in (None, head.value) and names.qualify(head).startswith("jax"))
    return q.startswith("numpy.")


def _free_reads(info: FuncInfo) -> list[cst.Name]:
    """Names read in the function's own body (not nested scopes, attribute or keyword names)."""
    out: list[cst.Name] = []
    node = info.node

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is not node and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(n, cst.Attribute):
                walk(n.value, self)
                return False
            if isinstance(n, cst.Arg):
                walk(n.value, self)
                return False
            if isinstance(n, cst.Name):
                out.append(n)
            return True

    if isinstance(node, cst.Lambda):
        walk(node.body, V())
    else:
        walk(node.body, V())
    return out


def _scope_binds(info: FuncInfo | None, name: str) -> bool:
    """`name` is a parameter or local of `info` or of a function enclosing it."""
    while info is not None:
        if name in param_names(info.node.params) or name in assigned_names(info.node):
            return True
        info = info.parent
    return False


class LargeConstantRule(Rule):
    """
    ## What it does
    Finds a function that runs under `jax.jit` (or as a `lax` loop body, or called from jitted
    code) and reads a module-level array built with a static size of at least
    `min-constant-elements` elements: `W = jnp.ones((1000, 1000))`, `np.random.randn(1024, 1024)`,
    `jnp.asarray(np.random.randn(...))`, `jax.random.normal(key, (N, N))`, `jnp.eye(N)`,
    `jnp.arange(N)`, with sizes made of literals and module-level integer constants.

    ## Why is this bad?
    A global read inside a traced function is a constant of the trace: its whole value is
    embedded in the compiled program. Measured here (CPU, jax 0.10.2, `x * W` with float32 `W`):

    | elements | HLO text captured | compile captured | compile as argument |
    | --- | --- | --- | --- |
    | 100,000 | 0.8 MB | 62 ms | 54 ms |
    | 1,000,000 | 8 MB | 125 ms | 55 ms |
    | 4,000,000 | 32 MB | 318 ms | 42 ms |

    The program also keeps its own copy of the array in device memory, every recompile pays
    again, and the value is frozen at trace time: rebinding the global later changes nothing.

    ## Known problems
    Only module-level names bound once, to a creation call with a static size, are recognised;
    arrays loaded from files or computed by other functions are not. A parameter's name is the
    global's name.

    ## Example
    ```python
    W = jnp.ones((1000, 1000))

    @jax.jit
    def predict(x):
        return x @ W

    def run(x):
        return predict(x)
    ```

    ## Use instead
    ```python
    W = jnp.ones((1000, 1000))

    @jax.jit
    def predict(x, W):
        return x @ W

    def run(x):
        return predict(x, W)
    ```

    ## Options
    `min-constant-elements` (default 1,000,000): the smallest array reported. At a million float32
    elements the compile time doubles and the HLO text is 8 MB; below 100,000 the cost is small.

    ## Fix safety
    Unsafe. The fix adds the array as the last parameter of the jitted function (same name, so the
    body is unchanged) and passes it at every call site in this module. Results can differ in the
    last bits (XLA no longer folds the constant into the computation), callers in other modules
    must be changed the same way, and a NumPy array is copied to the device on every call (build it
    once with `jnp.asarray`). Manual where the reader is not the jitted function itself (a helper,
    a method, a lambda), the function has `*args`, keyword-only or defaulted parameters, it is
    jitted with `pmap` or with sharding/donation/axis options, it has no call site here, or its
    name is used other than by calling it.

    ## References
    - https://docs.jax.dev/en/latest/faq.html (closures and constants)
    - https://docs.jax.dev/en/latest/internals/constants.html
    """

    name = "large-captured-constant"
    codes = (
        Code("JAX503", "large-captured-constant", "jitted function reads a large module-level array (embedded as a constant)", "sometimes"),
    )
    prefilter = ("ones", "zeros", "empty", "full", "rand", "normal", "uniform", "eye", "identity", "arange", "linspace")
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    options = (
        Option("min-constant-elements", 1_000_000, "The smallest module-level array (in elements) that is reported."),
    )
    examples = (
        Example(
            "W = jnp.ones((1000, 1000))\n\n\n@jax.jit\ndef predict(x):\n    return x @ W\n\n\ndef run(x):\n    return predict(x)\n",
            "W = jnp.ones((1000, 1000))\n\n\n@jax.jit\ndef predict(x, W):\n    return x @ W\n\n\ndef run(x):\n    return predict(x, W)\n",
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A module-level assignment to one name of an expression calling an array creator
        (`ones`, `randn`, `normal`, ...), a function that reads that name, and a transform
        (`jit`, a `lax` loop...) mentioned somewhere."""
        candidates: set[str] = set()
        for stmt in tree.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, (ast.Call, ast.Attribute, ast.BinOp, ast.UnaryOp))
            ):
                for sub in ast.walk(stmt.value):
                    if isinstance(sub, ast.Call):
                        func = sub.func
                        ident = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
                        if ident in _CREATOR_IDENTS:
                            candidates.add(stmt.targets[0].id)
                            break
        if not candidates:
            return False
        read = transform = False
        for node in ast.walk(tree):
            if not read and isinstance(node, (ast.FunctionDef, ast.Lambda)):
                read = any(isinstance(sub, ast.Name) and sub.id in candidates for sub in ast.walk(node))
            elif isinstance(node, ast.Attribute) and node.attr in _TRACING_IDENTS:
                transform = True
            elif isinstance(node, ast.Name) and node.id in _TRACING_IDENTS:
                transform = True
            if read and transform:
                return True
        return False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        threshold = ctx.option(self, "min-constant-elements")
        large = self.large_constants(ctx, threshold)
        if not large:
            return
        jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
        for info in list(jc.traced_functions()):
            if info.reasons and all(r.startswith("vectorised") for r in info.reasons):
                continue  # eager vmap dispatches op by op: nothing is compiled around the constant
            seen: set[str] = set()
            for name_node in _free_reads(info):
                const = name_node.value
                if const not in large or const in seen or _scope_binds(info, const):
                    continue
                seen.add(const)
                size, creator, is_numpy = large[const]
                fix = self.fix(ctx, jc, info, const, is_numpy)
                where = "jitted" if info.jit_sites else "traced"
                message = (
                    f"`{const}` ({size:,} elements, `{creator.replace('jax.numpy.', 'jnp.').replace('numpy.', 'np.')}`) "
                    f"is a module-level array read in {where} `{info.name}`: it is embedded in the compiled "
                    f"program as a constant"
                )
                if fix.safety is not Safety.MANUAL:
                    message += f"; {fix.title}"
                yield ctx.finding(self, "JAX503", name_node, message, fix)

    def large_constants(self, ctx: RuleContext, threshold: int) -> dict[str, tuple[int, str, bool]]:
        module = ctx.module
        consts = ctx.fact(module_int_constants, lambda c: module_int_constants(c.module))
        counts: dict[str, int] = {}
        for name in _module_assigned_everywhere(module):
            counts[name] = counts.get(name, 0) + 1
        out: dict[str, tuple[int, str, bool]] = {}
        for stmt in module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
                    continue
                name = small.targets[0].target.value
                if counts.get(name) != 1:
                    continue
                found = array_size(small.value, ctx.names, consts)
                if found is None or found[0] < threshold:
                    continue
                out[name] = (found[0], found[1], _is_numpy_array(small.value, ctx.names, consts))
        return out

    def fix(self, ctx: RuleContext, jc: JitContexts, info: FuncInfo, const: str, is_numpy: bool) -> Fix:
        node = info.node
        if not isinstance(node, cst.FunctionDef) or info.parent is not None or info.class_name is not None:
            if isinstance(node, cst.Lambda):
                return ctx.manual(f"the traced function is a lambda: make it a `def` that takes `{const}` as an argument")
            kind = "a method" if info.class_name else "a nested function"
            return ctx.manual(f"`{info.name}` is {kind}: pass `{const}` to the jitted function as an argument and on to it")
        if not info.jit_sites:
            return ctx.manual(
                f"`{info.name}` is not jitted itself but runs inside traced code ({', '.join(info.reasons)}): "
                f"pass `{const}` as an argument of the jitted function and on to `{info.name}`"
            )
        for site in info.jit_sites:
            if site.wrapper not in _ARG_SAFE_JITS:
                return ctx.manual(f"`{info.name}` is wrapped by `{site.wrapper}`: an added argument would be mapped or sharded")
            if site.call is not None and any(a.keyword is not None and a.keyword.value in _LAYOUT_OPTIONS for a in site.call.args):
                return ctx.manual(f"`{info.name}` is jitted with sharding/donation options that count its arguments")
            if not site.options_known or any(i < 0 for i in site.static_argnums):
                return ctx.manual(f"`{info.name}`'s `static_argnums` count from the end or are not literal: an added parameter shifts them")
        params = node.params
        if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg or params.posonly_params:
            return ctx.manual(f"`{info.name}` has `*args`, keyword-only or positional-only parameters: add `{const}` by hand")
        if any(p.default is not None for p in params.params):
            return ctx.manual(f"`{info.name}` has parameters with defaults: add `{const}` by hand")
        sites = jc.call_sites_of(info)
        if not sites:
            return ctx.manual(f"`{info.name}` is not called in this module: its callers must pass `{const}`")
        calls = [s.call for s in sites]
        for site in sites:
            if jc.bind_args(info, site.call) is None:
                return ctx.manual(f"a call of `{info.name}` passes `*args`/`**kwargs`")
            if _scope_binds(site.caller, const):
                return ctx.manual(f"`{const}` means something else where `{info.name}` is called")
        if any(other is not call and _contains(call, other) for call in calls for other in calls):
            return ctx.manual(f"nested calls of `{info.name}`")
        if self.other_references(ctx, info, calls):
            return ctx.manual(f"`{info.name}` is used other than by calling it: its callers cannot all be changed")
        new_param = cst.Param(name=cst.Name(const))
        plist = list(params.params)
        if plist and plist[-1].comma is not cst.MaybeSentinel.DEFAULT:
            new_param = new_param.with_changes(comma=plist[-1].comma)
        replace_map: dict[cst.CSTNode, cst.CSTNode] = {params: params.with_changes(params=[*plist, new_param])}
        for call in calls:
            args = list(call.args)
            keyworded = any(a.keyword is not None for a in args)
            arg = cst.Arg(
                value=cst.Name(const),
                keyword=cst.Name(const) if keyworded else None,
                equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
                if keyworded
                else cst.MaybeSentinel.DEFAULT,
            )
            if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:
                arg = arg.with_changes(comma=args[-1].comma)
            replace_map[call] = call.with_changes(args=[*args, arg])
        hazards = [
            "results can differ in the last bits",
            f"callers in other modules must pass `{const}` too",
        ]
        if is_numpy:
            hazards.append(f"`{const}` is a NumPy array, copied to the device on every call: build it with `jnp.asarray`")
        title = f"pass `{const}` as an argument of `{info.name}` (unsafe: {'; '.join(hazards)})"
        return ctx.rewrite(title, Safety.UNSAFE, replace=replace_map)

    def other_references(self, ctx: RuleContext, info: FuncInfo, calls: list[cst.Call]) -> bool:
        """The function's name (or a jitted alias) appears other than as a callee of `calls` or as the
        argument of its own `jax.jit(...)`."""
        names = {info.name} | {s.alias for s in info.jit_sites if s.alias}
        allowed: set[int] = set()
        for call in calls:
            allowed.add(id(call.func))
        for site in info.jit_sites:
            if isinstance(site.node, cst.Call) and site.node.args:
                allowed.add(id(site.node.args[0].value))
        allowed.add(id(info.node.name))
        nodes = ctx.fact(_name_nodes, lambda c: _name_nodes(c.module))
        count = 0
        for n in nodes[cst.Name]:
            if n.value in names and id(n) not in allowed:
                count += 1
        # the alias's own assignment target (`f_jit = jax.jit(f)`)
        aliases = sum(1 for s in info.jit_sites if s.alias)
        return count > aliases + _attr_and_keyword_names(nodes, names)


def _name_nodes(module: cst.Module) -> dict[type, list]:
    """Every Name, Attribute, Arg and Param of the module, from one walk (the fixes of all the
    rule's findings in a file ask about them)."""
    out: dict[type, list] = {cst.Name: [], cst.Attribute: [], cst.Arg: [], cst.Param: []}

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            found = out.get(type(n))
            if found is not None:
                found.append(n)
            return True

    walk(module, V())
    return out


def _attr_and_keyword_names(nodes: dict[type, list], names: set[str]) -> int:
    """Name nodes spelled like `names` that are attribute names or keywords, not references."""
    count = 0
    for n in nodes[cst.Attribute]:
        if n.attr.value in names:
            count += 1
    for n in nodes[cst.Arg]:
        if n.keyword is not None and n.keyword.value in names:
            count += 1
    for n in nodes[cst.Param]:
        if n.name.value in names:
            count += 1
    return count


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    return any(n is inner for n in _walk_all(outer, type(inner)))




# -- JAX502 ------------------------------------------------------------------------------------------


# Loops of this many trips or fewer are never reported, whatever `max-unrolled-trips` says: short
# loops are unrolled on purpose (it is what `lax.fori_loop(..., unroll=n)` does), and the bound
# lets `could_match` reject files whose only static loops are short (most of them).
MIN_UNROLLED_TRIPS = 16


def _ast_int_constants(tree: ast.Module) -> dict[str, int]:
    """Module-level names bound once, at top level, to an integer expression (stdlib ast)."""
    counts: dict[str, int] = {}
    values: dict[str, ast.AST] = {}
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            if isinstance(t, ast.Name):
                counts[t.id] = counts.get(t.id, 0) + 1
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1) or (
                    isinstance(stmt, ast.AnnAssign) and stmt.value is not None
                ):
                    values[t.id] = stmt.value
    out: dict[str, int] = {}
    for name, value in values.items():
        if counts[name] == 1:
            v = _ast_int(value, out)
            if v is not None:
                out[name] = v
    return out


def _ast_int(e: ast.AST, consts: dict[str, int]) -> int | None:
    if isinstance(e, ast.Constant):
        return e.value if isinstance(e.value, int) and not isinstance(e.value, bool) else None
    if isinstance(e, ast.Name):
        return consts.get(e.id)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        v = _ast_int(e.operand, consts)
        return None if v is None else (-v if isinstance(e.op, ast.USub) else v)
    if isinstance(e, ast.BinOp):
        a, b = _ast_int(e.left, consts), _ast_int(e.right, consts)
        if a is None or b is None:
            return None
        if isinstance(e.op, ast.Add):
            return a + b
        if isinstance(e.op, ast.Sub):
            return a - b
        if isinstance(e.op, ast.Mult):
            return a * b
        if isinstance(e.op, ast.FloorDiv) and b:
            return a // b
        if isinstance(e.op, ast.Pow) and 0 <= b <= 64:
            return a**b
        if isinstance(e.op, ast.LShift) and 0 <= b <= 64:
            return a << b
    return None


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
    not reported. A loop nested inside another loop or branch is usually manual: the carry analysis
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
        def loop_body(_, x):
            x = x + 0.01 * jnp.sin(x)
            return x

        x = jax.lax.fori_loop(0, 1000, loop_body, x)
        return x
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
        Code("JAX502", "unrolled-python-loop-in-jit", "Python `for` over a large static `range` in traced code", "sometimes"),
    )
    prefilter = ("range(",)
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    options = (
        Option("max-unrolled-trips", 100, "Loops with more trips than this are reported (at least 16)."),
    )
    examples = (
        Example(
            "@jax.jit\ndef simulate(x):\n    for _ in range(1000):\n        x = x + 0.01 * jnp.sin(x)\n    return x\n",
            "@jax.jit\ndef simulate(x):\n    def loop_body(_, x):\n        x = x + 0.01 * jnp.sin(x)\n        return x\n\n"
            "    x = jax.lax.fori_loop(0, 1000, loop_body, x)\n    return x\n",
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A jax import and a `for` over `range(...)` whose arguments are integer literals, module-level
        names and arithmetic of those, in the own body of a function that may be traced (the trace
        screen), nested in enough such loops to make the copies."""
        consts = _ast_int_constants(tree)
        jax = any(_imports_jax(node) for node in _walk_statements(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))
        if not jax:
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
                vals = [_ast_int(a, consts) for a in node.iter.args]
                if None not in vals and not (len(vals) == 3 and vals[2] == 0):
                    return len(range(*vals))
            return 1

        # copies of the innermost body of nested static loops: the product of their trips
        traced_loops: set[int] | None = None  # the loops of traced functions' own bodies, on first need
        stack: list[tuple[ast.AST, int]] = [(node, 1) for node in tree.body]
        while stack:
            node, outer = stack.pop()
            copies = outer * trips(node)
            if copies > MIN_UNROLLED_TRIPS and isinstance(node, ast.For):
                if traced_loops is None:
                    traced_loops = {
                        id(n) for fn in trace_screen(tree).traced_functions() for n in fn.own if type(n) is ast.For
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
            facts = info.facts
            own: dict[cst.For, int] = {}
            for loop in _walk_no_scopes(info.node, cst.For):
                trips = self.trips(ctx, info, loop, consts)
                if trips is not None and not facts.traced(loop.iter, loop):
                    own[loop] = trips
            nested = self.nesting(ctx, info, own)
            for loop, trips in own.items():
                inner = self.inner_copies(loop, own, nested)
                if trips > threshold:
                    what = f"this `for` loop runs {trips:,} times"
                    copies = trips
                elif self.static_parent(ctx, info, loop, own) is None and trips > 1 and inner <= threshold < trips * inner:
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
                yield ctx.finding(self, "JAX502", loop, message, fix)

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
        for n in _walk_all(it, cst.Name):
            if n is not it.func and _scope_binds(info, n.value):
                return None  # a local or parameter spelled like a module constant
        vals = [int_value(a.value, consts) for a in it.args]
        if any(v is None for v in vals) or (len(vals) == 3 and vals[2] == 0):
            return None
        return len(range(*vals))

    def does_jax_work(self, ctx: RuleContext, info: FuncInfo, loop: cst.For) -> bool:
        """The body stages operations: a `jax.numpy`/`lax`/... call or a value computed from traced ones."""
        facts = info.facts
        for call in _walk_no_scopes(loop.body, cst.Call):
            if is_staged_call_name(ctx.names.qualify(call.func)):
                return True
        for small in _walk_no_scopes(loop.body, (cst.Assign, cst.AugAssign, cst.Expr)):
            if facts.traced(small.value, small):
                return True
        return False

    def fix(self, ctx: RuleContext, jc: JitContexts, info: FuncInfo, loop: cst.For) -> Fix:
        # The JAX303 rewrite (traced bounds) is the same loop-to-fori_loop transformation.
        from jaxfix.analysis.loop_rewrite import LoopRewriter

        if not isinstance(loop.target, cst.Name):
            return ctx.manual("the loop target is not a single name")
        loops = LoopRewriter.in_function(ctx, jc, info)
        for call in _walk_no_scopes(loop.body, cst.Call):
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
        if fix.safety is Safety.MANUAL or not fix.edits:
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
        for occ in _walk_all(loop.body, cst.Name):
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
                if isinstance(sub, cst.Subscript) and facts.traced(sub.value, stmt) and not facts.is_sequence(sub.value):
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


# `<Name>Command` for each rule: libcst codemod commands, made on first access
__getattr__ = commands_for(UnblockedTimingRule, LargeConstantRule, UnrolledLoopRule)
