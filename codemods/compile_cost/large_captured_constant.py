"""JAX503 `large-captured-constant`: a jitted function reading a large module-level array, which is
embedded in the compiled program as a constant."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from codemods.compile_cost.nodes import all_nodes, binds_locally
from jaxfix.analysis import astscan
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.shapes import (
    CREATOR_IDENTS,
    array_size,
    is_numpy_array,
    module_binding_counts,
    module_int_constants,
)
from jaxfix.analysis.trace_screen import (
    MAY_NAME_A_TRANSFORM,
    NO_ENTRIES,
    ScreenEntries,
)
from jaxfix.analysis.walk import walk
from jaxfix.model import Finding, Fix, Safety
from jaxfix.rulebase import Code, Invalid, Option, Rule, RuleContext, Valid

# names that start a trace (jit, lax bodies, transforms): a file without any has nothing traced
_TRACING_IDENTS = frozenset(
    {"jit", "filter_jit", "pjit", "pmap", "vmap", "filter_vmap", "scan", "fori_loop", "while_loop", "cond",
     "switch", "map", "associative_scan", "checkpoint", "remat", "grad", "value_and_grad"}
)
# Wrappers under which the traced function's arrays are plain jit arguments (not mapped, not sharded).
_ARG_SAFE_JITS = frozenset({"jax.jit", "equinox.filter_jit"})
_LAYOUT_OPTIONS = frozenset({"in_shardings", "out_shardings", "in_axes", "donate_argnums", "donate_argnames"})


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

    walk(node.body, V())  # a lambda's body is its expression, a def's its suite
    return out


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
    ```

    ## Use instead
    ```python
    @jax.jit
    def predict(x, W):
        return x @ W

    y = predict(x, W)
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
    follows_calls = True  # also in a file whose functions traced code elsewhere calls
    options = (
        Option("min-constant-elements", 1_000_000, "The smallest module-level array (in elements) that is reported."),
    )
    valid = (
        Valid(  # near miss: the array is built inside the jitted function, not captured
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def predict(x):
                W = jnp.ones((1000, 1000))
                return x @ W
            """
        ),
        Valid(  # a large module-level array read only by eager code
            """
            import jax.numpy as jnp
            import numpy as np

            TABLE = np.random.randn(2048, 1024)


            def lookup(ids):
                return jnp.asarray(TABLE[ids])
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp

            N = 1000
            W = jnp.ones((N, N))


            @jax.jit
            def predict(x):
                return x @ W


            y = predict(jnp.ones((8, N)))
            """,
            fixed="""
            import jax
            import jax.numpy as jnp

            N = 1000
            W = jnp.ones((N, N))


            @jax.jit
            def predict(x, W):
                return x @ W


            y = predict(jnp.ones((8, N)), W)
            """,
        ),
        Invalid(  # no automatic fix: the reader is a method
            """
            import jax
            import numpy as np

            TABLE = np.random.randn(2048, 1024)


            class Model:
                @jax.jit
                def embed(self, ids):
                    return TABLE[ids]
            """
        ),
    )

    def could_match(self, tree: ast.Module, entries: ScreenEntries = NO_ENTRIES) -> bool:
        """A module-level assignment to one name of an expression calling an array creator
        (`ones`, `randn`, `normal`, ...), a function that reads that name, and a transform
        (`jit`, a `lax` loop...) mentioned somewhere, or `entries` (functions traced code of
        other modules calls, traced without a transform here)."""
        candidates: set[str] = set()
        for stmt in tree.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, (ast.Call, ast.Attribute, ast.BinOp, ast.UnaryOp))
            ):
                for sub in astscan.nodes(stmt.value):
                    if isinstance(sub, ast.Call):
                        func = sub.func
                        ident = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
                        if ident in CREATOR_IDENTS:
                            candidates.add(stmt.targets[0].id)
                            break
        if not candidates:
            return False
        # the module's nodes, listed once for the screens (`astscan.nodes`); the cheap questions first
        nodes = astscan.nodes(tree)
        Attribute, Name, tracing = ast.Attribute, ast.Name, _TRACING_IDENTS
        if not entries and not any(
            (type(n) is Attribute and n.attr in tracing) or (type(n) is Name and n.id in tracing) for n in nodes
        ):
            return False  # no transform mentioned (the functions entries name are traced without one)
        if not any(type(n) is Name and n.id in candidates for n in nodes):
            return False  # no candidate read anywhere, so in no function
        return any(
            (type(n) is ast.FunctionDef or type(n) is ast.Lambda)
            and any(type(sub) is Name and sub.id in candidates for sub in astscan.nodes(n))
            for n in nodes
        )

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
                if const not in large or const in seen or binds_locally(info, const):
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
        counts = module_binding_counts(module)
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
                out[name] = (found[0], found[1], is_numpy_array(small.value, ctx.names, consts))
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
            if binds_locally(site.caller, const):
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
    return any(n is inner for n in all_nodes(outer, type(inner)))


# `LargeConstantCommand`: the rule as a libcst codemod, made on first access
__getattr__ = commands_for(LargeConstantRule)
