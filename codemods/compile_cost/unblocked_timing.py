"""JAX501 `unblocked-timing`: a timed region that reads the clock before its JAX work is done."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from codemods.compile_cost.nodes import (
    BLOCKING_CALLS,
    BLOCKING_METHODS,
    BLOCKING_PREFIXES,
    NUMPY_METADATA,
    own_nodes,
)
from jaxfix.analysis import astscan
from jaxfix.analysis.jit_contexts import JIT_NAMES, PARTIAL_NAMES
from jaxfix.analysis.names import ImportMap, dotted_name
from jaxfix.analysis.pytrees import dotted
from jaxfix.analysis.scopes import names_read
from jaxfix.analysis.traced import assigned_names, is_staged_call_name
from jaxfix.analysis.walk import walk
from jaxfix.model import Finding, Fix, ImportRequest, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid

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
    that needs its value: any NumPy function but the metadata ones (`np.asarray`, `np.argmax`,
    `np.testing.*`; not `np.shape`), `float`, `int`, `.item()`, `.tolist()`, `print`,
    `jax.device_get`.

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
    valid = (
        Valid(
            """
            import time

            import jax
            import jax.numpy as jnp

            f_jit = jax.jit(lambda x: x @ x)
            x = jnp.ones((1000, 1000))

            t0 = time.perf_counter()
            out = f_jit(x).block_until_ready()
            print(time.perf_counter() - t0)
            """
        ),
        Valid(  # near miss: the loss is read back as a Python float before the clock
            """
            import time

            import jax
            import jax.numpy as jnp

            loss_fn = jax.jit(lambda w: jnp.sum(w**2))
            w = jnp.ones(1000)

            start = time.time()
            loss = float(loss_fn(w))
            elapsed = time.time() - start
            """
        ),
        Valid(  # an evaluation loop: NumPy reads every batch's logits back before the clock
            """
            import time

            import jax
            import jax.numpy as jnp
            import numpy as np

            infer = jax.jit(lambda x: x @ jnp.ones((4, 3)))
            batches = [np.ones((2, 4)) for _ in range(3)]

            t0 = time.time()
            hits = []
            for batch in batches:
                logits = infer(batch)
                hits.append(np.argmax(logits, axis=-1))
            per_second = len(batches) / (time.time() - t0)
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import time

            import jax
            import jax.numpy as jnp

            f_jit = jax.jit(lambda x: x @ x)
            x = jnp.ones((1000, 1000))

            t0 = time.perf_counter()
            out = f_jit(x)
            print(time.perf_counter() - t0)
            """,
            fixed="""
            import time

            import jax
            import jax.numpy as jnp

            f_jit = jax.jit(lambda x: x @ x)
            x = jnp.ones((1000, 1000))

            t0 = time.perf_counter()
            out = f_jit(x)
            jax.block_until_ready(out)
            print(time.perf_counter() - t0)
            """,
        ),
        Invalid(
            """
            import timeit

            import jax.numpy as jnp

            x = jnp.ones(1000)
            print(timeit.timeit(lambda: jnp.sin(x), number=100))
            """,
            fixed="""
            import timeit

            import jax
            import jax.numpy as jnp

            x = jnp.ones(1000)
            print(timeit.timeit(lambda: jax.block_until_ready(jnp.sin(x)), number=100))
            """,
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A jax import and either a `timeit` call of a lambda, or a timed region of some block
        (`_region_screen`) with a call in it that may be JAX work."""
        idents = set(_CLOCK_IDENTS)
        jax = uses_timeit = False
        starts: list[ast.Call] = []
        for node in astscan.statements(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                jax = jax or astscan.imports_jax(node)
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
        if uses_timeit:  # `timeit.timeit(lambda: ...)`
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.args[0] if node.args else None, ast.Lambda):
                    return True
                if isinstance(node, ast.Call) and any(isinstance(k.value, ast.Lambda) for k in node.keywords):
                    return True
        for call in starts:  # `t0 = time.perf_counter()`: a timed region can start here
            func = call.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) in idents:
                return _region_screen(tree)
        return False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        return iter(_TimingChecker(self, ctx).run())


def _region_screen(tree: ast.Module) -> bool:
    """`_TimingChecker.run`'s regions on the stdlib AST: whether some block (a module, def, class
    or compound statement body) has a start `t0 = <clock>()` followed, before the next statement
    of the block with a clock read, by a call that may be JAX work (`_TimingChecker.is_jax_call`,
    over-approximated). A clock read is recognised exactly as the checker does (the same import
    map, the same own-nodes walk), so each start's region here holds the checker's region (the
    stdlib AST splits `a; b` into two statements: a start there is a start here, a region here
    may be longer); every start is tried, as a start the checker passes over may be one here."""
    names = ImportMap.from_ast(tree)

    def is_clock(call: ast.Call) -> bool:
        return not call.args and not call.keywords and names.qualify_ast(call.func) in CLOCKS

    def jit_expr(e: ast.AST) -> bool:
        if names.qualify_ast(e) in JIT_NAMES:
            return True
        if isinstance(e, ast.Call):
            q = names.qualify_ast(e.func)
            given = [*e.args, *(k.value for k in e.keywords)]
            return q in JIT_NAMES or (q in PARTIAL_NAMES and any(names.qualify_ast(a) in JIT_NAMES for a in given))
        return False

    jitted: set[str | None] = set()
    for node in astscan.nodes(tree):
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            if any(jit_expr(d) for d in node.decorator_list):
                jitted.add(node.name)
        elif kind is ast.Assign and isinstance(node.value, ast.Call) and jit_expr(node.value.func):
            jitted.update(dotted(t) for t in node.targets)

    def may_be_jax_call(call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Call) or dotted(func) in jitted:
            return True
        q = names.qualify_ast(func)
        return q not in _NOT_COMPUTE and is_staged_call_name(q) and not q.startswith(("jax.experimental.", "jax._src."))

    for block in _blocks(tree):
        starts = [
            i
            for i, stmt in enumerate(block)
            if type(stmt) is ast.Assign
            and len(stmt.targets) == 1
            and type(stmt.targets[0]) is ast.Name
            and type(stmt.value) is ast.Call
            and is_clock(stmt.value)
        ]
        if not starts:
            continue  # (the clock reads of a block are looked for only where a region may start)
        clocks = [any(is_clock(c) for c in _own_calls(stmt)) for stmt in block]
        for i in starts:
            end = next((j for j in range(i + 1, len(block)) if clocks[j]), None)
            if end is None:
                break  # as the checker: no later start of the block has an end either
            if any(may_be_jax_call(n) for s in block[i + 1 : end] for n in astscan.nodes(s) if type(n) is ast.Call):
                return True
    return False


def _blocks(tree: ast.Module) -> Iterator[list[ast.stmt]]:
    """The module's body and every statement list nested in it (the checker's `IndentedBlock`s)."""
    yield tree.body
    for stmt in astscan.statements(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if type(block) is list and block and isinstance(block[0], ast.stmt):
                yield block
        for part in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())):
            yield part.body


_AST_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _own_calls(root: ast.AST) -> Iterator[ast.Call]:
    """`own_nodes(root, cst.Call)` on the stdlib AST: calls under `root`, not inside nested defs,
    classes or lambdas (`root` itself is entered)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node is not root and isinstance(node, _AST_SCOPES):
            continue
        if type(node) is ast.Call:
            yield node
        stack.extend(astscan.children(node))


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
        return [c for c in own_nodes(node, cst.Call) if self.is_jax_call(c)]

    def is_blocking(self, call: cst.Call, results: set[str]) -> bool:
        func = call.func
        q = self.names.qualify(func) if not isinstance(func, cst.Call) else None
        if isinstance(func, cst.Attribute) and func.attr.value == "block_until_ready":
            return True
        if q == "jax.block_until_ready":
            return True
        waits = q in BLOCKING_CALLS or ((q or "").startswith(BLOCKING_PREFIXES) and q not in NUMPY_METADATA)
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
        return next((c for c in own_nodes(stmt, cst.Call) if self.is_clock(c)), None)

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
            for small in own_nodes(stmt, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                if small.value is not None and self.jax_calls(small.value):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for t in targets:
                        results |= names_read(t)
        for stmt in region[last:]:
            if any(self.is_blocking(c, results) for c in own_nodes(stmt, cst.Call)):
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
        smalls = [s for s in own_nodes(stmt, cst.BaseSmallStatement) if self.jax_calls(s)]
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
            calls += own_nodes(body, cst.Call)
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


# `UnblockedTimingCommand`: the rule as a libcst codemod, made on first access
__getattr__ = commands_for(UnblockedTimingRule)
