"""JAX4xx: Python that runs once, at trace time, inside traced code (print, NumPy, in-place updates).

One rule class per code, each documented on its own page; they share the walks of
`jaxfix.analysis.trace_sites` and the traced-value facts of `jaxfix.analysis.jit_contexts`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.pytrees import ast_statements
from jaxfix.analysis.trace_screen import MAY_NAME_A_TRANSFORM, ScreenFunction, any_site, target_names
from jaxfix.analysis.trace_sites import ArrayEvidence, own_sites
from jaxfix.analysis.traced import assigned_names, param_names
from jaxfix.analysis.walk import walk
from jaxfix.model import Finding, Fix, ImportRequest, Safety
from jaxfix.rulebase import Code, Example, Rule, RuleContext

_PREFILTER = ("jit", "vmap", "lax", "pmap")
# An item assignment has `]` then `=` or an augmented operator (spaces, comments or line breaks
# between them are not seen; such code is not flagged).
_ITEM_STORES = tuple(
    f"]{space}{op}=" for space in ("", " ") for op in ("", "+", "-", "*", "/", "//", "**", "%", "&", "|", "^", "<<", ">>", "@")
)


# -- screens: what `check` could report, on the stdlib AST (jaxfix.analysis.trace_screen) ------
def _may_print_traced(fn: ScreenFunction, n: ast.AST) -> bool:
    if not (type(n) is ast.Call and isinstance(n.func, ast.Name) and n.func.id == "print"):
        return False
    for arg in n.args:
        arg = arg.value if isinstance(arg, ast.Starred) else arg
        if isinstance(arg, ast.JoinedStr):
            if any(fn.traced(v.value) for v in ast.walk(arg) if isinstance(v, ast.FormattedValue)):
                return True
        elif fn.traced(arg):
            return True
    return False


def _store_root(target: ast.AST) -> ast.AST:
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target


def _may_store_into_traced(fn: ScreenFunction, n: ast.AST) -> bool:
    """Only names the function binds count as arrays (ArrayEvidence): closures and globals do not."""
    targets = n.targets if type(n) is ast.Assign else [n.target] if type(n) is ast.AugAssign else []
    for t in targets:
        if isinstance(t, ast.Subscript):
            root = _store_root(t)
            if isinstance(root, ast.Name) and root.id in fn.stored and fn.traced(root):
                return True
    return False


def _may_call_numpy_on_traced(fn: ScreenFunction, n: ast.AST) -> bool:
    if type(n) is not ast.Call:
        return False
    qual = fn.screen.names.qualify_ast(n.func) or ""
    if not qual.startswith("numpy."):
        return False
    fname = qual[len("numpy.") :]
    if fname in NP_WORKS or not (fname in NP_SAME or fname in NP_DIFFERENT or fname in NP_MANUAL):
        return False
    return any(fn.traced(a) for a in [*n.args, *(k.value for k in n.keywords)])


def _may_touch_outer_state(fn: ScreenFunction, n: ast.AST, state) -> bool:
    """`state()` is the module's `_ModuleState`. A container outside the function is the module's
    (a container display or constructor at module level) or, for a nested function, maybe an
    enclosing function's."""
    kind = type(n)
    if kind is ast.Global or kind is ast.Nonlocal:
        return True
    if kind is ast.Assign or kind is ast.AugAssign or kind is ast.AnnAssign:
        targets = n.targets if kind is ast.Assign else [n.target]
        names = [t.value.id for t in targets if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)]
    elif kind is ast.Call:
        func = n.func
        names = (
            [func.value.id]
            if isinstance(func, ast.Attribute) and func.attr in CONTAINER_MUTATORS and isinstance(func.value, ast.Name)
            else []
        )
    elif kind is ast.Name:
        return isinstance(n.ctx, ast.Load) and n.id not in fn.locals and n.id in state().reassigned
    else:
        return False
    return any(name not in fn.locals and _may_be_outer_container(fn, name, state) for name in names)


def _may_be_outer_container(fn: ScreenFunction, name: str, state) -> bool:
    """Mirrors the rule's `outer_container`: the first enclosing def binding `name` must bind only
    containers to it (a lambda's enclosing def is unknown: yes); without one, a module container."""
    scope = fn.screen.enclosing(fn)
    while scope is not None:
        if scope is True:
            return True
        if name in scope.locals:
            return _binds_only_containers(scope, name)
        scope = scope.screen.enclosing(scope)
    return name in state().containers


def _binds_only_containers(fn: ScreenFunction, name: str) -> bool:
    """As `_container_local`: every assignment of `name` in the own body is a container display or
    constructor, and there is one."""
    values: list[ast.AST | None] = []
    for n in fn.own:
        if type(n) is ast.Assign:
            for t in n.targets:
                if type(t) is ast.Name and t.id == name:
                    values.append(n.value)
                elif isinstance(t, (ast.Tuple, ast.List, ast.Starred)) and name in target_names(t):
                    values.append(None)
        elif type(n) is ast.AnnAssign and type(n.target) is ast.Name and n.target.id == name:
            values.append(n.value)
    qualify = fn.screen.names.qualify_ast
    return bool(values) and all(
        v is not None
        and (
            isinstance(v, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp))
            or (isinstance(v, ast.Call) and (qualify(v.func) or "") in _CONTAINER_CALLS)
        )
        for v in values
    )


def _traced_functions(ctx: RuleContext) -> list[FuncInfo]:
    jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
    return list(jc.traced_functions())


def _code(ctx: RuleContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node)


def _short(ctx: RuleContext, node: cst.CSTNode) -> str:
    text = " ".join(_code(ctx, node).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _quote(value: str) -> str:
    """A Python string literal for `value`, in double quotes where possible (black's choice)."""
    text = repr(value)
    if text.startswith("'") and '"' not in value:
        text = '"' + text[1:-1].replace("\\'", "'") + '"'
    return text


def _blacken(text: str, width: int) -> str:
    try:
        import black
    except ImportError:  # pragma: no cover - black is a dependency
        return text
    try:
        return black.format_str(text, mode=black.Mode(line_length=max(width, 20))).rstrip("\n")
    except Exception:  # noqa: BLE001 - formatting is cosmetic
        return text


def _small_statement_line(ctx: RuleContext, stmt: cst.CSTNode) -> cst.SimpleStatementLine | None:
    parent = ctx.parent(stmt)
    return parent if isinstance(parent, cst.SimpleStatementLine) else None


def _fits(ctx: RuleContext, stmt: cst.CSTNode, text: str) -> str:
    """`text` (one small statement replacing `stmt`) wrapped the way black would when the line is too long."""
    indent = ctx.position(stmt).start.column
    if len(text) + indent <= 88:
        return text
    line = _small_statement_line(ctx, stmt)
    if line is None or len(line.body) != 1:
        return text
    return _blacken(text, 88 - indent)  # libcst indents the continuation lines to the block


def _message(text: str, fix: Fix) -> str:
    # reporters show a manual fix's title themselves
    return text if fix.safety is Safety.MANUAL else f"{text}; {fix.title}"


# ==============================================================================================
# JAX401 print-in-traced-code
# ==============================================================================================


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

    `print` of static values only (`print(x.shape)`, a message string, a static argument) is not
    flagged: printing at trace time is often what was meant.

    ## Known problems
    `jax.debug.print` is unordered by default: several prints in one jitted function may come out
    in a different order than the code (pass `ordered=True` where order matters; it is not added
    because ordered effects are rejected under some transforms). A Python number inside a
    printed container of traced values (`print((x, 3))`) is printed as a 0-d array. A static
    value is formatted once, at trace time, which is what the original `print` showed at that
    time too.

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
    the returned values, which the fix never changes.

    ## References
    - https://docs.jax.dev/en/latest/debugging/print_breakpoint.html
    - https://docs.jax.dev/en/latest/_autosummary/jax.debug.print.html
    """

    name = "print-in-traced-code"
    codes = (Code("JAX401", "print-in-traced-code", "`print` of a traced value inside traced code", "sometimes"),)
    prefilter = ("print",)  # then could_match: a trace entry
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    verify_reference = "eager"
    examples = (
        Example(
            '@jax.jit\ndef step(x):\n    print(f"x = {x:.3f}, shape {x.shape}")\n    return x * 2\n',
            '@jax.jit\ndef step(x):\n    jax.debug.print("x = {:.3f}, shape {}", x, str(x.shape))\n    return x * 2\n',
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A `print` of a value that may be traced, in a function that may run under a trace."""
        return any_site(tree, _may_print_traced)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if "print" in ctx.names.bindings or _module_rebinds(ctx.module, "print"):
            return
        for info in _traced_functions(ctx):
            if "print" in info.facts.locals:
                continue
            prints = []
            debug_calls = 0
            for node, stmt in own_sites(info, ctx):
                if not isinstance(node, cst.Call):
                    continue
                if isinstance(node.func, cst.Name) and node.func.value == "print":
                    traced = lambda e, stmt=stmt: info.facts.traced(e, stmt)  # noqa: E731
                    if any(_value_traced(a.value, traced) for a in node.args if a.keyword is None):
                        prints.append((node, traced))
                elif (ctx.names.qualify(node.func) or "").startswith("jax.debug."):
                    debug_calls += 1
            # several prints in one function: keep their order (jax.debug.print is unordered by default)
            ordered = len(prints) + debug_calls > 1
            for node, traced in prints:
                fix = _PrintFix(ctx, node, traced, ordered).build()
                yield ctx.finding(
                    self, "JAX401", node, _message("`print` of a traced value runs once, at trace time", fix), fix
                )



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
    pass


class _PrintFix:
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
        text = f"{func}({', '.join([_quote(fmt), *self.args, *(['ordered=True'] if self.ordered else [])])})"
        stmt = self.ctx.parent(self.call)
        if isinstance(stmt, cst.Expr) and stmt.value is self.call:
            text = _fits(self.ctx, stmt, text)
        new = cst.parse_expression(text, config=self.ctx.module.config_for_parsing)
        new = new.with_changes(lpar=self.call.lpar, rpar=self.call.rpar)
        return self.ctx.rewrite("use `jax.debug.print`", Safety.SAFE, replace={self.call: new}, imports=imports)

    def _literal(self, e: cst.BaseExpression) -> str | None:
        if isinstance(e, (cst.SimpleString, cst.ConcatenatedString)):
            value = e.evaluated_value
            return value if isinstance(value, str) else None
        return None

    def _add(self, e: cst.BaseExpression) -> None:
        parts = _fstring_parts(e)
        if parts is None:
            if not self.traced(e) and (
                isinstance(e, (cst.Integer, cst.Float)) or (isinstance(e, cst.Name) and e.value in ("True", "False", "None"))
            ):
                self.fmt.append(_escape(str(ast.literal_eval(self.ctx.module.code_for_node(e)))))
                return
            self.fmt.append("{}")
            code = self.ctx.module.code_for_node(e).strip()
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
                    m.code_for_node(part.whitespace_before_expression)
                    + m.code_for_node(part.expression)
                    + m.code_for_node(part.whitespace_after_expression)
                    + m.code_for_node(part.equal)
                )
            )
            if conversion is None and not spec:
                conversion = "r"
        code = m.code_for_node(part.expression).strip()
        if self.traced(part.expression):
            self.fmt.append("{" + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}")
            self.args.append(code if not isinstance(part.expression, cst.NamedExpr) else f"({code})")
            return
        value = code
        if conversion:
            value = {"r": "repr", "s": "str", "a": "ascii"}[conversion] + f"({value})"
        self.fmt.append("{}")
        if spec:
            self.args.append(f"format({value}, {_quote(spec)})")
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




# ==============================================================================================
# JAX403 in-place-update-on-traced-array
# ==============================================================================================

# augmented operator -> `.at[...]` method
AT_METHODS = {"+=": "add", "-=": "subtract", "*=": "multiply", "/=": "divide", "**=": "power"}
# augmented operators without an `.at` method: `x = x.at[i].set(x[i] OP v)`
OTHER_OPS = {"//=": "//", "%=": "%", "&=": "&", "|=": "|", "^=": "^", "<<=": "<<", ">>=": ">>"}


class InPlaceUpdateRule(Rule):
    """
    ## What it does
    Finds item assignments `x[i] = v` and augmented item assignments (`x[i] += v`, `-=`, `*=`,
    `/=`, `**=`, `//=`, `%=`, ...) on a traced JAX array inside traced code.

    ## Why is this bad?
    JAX arrays are immutable. Under `jit` (and eagerly too) the assignment raises
    `TypeError: JAX arrays are immutable and do not support in-place item assignment. Instead of
    x[idx] = y, use x = x.at[idx].set(y) ...`. The functional form `x = x.at[i].set(v)` is what
    JAX offers; inside `jit` XLA performs it in place when `x` is not used afterwards.

    The rule only fires when `x` is a JAX array by the evidence in the function: it is used as one
    (`x.shape`, `x.at`, `x.astype(...)`), or every binding of it is a `jax.numpy`/`lax` result,
    arithmetic on traced values or an array method, and a parameter is annotated with an array
    type. Lists and dicts being built (`out = []`, `d = {}`, `params["w"] = ...` on a dict) and
    NumPy arrays are never flagged.

    ## Known problems
    The reference for the fix is NumPy semantics, which the original code was written for.
    NumPy and `.at` differ where NumPy mutates shared memory: when another name aliases `x`
    (`y = x`, or `x` is a view `x = m[0]`), NumPy's update shows through the alias and the
    rewrite's does not (the fix is then unsafe); a caller never sees an update of its argument
    (JAX arrays cannot be updated in place anyway). An out-of-bounds index raises `IndexError` in
    NumPy and is dropped by `.at` (the default `mode`). With repeated indices in an index array,
    NumPy applies an augmented update once and `.at[...].add` applies each (unsafe when the index
    is traced), and which `.set` wins is unspecified in JAX.

    ## Example
    ```python
    @jax.jit
    def bump(x, i, v):
        x = x * 2
        x[i] = v
        x[0] += 1.0
        return x
    ```

    ## Use instead
    ```python
    @jax.jit
    def bump(x, i, v):
        x = x * 2
        x = x.at[i].set(v)
        x = x.at[0].add(1.0)
        return x
    ```

    ## Fix
    `x[i] = v` becomes `x = x.at[i].set(v)`; `+=`, `-=`, `*=`, `/=`, `**=` become `.add`,
    `.subtract`, `.multiply`, `.divide`, `.power`; the other augmented operators become
    `x = x.at[i].set(x[i] OP v)` when the index has no calls (it is evaluated twice). Manual, with
    the reason, when the target is not a plain name (`self.x[i] = v`: an attribute of a pytree;
    `x[i][j] = v`: in NumPy a no-op when `x[i]` is a copy), when the assignment has several
    targets, or when the updated `x` is never read afterwards (the update was the function's
    effect on its caller's array: return the new array instead).

    ## Fix safety
    Safe for a plain name with `=`, `+=`, `-=`, `*=`, `**=` and the other operators on a static
    index. Unsafe (the message says which hazard) when another name aliases the array, for an
    augmented update on a traced index (repeated indices accumulate), and for `/=` (on an integer
    array `.divide` returns a float array where NumPy raises). Differential verification runs the
    original eagerly on NumPy arrays (its intended semantics; on JAX arrays it always raises) and
    the rewrite under `jit` on JAX arrays.

    ## References
    - https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html
    - https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#in-place-updates
    """

    name = "in-place-update-on-traced-array"
    codes = (
        Code("JAX403", "in-place-update-on-traced-array", "`x[i] = v` / `x[i] += v` on a traced JAX array", "sometimes"),
    )
    prefilter = _ITEM_STORES  # then could_match: a trace entry
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    verify_reference = "eager"
    examples = (
        Example(
            "@jax.jit\ndef bump(x, i, v):\n    x = x * 2\n    x[i] = v\n    x[0] += 1.0\n    return x\n",
            "@jax.jit\ndef bump(x, i, v):\n    x = x * 2\n    x = x.at[i].set(v)\n    x = x.at[0].add(1.0)\n    return x\n",
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """`x[i] = v` / `x[i] += v` on a name that may be traced, in a function that may run under a trace."""
        return any_site(tree, _may_store_into_traced)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for info in _traced_functions(ctx):
            evidence: ArrayEvidence | None = None
            sites = list(own_sites(info, ctx))
            for node, stmt in sites:
                if isinstance(node, cst.Assign):
                    targets = [t.target for t in node.targets]
                elif isinstance(node, cst.AugAssign):
                    targets = [node.target]
                else:
                    continue
                subs = [t for t in targets if isinstance(t, cst.Subscript)]
                if not subs:
                    continue
                if evidence is None:
                    evidence = ArrayEvidence(info, ctx.names)
                finding = self._check(ctx, info, evidence, node, subs, len(targets))
                if finding is not None:
                    yield finding

    def _check(self, ctx, info, evidence: ArrayEvidence, node, subs, n_targets) -> Finding | None:
        facts = info.facts
        target = subs[0]
        root = target.value
        chain = []
        while isinstance(root, (cst.Subscript, cst.Attribute)):
            chain.append(root)
            root = root.value
        if not isinstance(root, cst.Name):
            return None
        name = root.value
        if not facts.traced(root, node) or not evidence.is_array(name) or facts.is_sequence(root):
            if chain and isinstance(chain[-1], cst.Attribute):
                return None  # `self.x[i] = v`: see below only when the root is a traced array
            return None
        what = f"`{_short(ctx, target)}` assigns into an immutable JAX array"
        if chain:
            fix = ctx.manual(
                "a nested target: write `x = x.at[i, j].set(v)` if `x[i]` is a basic index "
                "(in NumPy `x[i][j] = v` is a no-op when `x[i]` is a copy)"
            )
        elif n_targets != 1 or len(subs) != 1:
            fix = ctx.manual("several targets: write one `x = x.at[...].set(v)` per target")
        else:
            fix = self._fix(ctx, info, evidence, node, target, name)
        return ctx.finding(self, "JAX403", target, _message(what, fix), fix)

    def _fix(self, ctx, info, evidence, node, target: cst.Subscript, name: str) -> Fix:
        facts = info.facts
        if not _read_after(info, node, name):
            return ctx.manual(
                f"`{name}` is not read after the update: the in-place update was the function's effect "
                f"on its caller's array; return the new `{name}` instead"
            )
        hazards: list[str] = []
        if _aliased(info, evidence, name):
            hazards.append(f"another name aliases `{name}` (NumPy would update it too)")
        index_traced = any(
            isinstance(el.slice, cst.Index) and facts.traced(el.slice.value, node) for el in target.slice
        ) or any(
            isinstance(el.slice, cst.Slice)
            and any(p is not None and facts.traced(p, node) for p in (el.slice.lower, el.slice.upper, el.slice.step))
            for el in target.slice
        )
        index_text = _code(ctx, target)[len(name) :]  # `[i, 1:]`, as written
        at = f"{name}.at{index_text}"
        value = _code(ctx, node.value).strip()
        if isinstance(node, cst.Assign):
            call = f"{at}.set({_arg(node.value, value)})"
            verb = "set"
        else:
            op = _code(ctx, node.operator).strip()
            if op in AT_METHODS:
                verb = AT_METHODS[op]
                call = f"{at}.{verb}({_arg(node.value, value)})"
                if index_traced:
                    hazards.append(f"repeated indices in a traced index apply `.{verb}` once each (NumPy: once)")
                if verb == "divide":
                    hazards.append("on an integer array `.divide` returns floats (NumPy raises)")
            elif op in OTHER_OPS:
                if _has_call(target.slice):
                    return ctx.manual(f"`{op}` has no `.at` method and the index calls a function: write it by hand")
                verb = "set"
                call = f"{at}.set({_code(ctx, target).strip()} {OTHER_OPS[op]} {_paren(node.value, value)})"
                if index_traced:
                    hazards.append("repeated indices in a traced index: which update wins is unspecified")
            else:
                return ctx.manual(f"`{op}` on an item has no `.at` form")
        text = f"{name} = {call}"
        new = cst.parse_statement(_fits(ctx, node, text), config=ctx.module.config_for_parsing).body[0]
        new = new.with_changes(semicolon=node.semicolon)
        safety = Safety.UNSAFE if hazards else Safety.SAFE
        title = f"use `{name} = {name}.at[...].{verb}(...)`" + (f" (unsafe: {'; '.join(hazards)})" if hazards else "")
        return ctx.rewrite(title, safety, replace={node: new})


def _arg(node: cst.BaseExpression, text: str) -> str:
    """`text` as a call argument (a bare tuple needs parentheses)."""
    if isinstance(node, cst.Tuple) and not node.lpar:
        return f"({text})"
    return text


def _paren(node: cst.BaseExpression, text: str) -> str:
    if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer, cst.Float)) or node.lpar:
        return text
    return f"({text})"


def _has_call(node) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            nonlocal found
            found = True

    for el in node:
        walk(el, V())
    return found


def _read_after(info: FuncInfo, stmt: cst.CSTNode, name: str) -> bool:
    """Is `name` read after `stmt`: later in the function, anywhere in a loop around it, or by a
    nested function? Reads inside the statement itself (its value, its index) do not count."""
    body = info.node
    reads: list[tuple[tuple[cst.CSTNode, ...], bool]] = []  # (loops around the read, after the statement)
    state = {"inside": False, "after": False, "stmt_loops": ()}

    class V(cst.CSTVisitor):
        def __init__(self) -> None:
            self.loops: list[cst.CSTNode] = []
            self.nested = 0

        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is stmt:
                state["inside"] = True
                state["stmt_loops"] = tuple(self.loops)
            if isinstance(n, (cst.For, cst.While)):
                self.loops.append(n)
            if n is not body and isinstance(n, (cst.FunctionDef, cst.Lambda)):
                self.nested += 1
            if isinstance(n, cst.Name) and n.value == name and not state["inside"]:
                reads.append((tuple(self.loops), state["after"] or self.nested > 0))
            return True

        def on_leave(self, n: cst.CSTNode) -> None:
            if n is stmt:
                state["inside"] = False
                state["after"] = True
            if isinstance(n, (cst.For, cst.While)):
                self.loops.pop()
            if n is not body and isinstance(n, (cst.FunctionDef, cst.Lambda)):
                self.nested -= 1

    walk(body, V())
    stmt_loops = set(state["stmt_loops"])
    for loops_of_read, after in reads:
        if after:
            return True
        if stmt_loops & set(loops_of_read):
            return True  # read in a loop around the update: the next trip reads it
    return False


def _aliased(info: FuncInfo, evidence: ArrayEvidence, name: str) -> bool:
    """Another name shares `name`'s memory in NumPy terms: `y = x`, `x = y`, or `x = m[...]`."""
    for value in evidence.bindings.get(name, ()):
        if isinstance(value, (cst.Name, cst.Subscript)):
            return True
    for other, values in evidence.bindings.items():
        if other != name and any(isinstance(v, cst.Name) and v.value == name for v in values):
            return True
    return False




# ==============================================================================================
# JAX402 numpy-on-traced-value
# ==============================================================================================

# Measured with jax 0.10.2 / numpy 2.4 on CPU (float32 inputs, under `jax.jit`): these NumPy
# functions raise on a tracer (`TracerArrayConversionError`; `np.argsort` a `TypeError`), and the
# `jax.numpy` function of the same name returned the same values and dtype as NumPy on the same
# concrete input.
NP_SAME = frozenset(
    """sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh exp exp2 expm1 log
    log1p log2 log10 sqrt cbrt square abs absolute fabs sign floor ceil rint trunc maximum minimum fmax fmin
    add subtract multiply divide true_divide floor_divide power mod remainder fmod negative positive reciprocal
    isnan isinf isfinite signbit copysign logical_and logical_or logical_not logical_xor greater greater_equal
    less less_equal equal not_equal asarray array concatenate stack hstack vstack dot outer inner tensordot
    einsum tile diag diagonal tril triu sort roll hypot zeros_like ones_like full_like nan_to_num heaviside sinc
    deg2rad rad2deg degrees radians clip ptp nansum nanmean median percentile quantile atleast_1d atleast_2d
    expand_dims ravel isclose allclose cross trace kron convolve diff broadcast_to select piecewise conj angle
    logaddexp logaddexp2 modf divmod average copy linalg.norm where""".split()  # where: the 3-argument form
)
# Raise on a tracer; `jax.numpy` has the name but a known difference (the fix is unsafe).
NP_DIFFERENT = {
    "argsort": "ties may come out in a different order (jax.numpy's sort is stable), and the indices are int32",
    "count_nonzero": "the count is int32, not int64",
    "float_power": "NumPy computes in float64, jax.numpy in float32 unless jax_enable_x64",
    "interp": "NumPy returns float64, jax.numpy float32 unless jax_enable_x64",
    "cov": "NumPy computes in float64, jax.numpy in float32 unless jax_enable_x64",
    "corrcoef": "NumPy computes in float64, jax.numpy in float32 unless jax_enable_x64",
    "bitwise_and": "int64 results become int32 unless jax_enable_x64",
    "left_shift": "int64 results become int32 unless jax_enable_x64",
    "empty_like": "NumPy leaves the values uninitialised, jax.numpy fills zeros",
    "take": "an out-of-bounds index raises in NumPy and is filled in jax.numpy (`mode=`)",
}
# Raise on a tracer, and no drop-in exists: the output shape depends on the data, or jax.numpy has no such name.
NP_MANUAL = {
    "unique": "the output shape depends on the data: `jnp.unique(x, size=n, fill_value=...)` with a static `n`",
    "nonzero": "the output shape depends on the data: `jnp.nonzero(x, size=n)` with a static `n`",
    "argwhere": "the output shape depends on the data: `jnp.argwhere(x, size=n)` with a static `n`",
    "flatnonzero": "the output shape depends on the data: `jnp.flatnonzero(x, size=n)` with a static `n`",
    "bincount": "the output shape depends on the data: `jnp.bincount(x, length=n)` with a static `n`",
    "histogram": "jax.numpy's histogram differs (float counts, bin edges): check `jnp.histogram` by hand",
    "ascontiguousarray": "jax arrays have no memory layout: use `jnp.asarray`",
}
# Measured to work on a tracer (they call the array's own method) or to take no array: never flagged.
NP_WORKS = frozenset(
    """sum mean prod max min amax amin any all std var argmax argmin cumsum cumprod round around reshape
    transpose swapaxes squeeze repeat flip searchsorted moveaxis take_along_axis real imag array_equal""".split()
)


class NumpyOnTracedValueRule(Rule):
    """
    ## What it does
    Finds NumPy functions (`np.sin(x)`, `np.where(c, x, y)`, `np.asarray(x)`, ...) called on a
    traced value inside traced code, and rewrites them to the `jax.numpy` function of the same
    name where that one has the same semantics.

    ## Why is this bad?
    NumPy converts its arguments to NumPy arrays, which a tracer refuses: under `jit` the call
    raises `TracerArrayConversionError` (`np.argsort`: `TypeError`; `np.take`: `NotImplementedError`). The code only ever worked
    eagerly. Measured with jax 0.10.2 and NumPy 2.4 (the table is in this rule's module): of 167
    NumPy functions called on a tracer, 138 raise. Those that work call the array's own method
    (`np.sum`, `np.mean`, `np.max`, `np.reshape`, `np.transpose`, `np.round`, `np.cumsum`, `np.flip`,
    `np.searchsorted`, `np.moveaxis`, ...) and are not flagged. Calls on static values
    (`np.prod(x.shape)`, `np.zeros(3)`, `np.pi`, dtypes such as `np.float32`) are fine.
    `scripts/measure_numpy_on_tracers.py` re-measures the table for the installed versions.

    ## Known problems
    Only NumPy functions measured to fail are flagged, and only the measured ones with the same
    semantics in `jax.numpy` are rewritten safely: a function outside the table is left alone.
    Results follow JAX's dtype rules: where NumPy promotes to 64 bits (integer inputs to float64
    in `np.sqrt` or `np.divide`, an explicit `dtype=np.float64`), `jax.numpy` computes in 32 bits
    unless `jax_enable_x64` is set.

    ## Example
    ```python
    @jax.jit
    def wave(x):
        return np.sin(x) + np.where(x > 0, x, 0.0)
    ```

    ## Use instead
    ```python
    @jax.jit
    def wave(x):
        return jnp.sin(x) + jnp.where(x > 0, x, 0.0)
    ```

    ## Fix
    `np.name` becomes `jnp.name` (spelled as the file imports `jax.numpy`, or adding
    `import jax.numpy as jnp`). Manual for functions whose output shape depends on the data
    (`np.unique`, `np.nonzero`, one-argument `np.where`, `np.bincount`, `np.argwhere`) with the
    `size=` form to use, and for `np.histogram` and `np.ascontiguousarray`.

    ## Fix safety
    Safe for the functions measured to give the same values and dtypes. Unsafe, with the
    difference in the message, for `argsort` (tie order, int32), `count_nonzero`, `bitwise_and`,
    `left_shift` (int32), `float_power`, `interp`, `cov`, `corrcoef` (float32), `empty_like`
    (zeros), `take` (out-of-bounds mode), and for any call with a `dtype=` argument (64-bit types
    become 32-bit). Differential verification runs the original eagerly (`jax.disable_jit()`,
    where NumPy accepts JAX arrays) and the rewrite under `jit`.

    ## References
    - https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError
    - https://docs.jax.dev/en/latest/jax.numpy.html
    """

    name = "numpy-on-traced-value"
    codes = (Code("JAX402", "numpy-on-traced-value", "NumPy function applied to a traced value", "sometimes"),)
    prefilter = _PREFILTER
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    verify_reference = "eager"
    examples = (
        Example(
            "@jax.jit\ndef wave(x):\n    return np.sin(x) + np.where(x > 0, x, 0.0)\n",
            "@jax.jit\ndef wave(x):\n    return jnp.sin(x) + jnp.where(x > 0, x, 0.0)\n",
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A NumPy function of the table given a value that may be traced, in a function that may
        run under a trace."""
        return any_site(tree, _may_call_numpy_on_traced)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for info in _traced_functions(ctx):
            for node, stmt in own_sites(info, ctx):
                if isinstance(node, cst.Call):
                    finding = self._check(ctx, info, node, stmt)
                    if finding is not None:
                        yield finding

    def _check(self, ctx: RuleContext, info: FuncInfo, call: cst.Call, stmt) -> Finding | None:
        qual = ctx.names.qualify(call.func)
        if qual is None or not qual.startswith("numpy."):
            return None
        fname = qual[len("numpy.") :]
        if fname in NP_WORKS or not (fname in NP_SAME or fname in NP_DIFFERENT or fname in NP_MANUAL):
            return None
        if not any(info.facts.traced(a.value, stmt) for a in call.args):
            return None
        positional = [a for a in call.args if a.keyword is None]
        if fname == "where" and (len(positional) != 3 or len(call.args) != 3):
            fix = ctx.manual("one-argument `np.where` is `nonzero`: its shape depends on the data; use `jnp.where(c, size=n)`")
        elif fname in NP_MANUAL:
            fix = ctx.manual(NP_MANUAL[fname])
        else:
            hazard = NP_DIFFERENT.get(fname)
            dtype = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dtype"), None)
            if hazard is None and dtype is not None and not _narrow_dtype(ctx, dtype):
                hazard = "a 64-bit `dtype=` becomes 32-bit unless jax_enable_x64"
            imports: list[ImportRequest] = []
            spelled, reqs = ctx.names.reference(f"jax.numpy.{fname}")
            imports.extend(reqs)
            new_func = cst.parse_expression(spelled, config=ctx.module.config_for_parsing)
            title = f"use `jax.numpy.{fname}`" + (f" (unsafe: {hazard})" if hazard else "")
            fix = ctx.rewrite(
                title, Safety.UNSAFE if hazard else Safety.SAFE, replace={call.func: new_func}, imports=imports
            )
        return ctx.finding(
            self, "JAX402", call, _message(f"NumPy `np.{fname}` on a traced value raises under a trace", fix), fix
        )


_NARROW_DTYPES = frozenset(
    "float32 float16 bfloat16 int32 int16 int8 uint32 uint16 uint8 bool_ bool complex64".split()
)


def _narrow_dtype(ctx: RuleContext, e: cst.BaseExpression) -> bool:
    """A dtype of at most 32 bits, the same in NumPy and jax.numpy (`np.float32`, `"int32"`, `bool`)."""
    if isinstance(e, cst.SimpleString):
        return e.evaluated_value in _NARROW_DTYPES
    qual = ctx.names.qualify(e) or ""
    if qual == "bool":
        return True
    module, _, name = qual.rpartition(".")
    return module in ("numpy", "jax.numpy") and name in _NARROW_DTYPES




# ==============================================================================================
# JAX404 outer-state-mutation-in-traced-code
# ==============================================================================================

CONTAINER_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem", "add", "discard",
     "appendleft", "extendleft", "sort", "reverse"}
)
_CONTAINER_CALLS = frozenset(
    {"list", "dict", "set", "collections.defaultdict", "collections.OrderedDict", "collections.deque",
     "collections.Counter", "defaultdict", "OrderedDict", "deque"}
)


class OuterStateMutationRule(Rule):
    """
    ## What it does
    Finds, inside traced code, Python side effects on state that outlives the call:
    - a mutation of a module-level or enclosing-function container (`results.append(x)`,
      `cache[k] = v`, `seen.add(k)`, `log.extend(...)`), where the container is a list, dict,
      set or deque built by that outer scope;
    - an assignment to a name declared `global` or `nonlocal`;
    - a read of a module-level name that the module reassigns (a second module-level assignment,
      or an assignment in a function that declares it `global`).

    ## Why is this bad?
    A traced function's Python body runs once, when it is traced; the compiled program that runs
    on every later call contains only the array operations. So the append happens once (and
    stores a tracer, which leaks if used later), the global assignment happens once, and a
    global read is frozen at its value at trace time: measured with jax 0.10.2, a jitted
    `x * SCALE` kept returning `2.0 * x` after `SCALE = 3`. Inside `lax.scan`/`fori_loop` bodies the
    body is traced once for all iterations.

    Containers the function builds itself (`out = []; out.append(x); return out`), mutations of
    the function's own parameters or `self`, and module constants assigned once are not flagged.

    ## Known problems
    The analysis is within one module: a global reassigned from another module, or a container
    passed in and mutated through another name, is not seen. Intentional trace-time bookkeeping
    (counting traces in a test) is flagged too: silence it with `# noqa: JAX404`.

    ## Example
    ```python
    SCALE = 2.0
    seen = []


    @jax.jit
    def f(x):
        seen.append(x)
        return x * SCALE


    def set_scale(value):
        global SCALE
        SCALE = value
    ```

    ## Use instead
    ```python
    @jax.jit
    def f(x, scale):
        return x * scale
    ```
    Return what you want to collect (stack it, or carry it through `lax.scan`), and pass values that
    change as arguments (static ones with `static_argnames`).

    ## Fix safety
    No automatic fix (manual): what the side effect was meant to do decides the rewrite.

    ## References
    - https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions
    - https://docs.jax.dev/en/latest/stateful-computations.html
    """

    name = "outer-state-mutation-in-traced-code"
    codes = (
        Code(
            "JAX404",
            "outer-state-mutation-in-traced-code",
            "mutation of outer state (or a read of a reassigned global) inside traced code",
            "never",
        ),
    )
    prefilter = _PREFILTER
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    examples = (
        Example(
            "SCALE = 2.0\nseen = []\n\n\n@jax.jit\ndef f(x):\n    seen.append(x)\n    return x * SCALE\n\n\n"
            "def set_scale(value):\n    global SCALE\n    SCALE = value\n",
            "@jax.jit\ndef f(x, scale):\n    return x * scale\n",
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """In a function that may run under a trace: a `global`/`nonlocal`, a store into or a mutator
        call on a name it does not bind, or a read of a module name the module reassigns."""
        outer: list[_ModuleState] = []  # built on first need: most traced functions never ask

        def state() -> _ModuleState:
            if not outer:
                outer.append(_ModuleState.of_tree(tree, ImportMap.from_ast(tree)))
            return outer[0]

        return any_site(tree, lambda fn, n: _may_touch_outer_state(fn, n, state))

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        outer = ctx.fact(_ModuleState, _ModuleState.of)
        jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
        for info in _traced_functions(ctx):
            yield from self._check_function(ctx, jc, outer, info)

    def _check_function(self, ctx, jc: JitContexts, outer: "_ModuleState", info: FuncInfo) -> Iterator[Finding]:
        facts = info.facts
        sites = list(own_sites(info, ctx))
        declared: dict[str, str] = {}
        for node, _stmt in sites:
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                for item in node.names:
                    declared[item.name.value] = "global" if isinstance(node, cst.Global) else "nonlocal"
        not_reads: set[cst.CSTNode] = set()
        for node, _stmt in sites:
            if isinstance(node, cst.Attribute):
                not_reads.add(node.attr)
            elif isinstance(node, cst.Arg) and node.keyword is not None:
                not_reads.add(node.keyword)
            elif isinstance(node, (cst.Global, cst.Nonlocal)):
                not_reads.update(item.name for item in node.names)
        reported_reads: set[str] = set()
        once = "runs once, when the function is traced, not at every call"

        def outer_container(name: str) -> str | None:
            """Where `name` is a container built outside this function, if it is one."""
            if name in facts.locals and name not in declared:
                return None
            parent = info.parent
            while parent is not None:
                if name in _locals_of(parent):
                    if _same_trace(info, parent) or not _container_local(ctx, parent, name):
                        return None
                    return "the enclosing function"
                parent = parent.parent
            return "the module" if name in outer.containers else None

        for node, stmt in sites:
            # assignments to `global`/`nonlocal` names, and item assignments into outer containers
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    for name_node in _target_name_nodes(target):
                        kind = declared.get(name_node.value)
                        if kind == "nonlocal" and _same_trace(info, _owner(info, name_node.value)):
                            continue
                        if kind is not None:
                            yield self._report(
                                ctx,
                                target,
                                f"assignment to {kind} `{name_node.value}` inside traced code {once}",
                                "return the new value instead (or carry it through the loop)",
                            )
                    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                        where = outer_container(target.value.value)
                        if where is not None:
                            yield self._report(
                                ctx,
                                target,
                                f"`{_short(ctx, target)} = ...` mutates a container of {where}; it {once}",
                                "return the value and store it outside the traced function",
                            )
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                receiver = node.func.value
                if isinstance(receiver, cst.Name) and node.func.attr.value in CONTAINER_MUTATORS:
                    where = outer_container(receiver.value)
                    if where is not None:
                        yield self._report(
                            ctx,
                            node,
                            f"`{receiver.value}.{node.func.attr.value}(...)` mutates a container of {where}; it {once}",
                            "return what you collect (stack it, or carry it through `lax.scan`)",
                        )
            elif isinstance(node, cst.Name) and node not in not_reads:
                name = node.value
                if name in reported_reads or name not in outer.reassigned or name in declared:
                    continue
                if (name in facts.locals and name not in declared) or _bound_in_enclosing(info, name):
                    continue
                reported_reads.add(name)
                yield self._report(
                    ctx,
                    node,
                    f"module-level `{name}` is reassigned elsewhere, but traced code reads it once, at trace time: "
                    "later values are not seen by the compiled function",
                    f"pass `{name}` as an argument (a static one with `static_argnames` if it is a Python value)",
                )

    def _report(self, ctx: RuleContext, node: cst.CSTNode, message: str, advice: str) -> Finding:
        return ctx.finding(self, "JAX404", node, message, ctx.manual(advice))


def _target_name_nodes(target: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _target_name_nodes(el.value)]
    if isinstance(target, cst.StarredElement):
        return _target_name_nodes(target.value)
    return []


_INLINE_REASONS = ("defined inside traced", "called from traced", "read on a traced object")


def _same_trace(info: FuncInfo, owner: FuncInfo | None) -> bool:
    """Does `info` run inline, in the same trace as the traced `owner` of the state it touches, so
    that the state lives only as long as that one trace (a callback or helper called directly, as
    opposed to a `scan`/`fori_loop` body, a `vmap`ped function or a separately jitted one)?"""
    if owner is None or not owner.in_trace:
        return False
    node = info
    while node is not None and node is not owner:
        if not node.reasons or not all(r.startswith(_INLINE_REASONS) for r in node.reasons):
            return False
        node = node.parent
    return node is owner


def _owner(info: FuncInfo, name: str) -> FuncInfo | None:
    parent = info.parent
    while parent is not None:
        if name in _locals_of(parent):
            return parent
        parent = parent.parent
    return None


def _locals_of(info: FuncInfo) -> set[str]:
    if info.facts is not None:
        return info.facts.locals
    return assigned_names(info.node) | set(param_names(info.node.params))


def _bound_in_enclosing(info: FuncInfo, name: str) -> bool:
    parent = info.parent
    while parent is not None:
        if name in _locals_of(parent):
            return True
        parent = parent.parent
    return False


def _is_container_value(ctx: RuleContext, value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return True
    return isinstance(value, cst.Call) and (ctx.names.qualify(value.func) or "") in _CONTAINER_CALLS


def _container_local(ctx: RuleContext, info: FuncInfo, name: str) -> bool:
    """Every binding of `name` in `info`'s own body is a container display or constructor."""
    values: list[cst.BaseExpression | None] = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is not info.node and isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(n, cst.Assign):
                for t in n.targets:
                    if isinstance(t.target, cst.Name) and t.target.value == name:
                        values.append(n.value)
                    elif any(x.value == name for x in _target_name_nodes(t.target)):
                        values.append(None)
            elif isinstance(n, cst.AnnAssign) and isinstance(n.target, cst.Name) and n.target.value == name:
                values.append(n.value)
            return True

    walk(info.node, V())
    return bool(values) and all(v is not None and _is_container_value(ctx, v) for v in values)


class _ModuleState:
    """Module-level names: which hold containers, and which the module reassigns."""

    def __init__(self, containers: set[str], reassigned: set[str]) -> None:
        self.containers = containers
        self.reassigned = reassigned

    @classmethod
    def of(cls, ctx: RuleContext) -> "_ModuleState":
        return cls.of_tree(ctx.tree, ctx.names)

    @classmethod
    def of_tree(cls, tree: ast.Module, names: ImportMap) -> "_ModuleState":
        """From the stdlib AST (a libcst visit of a large module costs about half a second)."""
        values: dict[str, list[ast.AST | None]] = {}
        defined: set[str] = set()  # def, class, import: not data
        global_writes: set[str] = set()

        def top(stmts) -> None:
            for stmt in stmts:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    defined.add(stmt.name)
                elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    defined.update((a.asname or a.name).split(".")[0] for a in stmt.names)
                elif isinstance(stmt, ast.Assign):
                    for t in stmt.targets:
                        bind(t, stmt.value)
                elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                    bind(stmt.target, stmt.value)
                elif isinstance(stmt, ast.AugAssign):
                    bind(stmt.target, None)
                elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                    if isinstance(stmt, ast.For):
                        bind(stmt.target, None)
                    for block in ("body", "orelse", "finalbody"):
                        top(getattr(stmt, block, ()) or ())
                    for handler in getattr(stmt, "handlers", ()) or ():
                        top(handler.body)

        def bind(target: ast.AST, value) -> None:
            if isinstance(target, ast.Name):
                values.setdefault(target.id, []).append(value)
            elif isinstance(target, (ast.Tuple, ast.List)):
                for el in target.elts:
                    bind(el, None)
            elif isinstance(target, ast.Starred):
                bind(target.value, None)

        top(tree.body)
        for node in ast_statements(tree.body):  # defs are statements: no need to walk expressions
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stmts = list(ast_statements(node.body))  # `global` and assignments are statements
                declared = {n for stmt in stmts if isinstance(stmt, ast.Global) for n in stmt.names}
                if declared:
                    for stmt in stmts:
                        targets = (
                            stmt.targets if isinstance(stmt, ast.Assign)
                            else [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []
                        )
                        for t in targets:
                            global_writes.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name) and n.id in declared)
        containers = {
            name
            for name, vals in values.items()
            if name not in defined and all(v is not None and _is_container_ast(v) for v in vals)
        }
        reassigned = {name for name, vals in values.items() if len(vals) > 1 and name not in defined}
        reassigned |= global_writes
        reassigned -= set(names.bindings)
        return cls(containers, reassigned)


def _is_container_ast(value: ast.AST) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in {"list", "dict", "set", "defaultdict", "OrderedDict", "deque", "Counter"}
    return False


# `<Name>Command` for each rule: libcst codemod commands, made on first access
__getattr__ = commands_for(PrintInTracedCodeRule, InPlaceUpdateRule, NumpyOnTracedValueRule, OuterStateMutationRule)
