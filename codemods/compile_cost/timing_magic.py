"""JAX504 `unblocked-timing-magic` and JAX505 `timed-first-call`: IPython's `%timeit`/`%time`
timing a JAX call that is not waited for, or a `%time` whose run is the call's first (its compile).

The magics are read as jupytext writes them in a `.py` notebook, commented out (`# %timeit f(x)`,
`# %%time` as a cell's first line, cells starting at `# %%` lines): the form in which
`jaxfix.engine.notebook` hands a notebook's cells to the rules.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from codemods._command import commands_for
from codemods.compile_cost.nodes import (
    BLOCKING_CALLS,
    BLOCKING_METHODS,
    BLOCKING_PREFIXES,
    NUMPY_METADATA,
)
from jaxfix.analysis.jit_contexts import JIT_NAMES, PARTIAL_NAMES
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.pytrees import dotted
from jaxfix.analysis.traced import is_staged_call_name
from jaxfix.model import Edit, Finding, Fix, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid

# `# %timeit [options] stmt` / `# %time stmt` (a line magic), `# %%timeit [options]` (a cell's header)
_LINE_MAGIC = re.compile(r"^# %(timeit|time)(?=\s|$)")
_CELL_MAGIC = re.compile(r"^# %%(timeit|time)(?=\s|$)")
_CELL_START = re.compile(r"^# %%(\s|$)")  # jupytext's cell marker
# `%timeit`'s options before the statement (`-n 10 -r 3 -o`), as IPython's `parse_options` takes them
_TIMEIT_OPTIONS = re.compile(r"(\s+-(?:[nrp]\s*\S+|[tcqo]+))*\s*")
_NOT_COMPUTE = frozenset({"jax.random.PRNGKey", "jax.random.key", "jax.numpy.shape", "jax.numpy.ndim", "jax.numpy.size"})


@dataclass
class _Timed:
    """One timed piece of code: a line magic's statement, or a cell magic's body."""

    magic: str  # "timeit" | "time"
    line: int  # the magic's line (1-based)
    column: int  # where the statement starts on it (0-based, characters); the header's 2 for a cell
    statements: list[ast.stmt]
    offset: int  # of the statement text in the source (a line magic), else 0
    stmt_source: str | None = None  # a line magic's statement text


class TimingMagicRule(Rule):
    """
    ## What it does
    Finds IPython's timing magics in notebooks, `%timeit f(x)`, `%time f(x)` and cells that
    start with `%%timeit` or `%%time`, whose timed code ends in JAX work that nothing waits for
    (JAX504): a call of a function jitted in the notebook (`@jax.jit`, `f = jax.jit(...)`,
    `jax.jit(f)(x)`) or of `jax.numpy`, `jax.lax`, `jax.random`, `jax.nn` functions, with no
    `.block_until_ready()`, `jax.block_until_ready(...)`, `float(...)`, `np.asarray(...)`,
    `print(...)` or other read of the value after it.

    Also finds `%time f(x)` / `%%time` whose timed jitted function was never called before in
    the notebook (JAX505): its one run includes tracing and compiling it.

    Notebooks are read by jaxfix with their magics commented out, as jupytext writes them in a
    `.py` notebook; the rule reads that form in `.py` files too (`# %timeit f(x)`).

    ## Why is this bad?
    JAX dispatches work asynchronously: a jitted call returns once the computation is queued.
    `%timeit f(x)` then measures the dispatch, not the computation; JAX's own documentation
    times `f(x).block_until_ready()`. A first call compiles: `%time` of it reports the compile
    time, often seconds, as the function's run time.

    ## Known problems
    The statement of a line magic must be Python on that line. Functions jitted in another
    module are not looked into; a helper that blocks inside counts as waiting only when it is
    defined in the notebook and calls `block_until_ready` itself. A call before the `%time` on
    arguments of other shapes also counts as a warm-up.

    ## Example
    ```python
    f = jax.jit(lambda x: x @ x)
    x = jnp.ones((1000, 1000))
    %timeit f(x)
    ```

    ## Use instead
    ```python
    f = jax.jit(lambda x: x @ x)
    x = jnp.ones((1000, 1000))
    %timeit jax.block_until_ready(f(x))
    ```

    ## Fix safety
    JAX504's fix is safe: it wraps the timed statement's value in `jax.block_until_ready(...)`,
    which returns its argument unchanged (any pytree, where `.block_until_ready()` needs an
    array) and only waits; in a cell magic, the last statement with JAX work is wrapped. A
    value that is a compound statement (a loop) is reported without a fix. JAX505 has none: call
    the function once before timing it, or time it with `%timeit`, which runs it many times.

    ## References
    - https://docs.jax.dev/en/latest/async_dispatch.html
    - https://docs.jax.dev/en/latest/faq.html#benchmarking-jax-code
    - https://ipython.readthedocs.io/en/stable/interactive/magics.html#magic-timeit
    """

    name = "unblocked-timing-magic"
    codes = (
        Code("JAX504", "unblocked-timing-magic", "`%timeit`/`%time` of JAX work that is not waited for", "sometimes"),
        Code("JAX505", "timed-first-call", "`%time` of a jitted function's first call (times its compile)", "never"),
    )
    prefilter = ("%time",)
    valid = (
        Valid(
            """
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            # %timeit f(x).block_until_ready()
            """
        ),
        Valid(  # warmed up, and waited for
            """
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            f(x).block_until_ready()
            # %time jax.block_until_ready(f(x))
            """
        ),
        Valid(  # near miss: plain Python timed
            """
            # %timeit sum(range(100))
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            # %timeit -n 10 f(x)
            """,
            fixed="""
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            # %timeit -n 10 jax.block_until_ready(f(x))
            """,
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp

            @jax.jit
            def step(x):
                return jnp.tanh(x) * 2

            x = jnp.ones(1000)
            step(x).block_until_ready()
            # %%timeit
            y = step(x)
            """,
            fixed="""
            import jax
            import jax.numpy as jnp

            @jax.jit
            def step(x):
                return jnp.tanh(x) * 2

            x = jnp.ones(1000)
            step(x).block_until_ready()
            # %%timeit
            y = jax.block_until_ready(step(x))
            """,
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        return True  # the magics are comments: the text test (`prefilter`) is the screen

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        lines = ctx.source.splitlines(keepends=True)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        names = ImportMap.from_ast(ctx.tree)
        jitted = _jitted_names(ctx.tree, names)
        waiting = _waiting_helpers(ctx.tree)
        timed = list(_timed_code(ctx.tree, lines, starts))
        for item in timed:
            calls = [c for s in item.statements for c in _calls(s) if _is_jax_call(c, names, jitted)]
            if not calls:
                continue
            last = max(i for i, s in enumerate(item.statements) if any(_is_jax_call(c, names, jitted) for c in _calls(s)))
            if not any(_blocks(c, names, jitted, waiting) for s in item.statements[last:] for c in _calls(s)):
                yield self._unblocked(ctx, item, item.statements[last], lines, starts)
            if item.magic == "time":
                first = next((c for c in calls if _callee(c, names) in jitted or isinstance(c.func, ast.Call)), None)
                if first is not None and not _called_before(first, item, ctx.tree, timed, names):
                    yield self._finding(
                        ctx, "JAX505", item,
                        f"`%{'%' if item.stmt_source is None else ''}time` of `{_callee(first, names) or ast.unparse(first.func)}(...)` before it was ever called: "
                        "its one run includes tracing and compiling it; call it once first, or time it with `%timeit`",
                        None,
                    )

    def _unblocked(self, ctx: RuleContext, item: _Timed, stmt: ast.stmt, lines, starts) -> Finding:
        block, imports = ctx.names.reference("jax.block_until_ready")
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        fix = None
        if value is not None:
            if item.stmt_source is not None:  # the statement is text in a comment: its own offsets
                text_lines = item.stmt_source.splitlines(keepends=True)
                base = lambda n: item.offset + sum(len(t) for t in text_lines[: n - 1])
                src_line = lambda n: text_lines[n - 1]
            else:
                base = lambda n: starts[n - 1]
                src_line = lambda n: lines[n - 1]
            a = base(value.lineno) + _chars(src_line(value.lineno), value.col_offset)
            b = base(value.end_lineno) + _chars(src_line(value.end_lineno), value.end_col_offset)
            fix = Fix(
                title=f"wrap it in `{block}(...)`",
                safety=Safety.SAFE,
                edits=(Edit(a, a, f"{block}("), Edit(b, b, ")")),
                imports=tuple(imports),
            )
        what = "`%%" + item.magic + "` cell" if item.stmt_source is None else "`%" + item.magic + "`"
        message = (
            f"{what} times JAX work that nothing waits for (JAX dispatches asynchronously, so this times "
            "the dispatch only); " + (fix.title if fix else "block on its result before the cell ends")
        )
        return self._finding(ctx, "JAX504", item, message, fix)

    def _finding(self, ctx: RuleContext, code: str, item: _Timed, message: str, fix: Fix | None) -> Finding:
        return Finding(
            code=code,
            name=self.code_info(code).name,
            path=ctx.path,
            line=item.line,
            column=item.column + 1,
            end_line=item.line,
            end_column=len(ctx.source.splitlines()[item.line - 1]) + 1,
            message=message,
            fix=fix,
        )


def _chars(line: str, byte_col: int) -> int:
    """A stdlib-AST column (UTF-8 bytes) as characters."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _timed_code(tree: ast.Module, lines: list[str], starts: list[int]) -> Iterator[_Timed]:
    """The line magics and cell magics of the text, with their statements."""
    for n, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        cell = _CELL_MAGIC.match(line)
        if cell is not None:
            end = next((k for k in range(n, len(lines)) if _CELL_START.match(lines[k])), len(lines))
            body = [s for s in tree.body if n < s.lineno <= end]
            yield _Timed(cell.group(1), n, 2, body, 0)
            continue
        magic = _LINE_MAGIC.match(line)
        if magic is None:
            continue
        rest = line[magic.end() :]
        skip = _TIMEIT_OPTIONS.match(rest).end() if magic.group(1) == "timeit" else len(rest) - len(rest.lstrip())
        stmt = rest[skip:]
        try:
            parsed = ast.parse(stmt)
        except (SyntaxError, ValueError):
            continue
        if len(parsed.body) != 1:
            continue
        column = magic.end() + skip
        yield _Timed(magic.group(1), n, column, parsed.body, starts[n - 1] + column, stmt)


def _jitted_names(tree: ast.Module, names: ImportMap) -> set[str]:
    """Names bound to jitted functions: `@jax.jit def f`, `f = jax.jit(...)`, `partial(jax.jit, ...)`."""

    def jit_expr(e: ast.AST) -> bool:
        if names.qualify_ast(e) in JIT_NAMES:
            return True
        if isinstance(e, ast.Call):
            q = names.qualify_ast(e.func)
            return q in JIT_NAMES or (q in PARTIAL_NAMES and any(names.qualify_ast(a) in JIT_NAMES for a in e.args))
        return False

    jitted: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(jit_expr(d) for d in node.decorator_list):
            jitted.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and jit_expr(node.value.func):
            jitted.update(filter(None, (dotted(t) for t in node.targets)))
    return jitted


def _calls(node: ast.AST) -> list[ast.Call]:
    """Calls under `node` that run when it runs (not inside nested defs or lambdas)."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n is not node and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Call):
            out.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return out


def _callee(call: ast.Call, names: ImportMap) -> str | None:
    return dotted(call.func)


def _is_jax_call(call: ast.Call, names: ImportMap, jitted: set[str]) -> bool:
    func = call.func
    if isinstance(func, ast.Call):  # `jax.jit(f)(x)`, `jax.grad(f)(x)`
        return (names.qualify_ast(func.func) or "").startswith("jax.")
    if dotted(func) in jitted:
        return True
    q = names.qualify_ast(func)
    return q is not None and q not in _NOT_COMPUTE and is_staged_call_name(q) and not q.startswith(("jax.experimental.", "jax._src."))


def _waiting_helpers(tree: ast.Module) -> set[str]:
    """Functions of the text that call `block_until_ready` themselves (a `block_all(xs)` that maps
    it over a pytree, as Flax's guides time their steps): a call of one waits for its arguments."""
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(
            isinstance(n, ast.Attribute) and n.attr == "block_until_ready" for n in ast.walk(node)
        )
    }


def _blocks(call: ast.Call, names: ImportMap, jitted: set[str], waiting: set[str] = frozenset()) -> bool:
    """Whether `call` waits for a JAX value: `.block_until_ready()`, `jax.block_until_ready`, a
    function of the text that blocks itself (`waiting`), or a read of the value (`float`, NumPy,
    `print`, `.item()`) of an argument that is JAX work."""
    func = call.func
    if dotted(func) in waiting:
        return True
    if isinstance(func, ast.Attribute) and func.attr in BLOCKING_METHODS:
        return func.attr == "block_until_ready" or any(_is_jax_call(c, names, jitted) for c in _calls(func.value))
    q = names.qualify_ast(func)
    if q == "jax.block_until_ready":
        return True
    if q in BLOCKING_CALLS or ((q or "").startswith(BLOCKING_PREFIXES) and q not in NUMPY_METADATA):
        return any(_is_jax_call(c, names, jitted) for a in call.args for c in _calls(a))
    return False


def _called_before(call: ast.Call, item: _Timed, tree: ast.Module, timed: list[_Timed], names: ImportMap) -> bool:
    """Whether the function `call` calls was called earlier in the text (code or a timing magic)."""
    target = ast.dump(call.func)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node is not call and node.lineno < item.line and ast.dump(node.func) == target:
            return True
    for other in timed:
        if other.line < item.line and any(ast.dump(c.func) == target for s in other.statements for c in _calls(s)):
            return True
    return False


# `TimingMagicCommand`: the rule as a libcst codemod, made on first access
__getattr__ = commands_for(TimingMagicRule)
