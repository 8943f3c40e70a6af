"""The hoist planner shared by JAX201-JAX203: the fix for each site (`sites.find_sites`).

`hoists(ctx)` is computed once per file (`ctx.fact`) and read by the three rules, each keeping
the sites of its own code. A site's `Hoist` holds its fix: the transformed function moved to
the nearest scope where it is invariant (module level, or before the outermost loop for a
bound method), the values it captured passed as arguments (those used as shapes, loop bounds
or branch flags as `static_argnames`), or a `manual` fix saying why that cannot be done
automatically. All sites of a file are planned together, in source order, because they share
the pool of new names (`_body_jit`, `_body_jit_2`, ...).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

from codemods.jit_placement.sites import (
    MODULE_FUNCTION,
    NEW_OBJECT,
    WRAPPING,
    Site,
    find_sites,
    module_class,
    sibling_of,
    single_module_binding,
)
from jaxfix.analysis.codegen import black_format
from jaxfix.analysis.pytrees import pytree_classes
from jaxfix.analysis.scopes import (
    COMPREHENSIONS,
    ScopeIndex,
    name_uses,
    names_read,
    param_names,
)
from jaxfix.analysis.static_positions import (
    binding_kind,
    combine,
    expression_kind,
    param_kind,
    static_uses,
    uses_of,
)
from jaxfix.analysis.walk import walk
from jaxfix.model import Fix, ImportRequest, Safety
from jaxfix.rulebase import RuleContext


@dataclass(frozen=True)
class Hoist:
    """A site and its planned fix: `safe`, `unsafe` or `manual`; `note` says what makes it unsafe
    or manual, or is empty."""

    site: Site
    fix: Fix
    note: str

    def message(self, text: str) -> str:
        """A finding's message: the rule's `text`, then the note in parentheses."""
        return f"{text} ({self.note})" if self.note else text


def hoists(ctx: RuleContext) -> tuple[Hoist, ...]:
    """Every site of the file with its planned fix, in source order; computed once per file."""
    return ctx.fact(hoists, _plan_file)


def _plan_file(ctx: RuleContext) -> tuple[Hoist, ...]:
    idx = ctx.fact(ScopeIndex, ScopeIndex.of)
    planner = _Planner(ctx, idx)
    return tuple(planner.hoist(site) for site in find_sites(ctx, idx))


class _Planner:
    def __init__(self, ctx: RuleContext, idx: ScopeIndex) -> None:
        self.ctx = ctx
        self.idx = idx
        self.qualify = ctx.names.qualify
        self._taken: set[str] | None = None  # names a new binding must avoid; only fixes need them
        self.hoisted_defs: set[str] = set()
        self.imports: list[ImportRequest] = []

    @property
    def taken(self) -> set[str]:
        if self._taken is None:
            self._taken = set(self.ctx.names.used_names)
        return self._taken

    # -- fixes ----------------------------------------------------------------------
    def hoist(self, site: Site) -> Hoist:
        """The site's fix, or a manual one saying why it must be done by hand."""
        try:
            fix, note = self.plan_fix(site)
        except _Manual as exc:
            fix, note = self.ctx.manual(f"Hoist by hand: {exc}"), str(exc)
        return Hoist(site, fix, note)

    def plan_fix(self, site: Site) -> tuple[Fix, str]:
        self.imports = []
        if site.manual:
            raise _Manual(site.manual)
        if site.kind == "local callable":
            raise _Manual(
                "the callable is assigned to a local name; move its definition and the transform to module level"
            )
        if site.kind == "bound method":
            return self._fix_bound_method(site)
        if site.kind == NEW_OBJECT:
            return self._fix_new_object_method(site)
        if site.kind == MODULE_FUNCTION:
            return self._fix_module_function(site)
        if site.kind in ("nested def", "decorated nested def"):
            return self._fix_nested_def(site)
        return self._fix_inline(site)

    # captured values -----------------------------------------------------------
    def _captures(self, names: Iterable[str], at: cst.CSTNode, loops: list[cst.CSTNode]) -> tuple[list[str], list[str]]:
        """Split the names a callable reads into (become arguments, risky globals)."""
        variant_globals: set[str] = set()
        for loop in loops:
            variant_globals |= self.idx.assigned_in(loop)
        args, risky = [], []
        for name in names:
            scope = self.idx.resolve(name, at)
            if scope is None:
                continue
            if isinstance(scope, cst.Module):
                if name in variant_globals:
                    args.append(name)
                elif name in self.idx.global_declarations() or len(self.idx.module_bindings(name)) > 1:
                    risky.append(name)
                continue
            if isinstance(scope, cst.ClassDef):
                raise _Manual(f"it reads class attribute `{name}`")
            args.append(name)
        return args, risky

    def _kind_of(self, name: str, at: cst.CSTNode) -> str:
        scope = self.idx.resolve(name, at)
        if scope is None:
            return "unknown"
        info = self.idx.scope_info(scope)
        kinds = [binding_kind(b, name, self.qualify) for b in info.bindings.get(name, [])]
        if isinstance(scope, cst.FunctionDef) and name in info.params:
            for p in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params):
                if p.name.value == name:
                    kinds.append(param_kind(p, self.qualify))
        return combine(kinds)

    def _arg_needs(self, name: str, body: cst.CSTNode, depth: int = 0) -> tuple[str | None, bool]:
        """(why `name` must be static, or None; whether every use is numeric), following calls into
        functions defined at module level in this file."""
        uses = static_uses(body, [name], self.qualify)
        if name in uses:
            return uses[name], False
        numeric = True
        for kind, node in uses_of(body, name, self.qualify):
            if kind == "numeric":
                continue
            if kind == "call" and depth < 3:
                definition = self._module_def(node.func)
                params = self._params_for(node, name, definition) if definition is not None else []
                if params:
                    for param in params:
                        why, num = self._arg_needs(param, definition.body, depth + 1)
                        if why:
                            return f"{why} in {definition.name.value}()", False
                        numeric = numeric and num
                    continue
            numeric = False
        return None, numeric

    def _params_for(self, call: cst.Call, name: str, definition: cst.FunctionDef) -> list[str]:
        plain = [p.name.value for p in (*definition.params.posonly_params, *definition.params.params)]
        everything = param_names(definition.params)
        found = []
        position = 0
        for arg in call.args:
            if arg.star:
                return []
            if arg.keyword is None:
                if isinstance(arg.value, cst.Name) and arg.value.value == name:
                    if position >= len(plain):
                        return []
                    found.append(plain[position])
                position += 1
            elif isinstance(arg.value, cst.Name) and arg.value.value == name:
                if arg.keyword.value not in everything:
                    return []
                found.append(arg.keyword.value)
        return found

    def _is_instance_param(self, name: str, at: cst.CSTNode) -> bool:
        scope = self.idx.resolve(name, at)
        if not isinstance(scope, cst.FunctionDef) or not isinstance(self.idx.enclosing_scope(scope), cst.ClassDef):
            return False
        params = [*scope.params.posonly_params, *scope.params.params]
        is_static = any(self.qualify(d.decorator) == "staticmethod" for d in scope.decorators)
        return bool(params) and not is_static and params[0].name.value == name

    def _classify_args(
        self, site: Site, args: list[str], body: cst.CSTNode, at: cst.CSTNode
    ) -> tuple[list[str], list[str]]:
        """(static names, unsafe reasons) for captured names that become arguments of `body`."""
        static, reasons = [], []
        for name in args:
            if self._is_instance_param(name, at):
                raise _Manual(
                    f"it captures `{name}`, the instance; jit the method once (in `__init__`, or with the "
                    "instance as a pytree or static argument)"
                )
            kind = self._kind_of(name, at)
            why, numeric = self._arg_needs(name, body)
            if why:
                if kind == "unhashable":
                    raise _Manual(
                        f"`{name}` is used as a {why} but holds an unhashable value; it cannot be a static argument"
                    )
                if kind not in ("hashable", "function", "number"):
                    reasons.append(f"`{name}` becomes a static argument ({why}); its hashability is not established")
                static.append(name)
            elif kind == "function":
                static.append(name)
            elif kind == "unknown" and not numeric:
                reasons.append(f"`{name}` becomes a traced argument; it must be an array, a number or a pytree of them")
        if static and any(k in ("pmap", "filter_pmap") for k in site.kinds):
            raise _Manual("captured static values under pmap need static_broadcasted_argnums; hoist by hand")
        if static and any(k in WRAPPING for k in site.kinds) and site.kinds[0] != "jit":
            raise _Manual("captured static values under this transform chain; hoist by hand")
        return static, reasons

    # spelling ------------------------------------------------------------------------
    def _new_name(self, base: str, site: Site) -> str:
        base = base.strip("_") or "fn"
        suffix = "_".join(reversed([k for k in site.kinds]))
        return self._fresh(f"_{base}_{suffix}")

    def _fresh(self, stem: str) -> str:
        return self.ctx.fresh_name(stem, self.taken)

    def _lambda_base(self, site: Site, lam: cst.Lambda) -> str:
        callee = lam.body.func if isinstance(lam.body, cst.Call) else None
        if isinstance(callee, cst.Name) and self._module_def(callee) is not None:
            return callee.value
        if isinstance(site.function, cst.FunctionDef):
            return f"{site.function.name.value}_lambda"
        return "lambda"

    def _module_anchor(self, site: Site, hoist_time_names: Iterable[str]) -> tuple[str, cst.CSTNode]:
        """("before"|"after", top-level statement) where a module-level hoist goes."""
        top = self.idx.top_level_statement(site.node)
        body = list(self.ctx.module.body)
        index = body.index(top)
        if not site.function:
            # a module-level loop: go before the outermost loop
            top = self.idx.statement_in(site.loops[-1], self.ctx.module) if site.loops else top
            index = body.index(top)
        latest = -1
        for name in hoist_time_names:
            if self.idx.resolve(name, top) is not self.ctx.module:
                continue
            for stmt in self.idx.module_bindings(name):
                latest = max(latest, body.index(stmt))
        if latest >= index:
            if latest == index or not site.function:
                raise _Manual("a name the hoisted code needs is bound only at or after this point")
            return "after", body[latest]
        return "before", top

    def _statement(self, code: str, leading: Iterable[cst.EmptyLine] = (), indent: int = 0) -> cst.SimpleStatementLine:
        if len(code) + indent > 88:
            # black's layout at the width left, never narrower than 40 columns
            code = black_format(code, max(88 - indent, 40)).rstrip("\n")
        stmt = cst.parse_statement(code, config=self.ctx.module.config_for_parsing)
        return stmt.with_changes(leading_lines=list(leading))

    def _module_leading(self, where: str, anchor: cst.CSTNode) -> list[cst.EmptyLine]:
        if where == "after":
            blank = 2 if isinstance(anchor, (cst.FunctionDef, cst.ClassDef)) else 0
            return [cst.EmptyLine()] * blank
        blank = 0
        for line in anchor.leading_lines:
            if line.comment is not None:
                break
            blank += 1
        body = list(self.ctx.module.body)
        index = body.index(anchor)
        if index == 0:
            blank = 0
        else:
            previous = body[index - 1]
            if isinstance(previous, (cst.FunctionDef, cst.ClassDef)):
                blank = 2
            elif isinstance(previous, cst.SimpleStatementLine) and any(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in previous.body
            ):
                blank = 1  # black: one blank line between imports and other statements
            blank = min(blank, 2)
        return [cst.EmptyLine()] * blank

    def _hoist_module(
        self, site: Site, stmts: list[cst.BaseStatement], hoist_time_names: Iterable[str]
    ) -> tuple[dict, dict]:
        where, anchor = self._module_anchor(site, hoist_time_names)
        leading = self._module_leading(where, anchor)
        if isinstance(stmts[0], (cst.FunctionDef, cst.ClassDef)) and leading:
            leading = [cst.EmptyLine()] * 2  # black: two blank lines around a module-level def
        first = stmts[0].with_changes(leading_lines=leading)
        stmts = [first, *stmts[1:]]
        if where == "after":
            return {}, {anchor: stmts}
        return {anchor: stmts}, {}

    def _call_with(self, call: cst.Call, func_name: str, extra: list[str], keyword: bool) -> cst.Call:
        args = list(call.args)
        if args and extra:
            last = args[-1]
            if last.comma is cst.MaybeSentinel.DEFAULT or isinstance(last.comma, cst.MaybeSentinel):
                args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        for i, name in enumerate(extra):
            arg = cst.Arg(
                value=cst.Name(name),
                keyword=cst.Name(name) if keyword else None,
                equal=(
                    cst.AssignEqual(
                        whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
                    )
                    if keyword
                    else cst.MaybeSentinel.DEFAULT
                ),
            )
            if i < len(extra) - 1:
                arg = arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args.append(arg)
        return call.with_changes(func=cst.Name(func_name), args=args)

    def _code(self, node: cst.CSTNode) -> str:
        return self.ctx.module.code_for_node(node)

    def _merge_static(self, call: cst.Call, rest: list[str], static: list[str]) -> list[str]:
        for i, arg in enumerate(call.args[1:]):
            if arg.keyword is not None and arg.keyword.value == "static_argnames":
                value = arg.value
                if isinstance(value, cst.SimpleString):
                    existing = [self._code(value)]
                elif isinstance(value, (cst.Tuple, cst.List)):
                    existing = [self._code(e.value) for e in value.elements]
                else:
                    raise _Manual("static_argnames is not a literal; add the captured static names by hand")
                names = existing + [self.ctx.literal(n) for n in static]
                rest[i] = f"static_argnames=({', '.join(names)}{',' if len(names) == 1 else ''})"
                return rest
        names = [self.ctx.literal(n) for n in static]
        return [*rest, f"static_argnames=({', '.join(names)}{',' if len(names) == 1 else ''})"]

    def _check_options(self, site: Site, at: cst.CSTNode) -> None:
        """The transform options must be the same every time (literals or invariant globals)."""
        names: set[str] = set()
        for call in site.chain:
            for arg in call.args[1:]:
                names |= names_read(arg.value)
            names |= names_read(call.func)
        args, risky = self._captures(sorted(names), at, site.loops)
        if args:
            raise _Manual(f"the transform's options read `{args[0]}`, which is local or changes per iteration")
        return None

    # inline lambda / partial ------------------------------------------------------------
    def _fix_inline(self, site: Site) -> tuple[Fix, str]:
        target = site.target
        self._check_options(site, site.node)
        if isinstance(target, cst.Lambda):
            return self._fix_lambda(site, target)
        return self._fix_partial(site, target)

    def _finish(
        self, site: Site, reasons: list[str], title: str, replace: dict, before: dict, after: dict
    ) -> tuple[Fix, str]:
        safety = Safety.UNSAFE if reasons else Safety.SAFE
        if site.binding is not None:
            self._remove_binding(site.binding, replace)
        fix = self.ctx.rewrite(
            title, safety, replace=replace, insert_before=before, insert_after=after, imports=self.imports
        )
        return fix, "; ".join(reasons)

    def _fix_lambda(self, site: Site, lam: cst.Lambda) -> tuple[Fix, str]:
        free = self.idx.free_names(lam)
        args, risky = self._captures(_in_order(free, lam.body), lam, site.loops)
        reasons = [
            f"global `{g}` may be rebound; the hoisted function keeps the value it was traced with" for g in risky
        ]
        static, more = self._classify_args(site, args, lam.body, lam)
        reasons += more
        params = lam.params
        if args and (
            params.star_arg is not cst.MaybeSentinel.DEFAULT
            and params.star_arg is not None
            or params.kwonly_params
            or params.star_kwarg
            or params.posonly_params
            or any(p.default for p in params.params)
        ):
            raise _Manual("the lambda has defaults or star parameters; add the captured values as parameters by hand")
        keywords = {call: any(a.keyword is not None or a.star for a in call.args) for call in site.calls}
        if any(keywords.values()) and args and any(k in ("vmap", "pmap", "filter_pmap") for k in site.kinds):
            raise _Manual("keyword arguments under vmap/pmap are mapped; add the captured values by hand")
        n_params = len(params.params)
        new_params = [self._code(p).strip().rstrip(",").strip() for p in params.params] + args
        body = self._code(lam.body)
        lam_text = f"lambda {', '.join(new_params)}: {body}" if new_params else f"lambda: {body}"
        base = self._lambda_base(site, lam)
        name = self._new_name(base, site)
        hoisted = self._transform_text(site, lam_text, static, n_params, len(args))
        stmt = self._statement(f"{name} = {hoisted}")
        before, after = self._hoist_module(site, [stmt], names_read(site.chain[0].func) | _reads_options(site))
        replace = {call: self._call_with(call, name, args, keywords[call]) for call in site.calls}
        return self._finish(
            site, reasons, f"Hoist the transformed lambda to module level as `{name}`", replace, before, after
        )

    def _transform_text(self, site: Site, inner: str, static: list[str], n: int = 0, k: int = 0) -> str:
        """Re-spell the transform chain around `inner`: static_argnames on the outer jit, in_axes for new args."""
        text = inner
        for depth, call in reversed(list(enumerate(site.chain))):
            rest = [self._code(a).strip().rstrip(",").strip() for a in call.args[1:]]
            kind = site.kinds[depth]
            if kind in ("vmap", "pmap", "filter_pmap") and k:
                rest = self._extend_in_axes(call, rest, n, k)
            if depth == 0 and static and kind == "jit":
                rest = self._merge_static(call, rest, static)
            text = f"{self._code(call.func)}({', '.join([text, *rest])})"
        return text

    def _extend_in_axes(self, call: cst.Call, rest: list[str], n: int, k: int) -> list[str]:
        for i, arg in enumerate(call.args[1:]):
            if (arg.keyword is not None and arg.keyword.value == "in_axes") or (arg.keyword is None and i == 0):
                value = arg.value
                if isinstance(value, (cst.Integer, cst.Name)) and not (
                    isinstance(value, cst.Name) and value.value != "None"
                ):
                    axes = ", ".join([self._code(value)] * n + ["None"] * k)
                elif isinstance(value, cst.Tuple):
                    axes = ", ".join([self._code(e.value) for e in value.elements] + ["None"] * k)
                else:
                    raise _Manual("in_axes is not a literal; extend it for the captured values by hand")
                rest[i] = f"in_axes=({axes})" if arg.keyword is not None else f"({axes})"
                return rest
        return [*rest, f"in_axes=({', '.join(['0'] * n + ['None'] * k)})"]

    def _fix_partial(self, site: Site, part: cst.Call) -> tuple[Fix, str]:
        func = part.args[0].value
        bound = part.args[1:]
        if any(a.star for a in bound):
            raise _Manual("the partial unpacks *args/**kwargs; hoist by hand")
        variant_args, risky = self._captures(_in_order(names_read(part), part), part, site.loops)
        reasons = [
            f"global `{g}` may be rebound; the hoisted function keeps the value it was traced with" for g in risky
        ]
        func_reads = names_read(func)
        if set(variant_args) & func_reads:
            raise _Manual("the partial wraps a callable that is local or changes per iteration")
        moving = [a for a in bound if names_read(a.value) & set(variant_args)]
        keep_kw = [a for a in bound if a.keyword is not None and a not in moving]
        positional = [a for a in bound if a.keyword is None]
        move_positional = any(a.keyword is None for a in moving)
        moved_pos = positional if move_positional else []
        moved_kw = [a for a in moving if a.keyword is not None]
        kept_pos = [] if move_positional else positional
        # static positions, from the wrapped function's body when it is defined in this file
        definition = self._module_def(func)
        static: list[str] = []
        pos_names: list[str] = []
        if definition is not None:
            names = [p.name.value for p in (*definition.params.posonly_params, *definition.params.params)]
            pos_names = names[: len(moved_pos)]
            if len(pos_names) < len(moved_pos):
                raise _Manual("the partial binds more positional arguments than the function names")
            movers = pos_names + [a.keyword.value for a in moved_kw]
            uses = {}
            numeric_params: set[str] = set()
            for mover in movers:
                why, numeric = self._arg_needs(mover, definition.body)
                if why:
                    uses[mover] = why
                elif numeric:
                    numeric_params.add(mover)
        else:
            movers = [a.keyword.value for a in moved_kw]
            uses = {}
            numeric_params = set()
        shift = len(moved_pos)
        if shift and self._has_option(site.chain[0], ("static_argnums", "donate_argnums", "in_axes", "argnums")):
            raise _Manual("bound positional arguments move to the call; shift the position options by hand")
        for arg, pname in [*zip(moved_pos, pos_names), *((a, a.keyword.value) for a in moved_kw)]:
            kind = (
                expression_kind(arg.value, self.qualify)
                if not isinstance(arg.value, cst.Name)
                else self._kind_of(arg.value.value, part)
            )
            if pname in uses:
                if kind == "unhashable":
                    raise _Manual(f"`{pname}` is used as a {uses[pname]} but gets an unhashable value")
                if kind not in ("hashable", "number", "function"):
                    reasons.append(
                        f"`{pname}` becomes a static argument ({uses[pname]}); its hashability is not established"
                    )
                static.append(pname)
            elif definition is None:
                reasons.append(
                    f"`{self._code(func)}` is not defined in this file, so whether `{self._code(arg.value).strip()}` must be static is unknown; it is passed traced"
                )
            elif kind == "unknown" and pname not in numeric_params:
                reasons.append(
                    f"`{self._code(arg.value).strip()}` becomes a traced argument; it must be an array, a number or a pytree of them"
                )
        if static and site.kinds[0] != "jit" or (static and len(site.kinds) > 1):
            if site.kinds[0] != "filter_jit":
                raise _Manual("captured static values under this transform; hoist by hand")
            static = []
        if (moved_pos or moved_kw) and any(k in ("vmap", "pmap", "filter_pmap") for k in site.kinds):
            raise _Manual("moving bound values into a vmapped/pmapped call needs in_axes; hoist by hand")
        if definition is None and moved_pos:
            raise _Manual("the partial binds positional values that change per iteration; hoist by hand")
        func_text = self._code(func).strip()
        if kept_pos or keep_kw:
            inner = ", ".join([func_text, *[self._code(a).strip().rstrip(",").strip() for a in [*kept_pos, *keep_kw]]])
            inner_text = f"{self._code(part.func)}({inner})"
        else:
            inner_text = func_text
        name = self._new_name(_callee_name_expr(func) or "partial", site)
        hoisted = self._transform_text(site, inner_text, static)
        stmt = self._statement(f"{name} = {hoisted}")
        hoist_names = names_read(site.chain[0].func) | _reads_options(site) | func_reads
        for a in [*kept_pos, *keep_kw]:
            hoist_names |= names_read(a.value)
        before, after = self._hoist_module(site, [stmt], hoist_names)
        if site.binding is not None:
            moved_reads: set[str] = set()
            for a in [*moved_pos, *moved_kw]:
                moved_reads |= names_read(a.value)
            self._check_not_rebound(site, moved_reads)
        replace = {}
        for call in site.calls:
            new_args = (
                [cst.Arg(value=a.value) for a in moved_pos]
                + list(call.args)
                + [cst.Arg(value=a.value, keyword=a.keyword, equal=a.equal) for a in moved_kw]
            )
            new_args = _with_commas(new_args)
            replace[call] = call.with_changes(func=cst.Name(name), args=new_args)
        return self._finish(
            site, reasons, f"Hoist the transformed partial to module level as `{name}`", replace, before, after
        )

    def _has_option(self, call: cst.Call, names: tuple[str, ...]) -> bool:
        return (
            any(a.keyword is not None and a.keyword.value in names for a in call.args[1:])
            or len(call.args) > 1
            and any(a.keyword is None for a in call.args[1:])
        )

    def _module_def(self, func: cst.BaseExpression) -> cst.FunctionDef | None:
        if not isinstance(func, cst.Name):
            return None
        stmts = self.idx.module_bindings(func.value)
        if len(stmts) == 1 and isinstance(stmts[0], cst.FunctionDef):
            return stmts[0]
        return None

    # module function (JAX203) -----------------------------------------------------------
    def _fix_module_function(self, site: Site) -> tuple[Fix, str]:
        self._check_options(site, site.node)
        target = site.target
        head = target
        while isinstance(head, cst.Attribute):
            head = head.value
        if (
            isinstance(head, cst.Name)
            and not single_module_binding(self.idx, head.value)
            and head.value not in self.ctx.names.bindings
        ):
            raise _Manual(f"`{head.value}` is bound more than once at module level")
        name = self._new_name(_callee_name_expr(target) or "fn", site)
        hoisted = self._transform_text(site, self._code(target).strip(), [])
        stmt = self._statement(f"{name} = {hoisted}")
        before, after = self._hoist_module(
            site, [stmt], names_read(target) | names_read(site.chain[0].func) | _reads_options(site)
        )
        replace = {call: call.with_changes(func=cst.Name(name)) for call in site.calls}
        return self._finish(site, [], f"Wrap once at module level as `{name}`", replace, before, after)

    # bound method -----------------------------------------------------------------------
    def _fix_bound_method(self, site: Site) -> tuple[Fix, str]:
        if not site.loops:
            raise _Manual(
                "a bound method is a fresh object per call; jit `Cls.method` once (instance as a pytree or static argument) or in `__init__`"
            )
        self._check_options(site, site.loops[0])
        target = site.target
        obj_names = names_read(target)
        # outermost enclosing loop in which the object does not change
        chosen = None
        for loop in site.loops:
            if obj_names & self.idx.assigned_in(loop):
                break
            chosen = loop
        if chosen is None:
            raise _Manual(
                "the object changes every iteration, so each bound method is a new cache key; make its class a "
                "pytree and jit `Cls.method` once with the object as an argument"
            )
        if isinstance(chosen, COMPREHENSIONS):
            raise _Manual("hoist the jitted method out of the comprehension by hand")
        loop_stmt = (
            self.idx.statement_of(chosen) if not isinstance(chosen, COMPREHENSIONS) else self.idx.statement_of(chosen)
        )
        inner_loops = site.loops[: site.loops.index(chosen) + 1]
        other_uses = 0
        for loop in inner_loops:
            for name in obj_names:
                other_uses = max(other_uses, len(name_uses(loop, name)))
        reasons = []
        if other_uses > 1:
            reasons.append(
                "the loop also uses the object; if it changes the object's attributes, the hoisted function keeps the values it was traced with"
            )
        method = target.attr.value if isinstance(target, cst.Attribute) else "method"
        name = self._new_name(method, site)
        hoisted = self._transform_text(site, self._code(target).strip(), [])
        depth = sum(1 for a in self.idx.ancestors(loop_stmt) if isinstance(a, cst.IndentedBlock))
        stmt = self._statement(f"{name} = {hoisted}", indent=4 * depth)
        replace = {call: call.with_changes(func=cst.Name(name)) for call in site.calls}
        where = "before the loop"
        return self._finish(
            site, reasons, f"Wrap the method once {where} as `{name}`", replace, {loop_stmt: [stmt]}, {}
        )

    # bound method of a new object ---------------------------------------------------------
    def _fix_new_object_method(self, site: Site) -> tuple[Fix, str]:
        """`T(M(args).m)(x)` -> `_M_m_T(M(args), x)` with `_M_m_T = T(M.m)` at module level, when
        `M` is a pytree class of this file (the object becomes an argument); otherwise manual."""
        target = site.target
        ctor = target.value
        cls = module_class(self.idx, ctor.func)
        cls_name, method = cls.name.value, target.attr.value
        pytree = any(key[0] == cls_name for key in pytree_classes(self.ctx))
        if not pytree:
            raise _Manual(
                f"each `{cls_name}(...)` is a new object and its bound method a new jit cache key; `{cls_name}` is "
                f"not a pytree, so make it one and jit `{cls_name}.{method}` once with the object as an argument, "
                "or build the object and its jitted method once outside"
            )
        if site.binding is not None:
            raise _Manual("the jitted bound method is bound to a name; pass the object to a hoisted `jax.jit(Cls.method)` by hand")
        if len(site.kinds) > 1:
            raise _Manual("the object would become an argument of the inner transform too; hoist by hand")
        if self._has_option(site.chain[0], ("static_argnums", "donate_argnums", "in_axes", "argnums")):
            raise _Manual("the object becomes the first argument; shift the position options by hand")
        definition = next(
            (s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == method), None
        )
        if definition is None or definition.decorators or not definition.params.params:
            raise _Manual(f"`{cls_name}.{method}` is not a plain method defined in the class")
        self._check_options(site, site.node)
        name = self._new_name(f"{cls_name}_{method}", site)
        hoisted = self._transform_text(site, f"{cls_name}.{method}", [])
        stmt = self._statement(f"{name} = {hoisted}")
        before, after = self._hoist_module(site, [stmt], {cls_name} | _reads_options(site))
        call = site.calls[0]
        new_args = _with_commas([cst.Arg(value=ctor), *[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in call.args]])
        replace = {call: call.with_changes(func=cst.Name(name), args=new_args)}
        reasons = [
            f"the `{cls_name}` object becomes a traced argument: a field it reads as a shape, loop bound or "
            "Python branch fails to trace, and a Python-number field loses weak typing"
        ]
        return self._finish(site, reasons, f"Jit `{cls_name}.{method}` once at module level as `{name}`", replace, before, after)

    # nested def -------------------------------------------------------------------------
    def _fix_nested_def(self, site: Site) -> tuple[Fix, str]:
        fdef = site.definition
        scope = self.idx.enclosing_scope(fdef)
        if isinstance(scope, cst.Module):
            raise _Manual("the def is inside a module-level loop; move it above the loop by hand")
        info = self.idx.scope_info(fdef)
        if info.globals or info.nonlocals:
            raise _Manual("the nested def declares global/nonlocal names")
        if fdef.asynchronous is not None:
            raise _Manual("async def")
        free = self.idx.free_names(fdef)
        outer_reads = set()
        for dec in fdef.decorators:
            outer_reads |= names_read(dec.decorator)
        for p in (*fdef.params.params, *fdef.params.kwonly_params, *fdef.params.posonly_params):
            if p.default is not None:
                outer_reads |= names_read(p.default)
        dec_args, _ = self._captures(sorted(outer_reads), fdef, site.loops)
        if dec_args:
            raise _Manual(f"the def's decorators or defaults read local `{dec_args[0]}`")
        if site.chain:
            self._check_options(site, site.node)
        args, risky = self._captures(_in_order(free - {fdef.name.value}, fdef.body), fdef.body, site.loops)
        reasons = [
            f"global `{g}` may be rebound; the hoisted function keeps the value it was traced with" for g in risky
        ]
        static, more = self._classify_args(site, args, fdef.body, fdef.body)
        reasons += more
        own = fdef.name.value
        if args and own in free:
            raise _Manual("the nested def calls itself; add the captured values to its recursive calls by hand")
        params = fdef.params
        if args and (
            params.star_kwarg is not None
            or isinstance(params.star_arg, cst.Param)
            or params.kwonly_params
            or params.posonly_params
            or any(p.default for p in params.params)
        ):
            raise _Manual(
                "the nested def has defaults or star parameters; add the captured values as parameters by hand"
            )
        # the name at module level
        new_def_name = own
        if own in self.idx.scope_info(self.ctx.module).bindings or own in self.hoisted_defs:
            new_def_name = self._fresh(f"_{site.function.name.value}_{own}")
        self.hoisted_defs.add(new_def_name)
        new_params = list(params.params)
        if args:
            if new_params:
                last = new_params[-1]
                new_params[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            for i, a in enumerate(args):
                p = cst.Param(name=cst.Name(a))
                if i < len(args) - 1:
                    p = p.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                new_params.append(p)
        decorators = list(fdef.decorators)
        replace: dict = {}
        if site.kind == "decorated nested def":
            if static:
                decorators[0] = self._static_decorator(decorators[0], static)
        new_def = fdef.with_changes(
            name=cst.Name(new_def_name),
            params=params.with_changes(params=new_params),
            decorators=decorators,
            leading_lines=[],
        )
        stmts: list[cst.BaseStatement] = [new_def]
        if site.kind == "nested def":
            name = self._new_name(own, site)
            hoisted = self._transform_text(site, new_def_name, static)
            stmts.append(self._statement(f"{name} = {hoisted}", leading=[cst.EmptyLine(), cst.EmptyLine()]))
            for call in site.calls:
                keyword = any(a.keyword is not None or a.star for a in call.args)
                if keyword and args and any(k in ("vmap", "pmap", "filter_pmap") for k in site.kinds):
                    raise _Manual("keyword arguments under vmap/pmap are mapped; add the captured values by hand")
                replace[call] = self._call_with(call, name, args, keyword)
            # other uses of the def (direct calls) must not lose captured values
            for use in name_uses(scope.body, own):
                if use is fdef.name or any(a is fdef for a in self.idx.ancestors(use)):
                    continue
                if use is site.target:
                    continue
                if args or new_def_name != own:
                    raise _Manual(f"`{own}` is also used elsewhere in the function")
            title = f"Move `{own}` to module level and jit it once as `{name}`"
        else:
            name = new_def_name
            for use in name_uses(scope.body, own):
                if use is fdef.name or any(a is fdef for a in self.idx.ancestors(use)):
                    continue
                call = self.idx.parent(use)
                keyword = any(a.keyword is not None or a.star for a in call.args)
                replace[call] = self._call_with(call, name, args, keyword)
            title = f"Move the jitted `{own}` to module level"
        if any(k in ("vmap", "pmap", "filter_pmap") for k in site.kinds) and args:
            raise _Manual("captured values under vmap/pmap need in_axes=None; hoist by hand")
        # remove the def where it was
        block = self.idx.parent(fdef)
        if isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
            raise _Manual("the def is the only statement of its block")
        replace[fdef] = cst.RemovalSentinel.REMOVE
        if isinstance(block, cst.IndentedBlock) and block.body[0] is fdef:
            self._drop_leading_blank_lines(block.body[1], replace)
        hoist_names = set(outer_reads)
        before, after = self._hoist_module(site, stmts, hoist_names)
        if after:
            raise _Manual("a name the hoisted def needs is bound only after the function")
        return self._finish(site, reasons, title, replace, before, after)

    def _check_not_rebound(self, site: Site, names: set[str]) -> None:
        """A partial evaluates its bound values once, at the binding; moved to the calls they are
        evaluated there, so none of the names they read may change in between."""
        block = self.idx.parent(site.binding)
        siblings = list(block.body)
        index = next(i for i, s in enumerate(siblings) if s is site.binding)
        last = max(
            next(i for i, s in enumerate(siblings) if s is sibling_of(self.idx, call, siblings)) for call in site.calls
        )
        for i in range(index + 1, last + 1):
            stmt = siblings[i]
            if i < last or not isinstance(stmt, cst.SimpleStatementLine):
                changed = names & self.idx.assigned_in(stmt)
                if changed:
                    raise _Manual(
                        f"`{sorted(changed)[0]}` changes between the binding and a call; the partial keeps the value it had at the binding"
                    )

    def _remove_binding(self, stmt: cst.SimpleStatementLine, replace: dict) -> None:
        """Delete the `f = T(F)` line; the statement that becomes first in its block loses its blank lines."""
        block = self.idx.parent(stmt)
        body = list(block.body)
        replace[stmt] = cst.RemovalSentinel.REMOVE
        remaining = [s for s in body if replace.get(s) is not cst.RemovalSentinel.REMOVE]
        if not remaining:
            raise _Manual("the binding is the only statement left in its block")
        position = {id(s): i for i, s in enumerate(body)}
        if isinstance(block, cst.IndentedBlock) and position[id(stmt)] < position[id(remaining[0])]:
            self._drop_leading_blank_lines(remaining[0], replace)

    def _drop_leading_blank_lines(self, stmt: cst.CSTNode, replace: dict) -> None:
        """The statement that becomes first in its block loses its blank lines (as black does),
        keeping any replacements planned inside it."""
        if not any(line.comment is None for line in stmt.leading_lines):
            return
        inner = {old: new for old, new in replace.items() if any(a is stmt for a in self.idx.ancestors(old))}
        new_stmt = stmt
        for old, new in inner.items():
            new_stmt = new_stmt.deep_replace(old, new)
            del replace[old]
        kept = list(stmt.leading_lines)
        while kept and kept[0].comment is None:
            kept.pop(0)
        replace[stmt] = new_stmt.with_changes(leading_lines=kept)

    def _static_decorator(self, dec: cst.Decorator, static: list[str]) -> cst.Decorator:
        d = dec.decorator
        names = ", ".join(self.ctx.literal(n) for n in static) + ("," if len(static) == 1 else "")
        if isinstance(d, cst.Call):  # partial(jax.jit, ...)
            rest = [self._code(a).strip().rstrip(",").strip() for a in d.args[1:]]
            rest = self._merge_static(cst.Call(func=d.args[0].value, args=d.args), rest, static)
            text = f"{self._code(d.func)}({', '.join([self._code(d.args[0].value), *rest])})"
            return dec.with_changes(decorator=cst.parse_expression(text))
        partial_name, imports = self.ctx.names.reference("functools.partial")
        self.imports.extend(imports)
        text = f"{partial_name}({self._code(d)}, static_argnames=({names}))"
        return dec.with_changes(decorator=cst.parse_expression(text))


class _Manual(Exception):
    """The fix cannot be made automatically; the message says why."""


def _in_order(names: set[str], node: cst.CSTNode) -> list[str]:
    """`names` in the order they first appear under `node` (then any not found, sorted)."""
    seen: list[str] = []

    class _V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value in names and n.value not in seen:
                seen.append(n.value)

    walk(node, _V())
    return seen + sorted(names - set(seen))


def _reads_options(site: Site) -> set[str]:
    names: set[str] = set()
    for call in site.chain:
        names |= names_read(call.func)
        for arg in call.args[1:]:
            names |= names_read(arg.value)
    return names


def _callee_name_expr(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def _with_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    out = []
    for i, a in enumerate(args):
        comma = (
            cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if i < len(args) - 1 else cst.MaybeSentinel.DEFAULT
        )
        out.append(a.with_changes(comma=comma))
    return out
