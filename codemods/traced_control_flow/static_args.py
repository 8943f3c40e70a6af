"""The `static_argnames` fix shared by the traced-control-flow rules.

When a traced condition, loop bound or shape depends only on parameters that every call site in
the module passes as hashable literals (a config flag, a mode string, a size), the cheapest fix
keeps the Python code and makes those parameters static arguments of the function's `jax.jit`:
each distinct value then compiles once. JAX301, JAX302, JAX303 and JAX307 try it first.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis import render
from jaxfix.analysis.body_facts import names_read
from jaxfix.analysis.defaults import is_hashable_literal
from jaxfix.analysis.traced import analyse_function
from jaxfix.model import Fix, ImportRequest, Safety
from jaxfix.rewriting.functions import FunctionRewrite


def static_argnames_fix(fn: FunctionRewrite, exprs: list[cst.BaseExpression], site: cst.CSTNode) -> Fix | None:
    """Make the parameters that `exprs` depend on static arguments of the function's one `jax.jit`, when
    every call site in the module passes them as hashable literals and that makes every one of
    `exprs` (read at `site`) static; None otherwise. Safe only for parameters annotated
    `int`/`bool`/`str`."""
    info = fn.info
    if not isinstance(info.node, cst.FunctionDef) or len(info.jit_sites) != 1:
        return None
    jsite = info.jit_sites[0]
    if jsite.wrapper != "jax.jit" or not jsite.options_known:
        return None
    params = [p for p in info.params if p in fn.facts.entry_traced and any(p in names_read(e) for e in exprs)]
    if not params:
        return None
    sites = fn.jc.call_sites_of(info)
    if not sites:
        return None
    for p in params:
        for cs in sites:
            bound = fn.jc.bind_args(info, cs.call)
            if bound is None:
                return None
            arg = bound.get(p)
            if arg is None:
                if p not in info.defaults or not is_hashable_literal(info.defaults[p]):
                    return None
            elif not is_hashable_literal(arg):
                return None
    # with those parameters static, every condition at the site must become static
    entry = set(fn.facts.entry_traced) - set(params)
    again = analyse_function(
        info.node,
        fn.names,
        entry,
        fn.facts.outer_traced,
        fn.facts.receiver,
        fn.facts.static_fields,
        static_attrs=fn.facts.static_attrs,
        calls=fn.facts.calls,
    )
    stmt = site if site in again.before else None
    env = again.env_before(stmt) if stmt is not None else frozenset(again.all_traced)
    if any(again.expr_traced(e, env) for e in exprs):
        return None
    imports: list[ImportRequest] = []
    replace = _static_edit(fn, jsite, params, imports)
    if replace is None:
        return None
    annotated = all(info.annotations.get(p) in ("int", "bool", "str") for p in params)
    names = ", ".join(f"`{p}`" for p in params)
    title = f"make {names} a static argument of `jax.jit`"
    if annotated:
        return fn.ctx.rewrite(title, Safety.SAFE, replace=replace, imports=imports)
    return fn.ctx.rewrite(
        f"{title} (unsafe: a caller passing an array for {names} would fail; each distinct value compiles once)",
        Safety.UNSAFE,
        replace=replace,
        imports=imports,
    )


def _static_edit(fn: FunctionRewrite, jsite, params: list[str], imports) -> dict | None:
    """Replacements that make `params` static at `jsite`, keeping its other options.

    jax infers names from `static_argnums` (and numbers from `static_argnames`) only when
    one of the two is given; with both, each lists exactly what is static. So: a site with
    only `static_argnums` gets the positions added there; otherwise names are added to
    `static_argnames` (and, when both exist, positions to `static_argnums` as well).
    """
    info = fn.info
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
        replace[_kwarg_arg(call, "static_argnums").value] = fn.parse_expr(nums_text)
        if not has_names:
            return replace
    existing = list(jsite.static_argnames)
    new_names = existing + [p for p in params if p not in existing]
    tuple_text = "(" + ", ".join(fn.ctx.literal(p) for p in new_names) + ("," if len(new_names) == 1 else "") + ")"
    if call is None:
        # bare decorator `@jax.jit` -> `@partial(jax.jit, static_argnames=(...))`
        deco = jsite.node
        partial = fn.ref("functools.partial", imports)
        jit_text = render.code_of(fn.ctx.module, deco.decorator)
        return {deco.decorator: fn.parse_expr(f"{partial}({jit_text}, static_argnames={tuple_text})")}
    value = fn.parse_expr(tuple_text)
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
