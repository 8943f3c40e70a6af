"""JAX402 `numpy-on-traced-value`: a NumPy function called on a traced value raises under a
trace; the `jax.numpy` function of the same name is its replacement where the measured table says so."""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from codemods.trace_time_semantics import preview
from codemods.trace_time_semantics.common import (
    TRANSFORM_TOKENS,
    certainly_traced,
    message,
    traced_functions,
)
from codemods.trace_time_semantics.numpy_table import (
    NP_DIFFERENT,
    NP_MANUAL,
    raises_on_tracer,
)
from jaxfix.analysis import astscan
from jaxfix.analysis.cstparse import parsing_config
from jaxfix.analysis.guards import guarded_in, never_traced_at
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.names import dotted_name
from jaxfix.analysis.pytrees import ast_statements
from jaxfix.analysis.scopes import names_read
from jaxfix.analysis.screen_function import ScreenFunction, target_names
from jaxfix.analysis.static_values import nested_field
from jaxfix.analysis.trace_screen import (
    MAY_NAME_A_TRANSFORM,
    NO_ENTRIES,
    ScreenEntries,
    any_site,
)
from jaxfix.analysis.trace_sites import ArrayEvidence, own_sites
from jaxfix.model import Finding, ImportRequest, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid


class NumpyOnTracedValueRule(Rule):
    """
    ## What it does
    Finds NumPy functions (`np.sin(x)`, `np.where(c, x, y)`, `np.asarray(x)`, ...) called on a
    traced value inside traced code, and rewrites them to the `jax.numpy` function of the same
    name where that one has the same semantics. Also a NumPy array indexed with a traced value
    (`np.arange(n)[x]`, a module-level `TABLE = np.array(...)` read as `TABLE[i]`, a local NumPy
    array): NumPy converts the index, which a tracer refuses.

    ## Why is this bad?
    NumPy converts its arguments to NumPy arrays, which a tracer refuses: under `jit` the call
    raises `TracerArrayConversionError` (`np.argsort`: `TypeError`; `np.take`: `NotImplementedError`). The code only ever worked
    eagerly. Measured with jax 0.10.2 and NumPy 2.4 (table: `numpy_table.py`): of 167
    NumPy functions called on a tracer, 138 raise. Those that work call the array's own method
    (`np.sum`, `np.mean`, `np.max`, `np.reshape`, `np.transpose`, `np.round`, `np.cumsum`, `np.flip`,
    `np.searchsorted`, `np.moveaxis`, ...) and are not flagged. Calls on static values
    (`np.prod(x.shape)`, `np.zeros(3)`, `np.pi`, dtypes such as `np.float32`) are fine.
    `scripts/measure_numpy_on_tracers.py` re-measures the table for the installed versions.

    ## Known problems
    A field of a field of a parameter (`np.asarray(u.domain.dx)`) whose class the file does not
    show is not taken as traced: another package's pytree may keep it static (jaxdf's
    `Domain.dx`, an `eqx.field(static=True)`). Only NumPy functions measured to fail are flagged, and only the measured ones with the same
    semantics in `jax.numpy` are rewritten safely: a function outside the table is left alone.
    The rewrite is unsafe when the argument was made by a call outside JAX, NumPy and this module
    (`x = xarray_jax.Variable(dims, inputs)`): such an object may implement `__array_ufunc__`,
    keeping NumPy's call in JAX, and `jnp` rejects it.
    Results follow JAX's dtype rules: where NumPy promotes to 64 bits (integer inputs to float64
    in `np.sqrt` or `np.divide`, an explicit `dtype=np.float64`), `jax.numpy` computes in 32 bits
    unless `jax_enable_x64` is set. A module-level NumPy table is reported indexed only when the
    module binds its name once (any form: `A, B = (jnp.array(x) for x in (A, B))` rebinds both,
    and so does an assignment in a module-level `if` or loop): which value a trace reads is then
    known.

    ## Preview
    The whole rule is shown only with `--preview`. On code nobody had prepared (the fifteen blind
    pools' first-contact labels) it was 1 real of 48, wrong on nine pools: code that runs cannot
    reach this crash, so where the rule sees it there, the analysis has usually missed why the value
    is concrete (a static field, an argument `vmap` does not map, a host-side collator, a guarded
    check, an `__array_ufunc__` wrapper, a `jnp` that is NumPy only where JAX is missing). Its surest
    path, a bare parameter of a function that a transform of its own module traces (`@jax.jit def
    f(x): np.sin(x)`), was 1 real, 1 debatable and 12 wrong. `codemods/trace_time_semantics/preview.py`.

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
    `size=` form to use, and for `np.histogram` and `np.ascontiguousarray`. An indexed
    `np.<maker>(...)[i]` becomes `jnp.<maker>(...)[i]` (unsafe: 64-bit values become 32-bit); an
    indexed NumPy array bound to a name is manual (make it a JAX array).

    ## Fix safety
    Safe for the functions measured to give the same values and dtypes. Unsafe, with the
    difference in the message, for `argsort` (tie order, int32), `count_nonzero`, `bitwise_and`,
    `left_shift` (int32), `float_power`, `interp`, `cov`, `corrcoef` (float32), `empty_like`
    (zeros), `take` (out-of-bounds mode), and for any call with a `dtype=` argument (64-bit types
    become 32-bit), and for any call in a function traced only because another module calls it
    (no chain of reasons reaches a transform of its own module: the call graph's reading of that
    call, e.g. a `vmap` with `in_axes=None`, may be wrong, and where the value is concrete NumPy
    works today). Differential verification runs the original eagerly (`jax.disable_jit()`,
    where NumPy accepts JAX arrays) and the rewrite under `jit`.

    ## References
    - https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerArrayConversionError
    - https://docs.jax.dev/en/latest/jax.numpy.html
    """

    name = "numpy-on-traced-value"
    codes = (Code("JAX402", "numpy-on-traced-value", "NumPy function applied to a traced value", "sometimes"),)
    preview_only = preview.whole_rule(codes)
    prefilter = TRANSFORM_TOKENS
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    follows_calls = True  # also in a file whose functions traced code elsewhere calls
    verify_reference = "eager"
    valid = (
        Valid(
            """
            import numpy as np
            from jax import jit


            @jit
            def normalise(x):
                return x / np.sqrt(np.prod(x.shape))  # NumPy on a static shape
            """
        ),
        Valid(
            """
            import jax
            import numpy as np


            @jax.jit
            def total(x):
                return np.sum(x) + np.max(x)  # these call the array's own methods: they work on a tracer
            """
        ),
        Valid(
            """
            import numpy as np


            def wave(x):
                return np.sin(x)  # not traced
            """
        ),
        Valid(
            """
            import jax
            import numpy as np


            @jax.jit
            def rank(x):
                shape = x.shape if hasattr(x, "shape") else np.asarray(x).shape  # a tracer has a shape
                return len(shape)
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp
            import numpy as np


            @jax.jit
            def wave(x):
                return np.sin(x) + np.where(x > 0, x, 0.0)
            """,
            fixed="""
            import jax
            import jax.numpy as jnp


            @jax.jit
            def wave(x):
                return jnp.sin(x) + jnp.where(x > 0, x, 0.0)
            """,
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp
            import numpy as np


            @jax.jit
            def order(x):
                return np.argsort(x)
            """,
            fixed="""
            import jax
            import jax.numpy as jnp


            @jax.jit
            def order(x):
                return jnp.argsort(x)
            """,
        ),
        Invalid(
            """
            import jax
            import numpy as np


            @jax.jit
            def distinct(x):
                return np.unique(x)
            """
        ),
    )

    def could_match(self, tree: ast.Module, entries: ScreenEntries = NO_ENTRIES) -> bool:
        """A NumPy function of the table given a value that may be traced, in a function that may
        run under a trace."""
        arrays: frozenset[str] | None = None  # `_numpy_array_names`, once a subscript asks

        def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
            nonlocal arrays
            if type(n) is ast.Subscript and type(n.value) is ast.Name:
                if arrays is None:
                    arrays = _numpy_array_names(tree, fn.screen.names)
                if n.value.id not in arrays:
                    return False
            return _may_call_numpy_on_traced(fn, n)

        return any_site(tree, may_flag, entries)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        module_arrays: set[str] | None = None
        for info in traced_functions(ctx):
            sites = list(own_sites(info, ctx))
            local_arrays: set[str] | None = None
            for node, stmt in sites:
                if isinstance(node, cst.Call):
                    finding = self._check(ctx, info, node, stmt)
                    if finding is not None:
                        yield finding
                elif isinstance(node, cst.Subscript) and _index_traced(info, node, stmt):
                    if module_arrays is None:
                        module_arrays = _module_numpy_arrays(ctx)
                    if local_arrays is None:
                        local_arrays = _local_numpy_arrays(ctx, sites)
                    found = self._check_index(ctx, info, node, module_arrays, local_arrays)
                    finding = preview.numpy_finding(found)
                    if finding is not None:
                        yield finding

    def _check_index(self, ctx, info: FuncInfo, sub: cst.Subscript, module_arrays, local_arrays) -> Finding | None:
        """`np.arange(n)[i]` or `TABLE[i]` (a NumPy array) with a traced index: NumPy converts the
        index, which a tracer refuses (jax issue 553)."""
        value = sub.value
        if isinstance(value, cst.Call):
            qual = ctx.names.qualify_unambiguous(value.func) or ""
            if not qual.startswith("numpy.") or qual[len("numpy.") :] not in NUMPY_ARRAY_MAKERS:
                return None
            fname = qual[len("numpy.") :]
            imports: list[ImportRequest] = []
            spelled, reqs = ctx.names.reference(f"jax.numpy.{fname}")
            imports.extend(reqs)
            new_func = cst.parse_expression(spelled, config=parsing_config(ctx.module))
            fix = ctx.rewrite(
                f"make the array with `jax.numpy.{fname}` (unsafe: 64-bit values become 32-bit unless jax_enable_x64)",
                Safety.UNSAFE,
                replace={value.func: new_func},
                imports=imports,
            )
            what = f"a NumPy array (`np.{fname}(...)`) indexed with a traced value raises under a trace"
        elif isinstance(value, cst.Name) and (
            (value.value in local_arrays) or (value.value in module_arrays and value.value not in info.facts.locals)
        ):
            fix = ctx.manual(
                f"make `{value.value}` a JAX array (`jnp.asarray(...)`), which a traced index can index, or index it with a static value"
            )
            what = f"NumPy array `{value.value}` indexed with a traced value raises under a trace"
        else:
            return None
        return ctx.finding(self, "JAX402", sub, message(what + info.traced_because(), fix), fix)

    def _check(self, ctx: RuleContext, info: FuncInfo, call: cst.Call, stmt) -> Finding | None:
        qual = ctx.names.qualify_unambiguous(call.func)  # `np` imported as numpy and as jax.numpy: not known
        if qual is None or not qual.startswith("numpy."):
            return None
        fname = qual[len("numpy.") :]
        if not raises_on_tracer(fname):
            return None
        shown = frozenset(info.facts.param_fields)
        traced_args = [
            a.value for a in call.args if info.facts.traced(a.value, stmt) and not nested_field(a.value, shown)
        ]
        if not traced_args or all(
            isinstance(a, cst.Name) and never_traced_at(call, a.value, ctx.parent, ctx.names.qualify) for a in traced_args
        ):
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
            if hazard is None and not certainly_traced(ctx.fact(JitContexts, jit_contexts), info):
                # where the value is in fact concrete, NumPy works today and `jnp` may not (objects, 64 bits)
                hazard = "traced only through a call in another module; where the value is concrete, NumPy works today"
            if hazard is None and (made := _made_by_other_code(ctx, info, traced_args)) is not None:
                hazard = (
                    f"the argument is made by `{made}(...)`, which may return an object wrapping the array that "
                    "implements `__array_ufunc__` (NumPy's call then stays in JAX) and which `jnp` rejects"
                )
            imports: list[ImportRequest] = []
            spelled, reqs = ctx.names.reference(f"jax.numpy.{fname}")
            imports.extend(reqs)
            new_func = cst.parse_expression(spelled, config=parsing_config(ctx.module))
            title = f"use `jax.numpy.{fname}`" + (f" (unsafe: {hazard})" if hazard else "")
            fix = ctx.rewrite(
                title, Safety.UNSAFE if hazard else Safety.SAFE, replace={call.func: new_func}, imports=imports
            )
        found = ctx.finding(
            self, "JAX402", call, message(f"NumPy `np.{fname}` on a traced value raises under a trace{info.traced_because()}", fix), fix
        )
        return preview.numpy_finding(found)


def _made_by_other_code(ctx: RuleContext, info: FuncInfo, args: list[cst.BaseExpression]) -> str | None:
    """The callee, as written, of a call outside JAX, NumPy and this module whose result a name
    in `args` is bound to in the function: what it returns may be an object wrapping the traced
    array. google-deepmind/graphcast's `xarray_jax.Variable(dims, inputs)` under `jax.jit` sends
    `np.abs` to `jnp` through `__array_ufunc__`; the `jnp` rewrite broke its tests
    (fgiral000/gencast-flax-nnx@297e7c56: common/xarray_jax_test.py, 3 of 28 failed after a safe fix)."""
    bindings = ArrayEvidence(info, ctx.names).bindings
    for arg in args:
        for name in names_read(arg):
            for value in bindings.get(name, ()):
                value = value[1] if isinstance(value, tuple) else value
                if not isinstance(value, cst.Call) or isinstance(value.func, cst.Call):
                    continue
                qual = ctx.names.qualify(value.func) or ""
                if qual.startswith(("jax.", "numpy.", "math.", "builtins.", "functools.")):
                    continue
                if isinstance(value.func, cst.Name) and not qual:
                    continue  # a def of this module or a local: the analysis follows it
                if isinstance(value.func, cst.Attribute) and not qual:
                    continue  # a method (`x.astype(...)`, `self.layer(x)`)
                return dotted_name(value.func) or qual
    return None


# NumPy functions that make a new ndarray (what a subscript of their result indexes)
NUMPY_ARRAY_MAKERS = frozenset(
    {"array", "asarray", "arange", "zeros", "ones", "full", "empty", "eye", "identity", "linspace", "logspace",
     "geomspace", "tri", "diag", "stack", "concatenate", "cumsum", "repeat", "tile", "meshgrid", "indices"}
)


def _index_traced(info: FuncInfo, sub: cst.Subscript, stmt) -> bool:
    """Some index or slice bound of `sub` may hold a traced value."""
    traced = info.facts.traced
    for el in sub.slice:
        part = el.slice
        if isinstance(part, cst.Index) and traced(part.value, stmt):
            return True
        if isinstance(part, cst.Slice) and any(b is not None and traced(b, stmt) for b in (part.lower, part.upper, part.step)):
            return True
    return False


def _is_numpy_array_call(ctx: RuleContext, value: cst.BaseExpression) -> bool:
    if not isinstance(value, cst.Call):
        return False
    qual = ctx.names.qualify(value.func) or ""
    return qual.startswith("numpy.") and qual[len("numpy.") :] in NUMPY_ARRAY_MAKERS


def _module_numpy_arrays(ctx: RuleContext) -> set[str]:
    """Module-level names bound once, to a NumPy array (`TABLE = np.array([...])`), never declared
    global in a function. Every module-level binding counts (`_module_binding_counts`): pgx's
    chess.py builds `CAN_MOVE = np.zeros(...)` and then rebinds it, with its other tables, to
    `jnp.array`s in one tuple assignment, before any function runs."""
    arrays: set[str] = set()
    for stmt in ctx.module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None and _is_numpy_array_call(ctx, small.value):
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                arrays.update(t.value for t in targets if isinstance(t, cst.Name))
    if not arrays:
        return arrays
    counts = _module_binding_counts(ctx.tree.body)
    declared = {n for n, _ in ctx.names.bindings.items()}
    return {n for n in arrays if counts.get(n) == 1 and n not in declared and n not in _global_declared(ctx)}


def _module_binding_counts(stmts: list[ast.stmt], counts: dict[str, int] | None = None) -> dict[str, int]:
    """How many statements in the module's own namespace bind each name: assignments of any target
    form (`a, b = ...`), augmented ones, loop and `with` targets, defs, classes and imports, in
    the module's body and in the blocks of its `if`/`for`/`while`/`with`/`try` statements."""
    counts = {} if counts is None else counts

    def bind(target: ast.AST | None) -> None:
        for name in target_names(target) if target is not None else ():
            counts[name] = counts.get(name, 0) + 1

    for stmt in stmts:
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                bind(t)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            bind(stmt.target)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            bind(stmt.target)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                bind(item.optional_vars)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[stmt.name] = counts.get(stmt.name, 0) + 1
            continue
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for a in stmt.names:
                name = (a.asname or a.name).split(".")[0]
                counts[name] = counts.get(name, 0) + 1
        for block in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, block, None)
            if isinstance(inner, list):
                _module_binding_counts(inner, counts)
        for handler in getattr(stmt, "handlers", ()) or ():
            _module_binding_counts(handler.body, counts)
    return counts


def _global_declared(ctx: RuleContext) -> set[str]:
    """Names some function declares `global` (on the stdlib AST: `global` is a statement)."""
    return {name for node in ast_statements(ctx.tree.body) if isinstance(node, ast.Global) for name in node.names}


def _local_numpy_arrays(ctx: RuleContext, sites) -> set[str]:
    """Names the traced function binds only to NumPy arrays (every binding a `np.<maker>(...)`)."""
    kinds: dict[str, bool] = {}
    for node, _stmt in sites:
        targets: list = []
        if isinstance(node, cst.Assign):
            targets = [(t.target, node.value) for t in node.targets]
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            targets = [(node.target, None if isinstance(node, cst.AugAssign) else node.value)]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [(node.target, None)]
        for target, value in targets:
            if isinstance(target, cst.Name):
                ok = value is not None and _is_numpy_array_call(ctx, value)
                kinds[target.value] = kinds.get(target.value, True) and ok
            else:
                for name in _names_in(target):
                    kinds[name] = False
    return {name for name, only_numpy in kinds.items() if only_numpy}


def _names_in(target: cst.CSTNode) -> list[str]:
    found: list[str] = []

    class V(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.append(node.value)

    target.visit(V())
    return found


# -- the screen: a NumPy function of the table given a value that may be traced, on the stdlib AST
def _numpy_maker(names, value: ast.AST) -> bool:
    """`_is_numpy_array_call` on the stdlib AST: `np.<maker>(...)` of `NUMPY_ARRAY_MAKERS`."""
    if type(value) is not ast.Call:
        return False
    qual = names.qualify_ast(value.func) or ""
    return qual.startswith("numpy.") and qual[len("numpy.") :] in NUMPY_ARRAY_MAKERS


def _numpy_array_names(tree: ast.Module, names) -> frozenset[str]:
    """Names some assignment anywhere in the module binds to `np.<maker>(...)` (a `Name` target of
    an `=` or annotated assignment): every name `_check_index` reports indexed is one, since
    `_module_numpy_arrays` and `_local_numpy_arrays` both need such a binding."""
    found: set[str] = set()
    for node in astscan.nodes(tree):
        kind = type(node)
        if (kind is ast.Assign or kind is ast.AnnAssign) and node.value is not None and _numpy_maker(names, node.value):
            targets = node.targets if kind is ast.Assign else [node.target]
            found.update(t.id for t in targets if type(t) is ast.Name)
    return frozenset(found)


def _may_call_numpy_on_traced(fn: ScreenFunction, n: ast.AST) -> bool:
    if type(n) is ast.Subscript:  # `np.arange(n)[i]`, `TABLE[i]`: a NumPy array may be indexed by a tracer
        if not (type(n.value) is ast.Name or type(n.value) is ast.Call):
            return False
        if type(n.value) is ast.Call and not _numpy_maker(fn.screen.names, n.value):
            return False
        if type(n.value) is ast.Name and "numpy" not in fn.screen.names.bindings.values():
            return False
        parts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
        return any(
            fn.traced(p.lower) or fn.traced(p.upper) or fn.traced(p.step) if isinstance(p, ast.Slice) else fn.traced(p)
            for p in parts
        )
    if type(n) is not ast.Call:
        return False
    qual = fn.screen.names.qualify_ast(n.func) or ""
    if not qual.startswith("numpy."):
        return False
    fname = qual[len("numpy.") :]
    if not raises_on_tracer(fname):
        return False
    traced = [a for a in [*n.args, *(k.value for k in n.keywords)] if fn.traced(a)]
    if not traced:
        return False
    # `a.shape if hasattr(a, "shape") else np.asarray(a).shape`: `a` holds no tracer there (`check`)
    guarded = _guarded(fn).get(id(n), ())
    return not all(type(a) is ast.Name and a.id in guarded for a in traced)


# screen function -> `guards.guarded_in` of it (its nodes and its module's names: one screen's)
_GUARDED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _guarded(fn: ScreenFunction) -> dict[int, set[str]]:
    found = _GUARDED.get(fn)
    if found is None:
        found = _GUARDED[fn] = guarded_in(fn.own, fn.screen.names.qualify_ast)
    return found


# -- the decision -------------------------------------------------------------------------------
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


# `NumpyOnTracedValueCommand`: the libcst codemod command, made on first access
__getattr__ = commands_for(NumpyOnTracedValueRule)
