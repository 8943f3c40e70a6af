"""JAX401 `print-in-traced-code`: Python's `print` of a traced value runs once, at trace time,
and prints a tracer."""

from __future__ import annotations

import ast
import dataclasses
import string
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from codemods.trace_time_semantics import preview
from codemods.trace_time_semantics.common import (
    certainly_traced,
    fits,
    message,
    traced_functions,
)
from jaxfix.analysis import render
from jaxfix.analysis.cstparse import parsing_config
from jaxfix.analysis.guards import behind_a_traced_test
from jaxfix.analysis.jit_contexts import JitContexts, jit_contexts
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.trace_screen import (
    MAY_NAME_A_TRANSFORM,
    NO_ENTRIES,
    ScreenEntries,
    any_site,
)
from jaxfix.analysis.trace_sites import own_sites
from jaxfix.model import Finding, Fix, ImportRequest, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid


class PrintInTracedCodeRule(Rule):
    """
    ## What it does
    Finds `print(...)` calls inside traced code (a function under `jax.jit`, `vmap`, `pmap`, a
    `lax` loop or branch body, or a helper called from one with traced arguments) where at least
    one printed value is traced, including the expressions of an f-string.

    ## Why is this bad?
    Python's `print` runs when the function is traced, not when it runs: it prints the tracer
    (`JitTracer(float32[3])`) once, at the first call, and never again; later calls hit the
    compilation cache and print nothing. `jax.debug.print` is staged into the program and prints
    the actual values on every call. Measured with jax 0.10.2 on CPU: two calls of a jitted
    function with `print("traced", x)` printed `traced JitTracer(float32[3])` once, and an
    f-string field with a format spec (`f"{x:.3f}"`) raised `TypeError: unsupported format string
    passed to DynamicJaxprTracer.__format__`.

    `print` of static values only (`print(x.shape)`, a message string, a static argument, a
    dict's `keys()`, a dtype parameter of an `eqx.filter_jit` function: one its body passes to
    `.astype` or as `dtype=`) is not flagged: printing at trace time is often what was meant.

    The same holds for `logging.info(x)` (any `logging`/`absl.logging` level function, and the
    methods of a module-level `logging.getLogger(...)` logger) with a traced argument: it logs a
    tracer, once. Those are reported with a manual fix (`jax.debug.callback`).

    ## Known problems
    `jax.debug.print` is unordered by default: several prints in one jitted function may come out
    in a different order than the code (pass `ordered=True` where order matters; it is not added
    because ordered effects are rejected under some transforms). A Python number inside a
    printed container of traced values (`print((x, 3))`) is printed as a 0-d array. A static
    value is formatted once, at trace time, which is what the original `print` showed at that
    time too. A `print` behind an `if`/`while` test on a traced value (in its branches, or after
    it) is not reported: the test raises first, so only eager calls reach the print.

    ## Preview
    A logging call given a traced value is shown only with `--preview`: on code nobody had
    prepared (the thirteen blind pools' first-contact labels) 1 of 5 was real, wrong on three
    pools (a dtype, `variables.keys()`, strings built from shapes: code logs structure at trace
    time on purpose). A `print` of a traced value is reported by default (16 real of 20 on five
    pools; 3 debatable: a whole batch printed for its shapes). `codemods/trace_time_semantics/preview.py`.

    ## Example
    ```python
    @jax.jit
    def step(x):
        print(f"x = {x:.3f}, shape {x.shape}")
        return x * 2
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(x):
        jax.debug.print("x = {:.3f}, shape {}", x, str(x.shape))
        return x * 2
    ```

    ## Fix
    The printed values become one format string and its arguments:
    - a string literal is copied into the format string (braces doubled);
    - an f-string is split: its text goes into the format string, each traced expression becomes a
      positional `{}` placeholder that keeps the conversion and format spec (`{x:.3f}` becomes
      `{:.3f}`, `{x!r}` becomes `{!r}`, which prints `Array(1., dtype=float32)` exactly as an eager
      `repr` does; `{x=}` becomes the text `x=` and `{!r}`);
    - a `"...".format(...)` call on a string literal is split the same way: its text goes into the
      format string and each `{}` field takes its argument (a numbered or named field, keywords
      or `*args`: manual); a `%` format of a traced value is manual (it runs at trace time);
    - a traced argument becomes a `{}` placeholder with the value as argument;
    - a static (non-traced) value is formatted at trace time as the original did: `str(v)`, or
      `format(repr(v), spec)` for an f-string field. `jax.debug.print` would otherwise turn a
      Python number into a 0-d array (`(Array(3, dtype=int32),)` for a shape);
    - `sep=` (a string literal) is folded into the format string; `end=` is folded when it ends
      with a newline (`jax.debug.print` always ends the line); `flush=` is dropped.
    No fix (manual) for `file=`, a non-literal `sep=`/`end=`, an `end=` without a final newline,
    `*args`, an f-string format spec that holds an expression, or a message that starts with `{`
    (`jax.debug.print` does not format such a message).

    ## Fix safety
    Safe: differential execution runs the original eagerly (`jax.disable_jit()`, where `print`
    shows values) and the rewrite under `jit`, and compares what both write to stdout as well as
    the returned values, which the fix never changes. Unsafe where the function is traced only
    because another module calls it (no transform of its own module reaches it): there the
    values may be Python objects, which `jax.debug.print` refuses.

    ## References
    - https://docs.jax.dev/en/latest/debugging/print_breakpoint.html
    - https://docs.jax.dev/en/latest/_autosummary/jax.debug.print.html
    """

    name = "print-in-traced-code"
    codes = (Code("JAX401", "print-in-traced-code", "`print` of a traced value inside traced code", "sometimes"),)
    prefilter = ("print", "logging")  # then could_match: a trace entry
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    follows_calls = True  # also in a file whose functions traced code elsewhere calls
    verify_reference = "eager"
    valid = (
        Valid(
            """
            import jax


            @jax.jit
            def step(x):
                print("tracing step for shape", x.shape)  # static: printed once, at trace time, as meant
                return x * 2
            """
        ),
        Valid(
            """
            import jax


            @jax.jit
            def step(x):
                jax.debug.print("x = {}", x)
                return x * 2
            """
        ),
        Valid(
            """
            def report(x):
                print("x =", x)  # not traced: runs on every call
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax


            @jax.jit
            def step(x):
                print(f"x = {x:.3f}, shape {x.shape}")
                return x * 2
            """,
            fixed="""
            import jax


            @jax.jit
            def step(x):
                jax.debug.print("x = {:.3f}, shape {}", x, str(x.shape))
                return x * 2
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def step(x, y):
                print("x", x)
                print("y", y, sep=": ")
                return x + y
            """,
            fixed="""
            import jax


            @jax.jit
            def step(x, y):
                jax.debug.print("x {}", x, ordered=True)
                jax.debug.print("y: {}", y, ordered=True)
                return x + y
            """,
        ),
        Invalid(
            """
            import sys

            import jax


            @jax.jit
            def step(x):
                print(x, file=sys.stderr)
                return x * 2
            """
        ),
    )

    def could_match(self, tree: ast.Module, entries: ScreenEntries = NO_ENTRIES) -> bool:
        """A `print` of a value that may be traced, or a logging call (`_may_log`) given one, in a
        function that may run under a trace."""
        loggers: list[frozenset[str]] = []  # `_module_loggers`, once a logging method asks

        def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
            if type(n) is not ast.Call:
                return False
            func = n.func
            if type(func) is ast.Attribute and func.attr in LOG_METHODS:
                if not loggers:
                    loggers.append(_module_loggers_ast(tree, fn.screen.names))
                return _may_log(fn, func, loggers[0]) and any(
                    _may_show_traced(fn, a) for a in [*n.args, *(k.value for k in n.keywords)]
                )
            return _may_print_traced(fn, n)

        return any_site(tree, may_flag, entries)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        builtin_print = not ("print" in ctx.names.bindings or _module_rebinds(ctx.module, "print"))
        loggers = _module_loggers(ctx)
        for info in traced_functions(ctx):
            prints = []
            debug_calls = 0
            for node, stmt in own_sites(info, ctx):
                if not isinstance(node, cst.Call):
                    continue
                traced = lambda e, stmt=stmt: info.facts.traced(e, stmt)  # noqa: E731
                if isinstance(node.func, cst.Name) and node.func.value == "print":
                    if not builtin_print or "print" in info.facts.locals:
                        continue
                    if any(_value_traced(a.value, traced) for a in node.args if a.keyword is None):
                        if behind_a_traced_test(stmt, ctx.parent, info.facts.traced):
                            continue  # a traced `if`/`while` test raises first: only eager calls print
                        prints.append((node, traced))
                elif (ctx.names.qualify(node.func) or "").startswith("jax.debug."):
                    debug_calls += 1
                else:
                    logged = _log_call(ctx, node, loggers, info.facts.locals)
                    if logged is not None and any(_value_traced(a.value, traced) for a in node.args):
                        fix = ctx.manual(
                            f"log the value at run time: `jax.debug.callback(lambda v: {logged}(\"%s\", v), value)`, "
                            "or print it with `jax.debug.print`"
                        )
                        what = f"`{logged}` of a traced value runs once, at trace time, and logs a tracer"
                        found = ctx.finding(self, "JAX401", node, message(what + info.traced_because(), fix), fix)
                        yield preview.print_finding(found, logged=True)
            # several prints in one function: keep their order (jax.debug.print is unordered by default)
            ordered = len(prints) + debug_calls > 1
            certain = not prints or certainly_traced(ctx.fact(JitContexts, jit_contexts), info)
            for node, traced in prints:
                fix = _PrintFix(ctx, node, traced, ordered).build()
                if not certain and fix.safety is Safety.SAFE:
                    # where the values are in fact Python objects, `jax.debug.print` refuses them
                    fix = dataclasses.replace(
                        fix,
                        title=f"{fix.title} (unsafe: traced only through a call in another module; "
                        "`jax.debug.print` takes only array values)",
                        safety=Safety.UNSAFE,
                    )
                found = ctx.finding(
                    self, "JAX401", node, message("`print` of a traced value runs once, at trace time" + info.traced_because(), fix), fix
                )
                yield preview.print_finding(found, logged=False)


# Functions of `logging` (and absl's) that log their arguments, and the same methods of a logger.
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "critical", "exception", "log", "fatal"})
LOGGING_MODULES = frozenset({"logging", "absl.logging"})
_GET_LOGGER = frozenset({"logging.getLogger", "absl.logging.get_absl_logger"})


def _module_loggers(ctx: RuleContext) -> set[str]:
    """Module-level names bound to `logging.getLogger(...)`."""
    out: set[str] = set()
    for stmt in ctx.module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (
                    isinstance(small, cst.Assign)
                    and isinstance(small.value, cst.Call)
                    and ctx.names.qualify(small.value.func) in _GET_LOGGER
                ):
                    out.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
    return out


def _log_call(ctx: RuleContext, call: cst.Call, loggers: set[str], local: set[str]) -> str | None:
    """`logging.info(...)`, `absl.logging.warning(...)` or `logger.info(...)` on a module-level
    logger: the call as spelled (`logging.info`); None for anything else."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in LOG_METHODS:
        return None
    head = func.value
    if isinstance(head, cst.Name) and head.value in loggers and head.value not in local:
        return f"{head.value}.{func.attr.value}"
    qualified = ctx.names.qualify(func) or ""
    if qualified.rpartition(".")[0] in LOGGING_MODULES:
        return render.code_of(ctx.module, func).strip()
    return None


# -- the screen: a `print` that may show a traced value, on the stdlib AST ----------------------
def _may_print_traced(fn: ScreenFunction, n: ast.Call) -> bool:
    """`print(...)` with an argument the rule reads (positional, `*a` or `**kw`) that may show a
    traced value."""
    if not (isinstance(n.func, ast.Name) and n.func.id == "print"):
        return False
    return any(_may_show_traced(fn, a) for a in [*n.args, *(k.value for k in n.keywords if k.arg is None)])


def _may_show_traced(fn: ScreenFunction, arg: ast.AST) -> bool:
    """`_value_traced`: a traced value, or an f-string with a traced field (its format spec's too)."""
    if isinstance(arg, ast.Starred):
        arg = arg.value
    if isinstance(arg, ast.JoinedStr):
        return any(fn.traced(v.value) for v in ast.walk(arg) if isinstance(v, ast.FormattedValue))
    return fn.traced(arg)


def _may_log(fn: ScreenFunction, func: ast.Attribute, loggers: frozenset[str]) -> bool:
    """`_log_call` is not None, or may not be: a method of a module-level logger (whether the
    function binds the name too is left to the rule), or a function of `logging`/`absl.logging`."""
    head = func.value
    if type(head) is ast.Name and head.id in loggers:
        return True
    return (fn.screen.names.qualify_ast(func) or "").rpartition(".")[0] in LOGGING_MODULES


def _module_loggers_ast(tree: ast.Module, names) -> frozenset[str]:
    """`_module_loggers` on the stdlib AST: names the module's own statements assign a logger."""
    out: set[str] = set()
    for stmt in tree.body:
        if (
            type(stmt) is ast.Assign
            and type(stmt.value) is ast.Call
            and names.qualify_ast(stmt.value.func) in _GET_LOGGER
        ):
            out.update(t.id for t in stmt.targets if type(t) is ast.Name)
    return frozenset(out)


# -- the decision and the fix ------------------------------------------------------------------
def _module_rebinds(module: cst.Module, name: str) -> bool:
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
            return True
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets
                ):
                    return True
    return False


def _fstring_parts(e: cst.BaseExpression) -> list | None:
    """The parts of a string literal made of f-strings and plain strings; None if not one."""
    if isinstance(e, cst.FormattedString):
        return [(e, p) for p in e.parts]
    if isinstance(e, cst.SimpleString):
        return [(e, None)]
    if isinstance(e, cst.ConcatenatedString):
        left, right = _fstring_parts(e.left), _fstring_parts(e.right)
        return None if left is None or right is None else left + right
    return None


def _value_traced(e: cst.BaseExpression, traced) -> bool:
    parts = _fstring_parts(e)
    if parts is None:
        return traced(e)
    for _owner, part in parts:
        if isinstance(part, cst.FormattedStringExpression):
            if traced(part.expression):
                return True
            for spec in part.format_spec or ():
                if isinstance(spec, cst.FormattedStringExpression) and traced(spec.expression):
                    return True
    return False


class _NoFix(Exception):
    """Why a `print` has no automatic `jax.debug.print` form (the manual fix's title)."""


class _PrintFix:
    """The `jax.debug.print` call that replaces one `print`: its format string and arguments, or a
    manual fix with the reason (`_NoFix`) when the call has no such form."""

    def __init__(self, ctx: RuleContext, call: cst.Call, traced, ordered: bool = False) -> None:
        self.ctx = ctx
        self.ordered = ordered
        self.call = call
        self.traced = traced
        self.fmt: list[str] = []
        self.args: list[str] = []

    def build(self) -> Fix:
        try:
            return self._build()
        except _NoFix as why:
            return self.ctx.manual(str(why))

    def _build(self) -> Fix:
        sep, end = " ", "\n"
        for arg in self.call.args:
            if arg.star:
                raise _NoFix("`print(*args)`: write the `jax.debug.print` format string for the values")
            if arg.keyword is None:
                continue
            key = arg.keyword.value
            if key == "file":
                raise _NoFix("`print(..., file=...)` has no `jax.debug.print` form: use `jax.debug.callback`")
            if key in ("sep", "end"):
                value = self._literal(arg.value)
                if value is None:
                    raise _NoFix(f"`{key}=` is not a string literal: build the format string by hand")
                if key == "sep":
                    sep = value
                else:
                    end = value
            elif key != "flush":
                raise _NoFix(f"unknown `print` keyword `{key}`")
        if not end.endswith("\n"):
            raise _NoFix("`jax.debug.print` always ends the line: `end=` without a newline cannot be kept")
        first = True
        for arg in self.call.args:
            if arg.keyword is not None:
                continue
            if not first:
                self.fmt.append(_escape(sep))
            first = False
            self._add(arg.value)
        if end != "\n":
            self.fmt.append(_escape(end[:-1]))
        fmt = "".join(self.fmt)
        if fmt.startswith("{{"):
            raise _NoFix("the message starts with `{`, which `jax.debug.print` would not format")
        imports: list[ImportRequest] = []
        func, reqs = self.ctx.names.reference("jax.debug.print")
        imports.extend(reqs)
        text = f"{func}({', '.join([self.ctx.literal(fmt), *self.args, *(['ordered=True'] if self.ordered else [])])})"
        stmt = self.ctx.parent(self.call)
        if isinstance(stmt, cst.Expr) and stmt.value is self.call:
            text = fits(self.ctx, stmt, text)
        new = cst.parse_expression(text, config=parsing_config(self.ctx.module))
        new = new.with_changes(lpar=self.call.lpar, rpar=self.call.rpar)
        return self.ctx.rewrite("use `jax.debug.print`", Safety.SAFE, replace={self.call: new}, imports=imports)

    def _literal(self, e: cst.BaseExpression) -> str | None:
        if isinstance(e, (cst.SimpleString, cst.ConcatenatedString)):
            value = e.evaluated_value
            return value if isinstance(value, str) else None
        return None

    def _add(self, e: cst.BaseExpression) -> None:
        if self._add_format_call(e):
            return
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, cst.Modulo) and self.traced(e):
            raise _NoFix("a `%` format of a traced value runs at trace time: write the format string by hand")
        parts = _fstring_parts(e)
        if parts is None:
            if not self.traced(e) and (
                isinstance(e, (cst.Integer, cst.Float)) or (isinstance(e, cst.Name) and e.value in ("True", "False", "None"))
            ):
                self.fmt.append(_escape(str(ast.literal_eval(render.code_of(self.ctx.module, e)))))
                return
            self.fmt.append("{}")
            code = render.code_of(self.ctx.module, e).strip()
            self.args.append(code if self.traced(e) else f"str({code})")
            return
        for owner, part in parts:
            if part is None:  # a plain string literal
                value = owner.evaluated_value
                if not isinstance(value, str):
                    raise _NoFix("a bytes literal in `print`")
                self.fmt.append(_escape(value))
            elif isinstance(part, cst.FormattedStringText):
                self.fmt.append(_fstring_text(owner, part.value))
            else:
                self._add_field(owner, part)

    def _add_format_call(self, e: cst.BaseExpression) -> bool:
        """`"x = {}".format(x)`: the literal's text goes into the format string and each field takes
        its argument, as an f-string's do (Guanghan/ngp_jax@<heldout30> notebook_basic_JAX.ipynb cell
        24: the fix used to pass the whole `.format(...)` call, formatted at trace time, so every call
        printed `x = JitTracer(...)`). False when `e` is no such call."""
        if not (
            isinstance(e, cst.Call)
            and isinstance(e.func, cst.Attribute)
            and e.func.attr.value == "format"
            and isinstance(e.func.value, cst.SimpleString)
        ):
            return False
        template = e.func.value.evaluated_value
        if not isinstance(template, str) or any(a.keyword is not None or a.star for a in e.args):
            raise _NoFix("a `.format` call with keywords or `*args`: write the format string by hand")
        values = [a.value for a in e.args]
        try:
            fields = list(string.Formatter().parse(template))
        except ValueError as error:
            raise _NoFix(f"format string not understood: {error}") from None
        for text, field, spec, conversion in fields:
            self.fmt.append(_escape(text))
            if field is None:
                continue
            if field != "" or not values or (spec and "{" in spec):
                raise _NoFix("a `.format` field that is numbered, named or nested: write the format string by hand")
            self._add_replacement(values.pop(0), conversion, spec)
        if values:
            raise _NoFix("a `.format` call with more arguments than fields")
        return True

    def _add_field(self, owner: cst.FormattedString, part: cst.FormattedStringExpression) -> None:
        m = self.ctx.module
        spec_parts = part.format_spec or ()
        if any(isinstance(s, cst.FormattedStringExpression) for s in spec_parts):
            raise _NoFix("an f-string format spec holding an expression: write the format string by hand")
        spec = "".join(_fstring_text(owner, s.value) for s in spec_parts)
        conversion = part.conversion
        if part.equal is not None:
            self.fmt.append(
                _escape(
                    render.code_of(m, part.whitespace_before_expression)
                    + render.code_of(m, part.expression)
                    + render.code_of(m, part.whitespace_after_expression)
                    + render.code_of(m, part.equal)
                )
            )
            if conversion is None and not spec:
                conversion = "r"
        self._add_replacement(part.expression, conversion, spec)

    def _add_replacement(self, expression: cst.BaseExpression, conversion: str | None, spec: str) -> None:
        """One replacement field of an f-string or a `.format` call: a traced value becomes a
        placeholder that keeps its conversion and spec; a static one is formatted at trace time, as
        the original did."""
        code = render.code_of(self.ctx.module, expression).strip()
        if self.traced(expression):
            self.fmt.append("{" + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
            self.args.append(code if not isinstance(expression, cst.NamedExpr) else f"({code})")
            return
        value = code
        if conversion:
            value = {"r": "repr", "s": "str", "a": "ascii"}[conversion] + f"({value})"
        self.fmt.append("{}")
        if spec:
            self.args.append(f"format({value}, {self.ctx.literal(spec)})")
        else:  # `f"{v}"` is `format(v, "")`, which is `str(v)` for every built-in type
            self.args.append(value if conversion else f"str({value})")


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _fstring_text(owner: cst.FormattedString, raw: str) -> str:
    """The value of an f-string's text part, braces kept doubled (as a format string needs them)."""
    prefix = owner.prefix.lower().replace("f", "")
    quote = owner.start[len(owner.prefix) :]
    try:
        value = ast.literal_eval(f"{prefix}{quote}{raw}{quote}")
    except (SyntaxError, ValueError) as error:
        raise _NoFix(f"f-string text not understood: {error}") from None
    return value


# `PrintInTracedCodeCommand`: the libcst codemod command, made on first access
__getattr__ = commands_for(PrintInTracedCodeRule)
