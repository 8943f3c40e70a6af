"""The hoist planner shared by JAX201-JAX203: the fix for each site (`sites.find_sites`).

`hoists(ctx)` is computed once per file (`ctx.fact`) and read by the three rules, each keeping
the sites of its own code. A site's `Hoist` holds its fix, or a `manual` fix saying why it
cannot be done automatically. The transformed function goes to the nearest place where it is
the same object every time it runs (`captures` decides which, value by value):

- out of the function, to module level, with the values it captured as arguments (traced, or
  `static_argnames`), or, when some of them are hashable and do not change in the function (a
  frozen config, a mode string), behind a cached factory keyed on those (`functools.cache`),
  which leaves them captured: one compile per distinct key, 0 in the steady state;
- just above the loop, closure intact, when a captured value cannot leave the function (its kind
  is unknown, it is unhashable, or a function made in it) but does not change in the loop: one
  compile per run of the function instead of one per iteration;
- a module-level loop's wrapper goes before the loop; a bound method's before the outermost
  loop where its object does not change.

All sites of a file are planned together, in source order, because they share the pool of new
names (`_body_jit`, `_body_jit_2`, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

from codemods.jit_placement.captures import (
    ABOVE,
    FACTORY,
    MODULE,
    STATIC,
    TRACED,
    Captured,
    Decision,
    ManualFix,
    above,
    leave,
)
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
from jaxfix.analysis.static_positions import static_uses, uses_of
from jaxfix.analysis.transforms import FUNCTION_FIELDS
from jaxfix.analysis.value_kinds import ValueKinds
from jaxfix.analysis.walk import walk
from jaxfix.model import Fix, ImportRequest, Safety
from jaxfix.rulebase import RuleContext

_Manual = ManualFix  # the planner's name for "the fix must be done by hand"
_BLANK = cst.EmptyLine(indent=False)  # a blank line inside a block, without the block's indent (W293)
_MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault", "popitem", "add", "discard", "sort", "reverse"}
)


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
        self.kinds = ValueKinds.of(ctx)
        self._changed: dict[int, set[str]] = {}

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
        if isinstance(site.target, cst.Lambda):
            return self._fix_lambda(site, site.target)
        return self._fix_partial(site, site.target)

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

    def changed_in(self, loop: cst.CSTNode) -> set[str]:
        """Names a loop rebinds, or whose object it changes in place (`x.a = ...`, `x[i] = ...`,
        `x.append(...)`): a value captured from before the loop stays the same only without both."""
        key = id(loop)
        if key not in self._changed:
            names = set(self.idx.assigned_in(loop))
            walk(loop, _ChangedInPlace(names, self.qualify))
            self._changed[key] = names
        return self._changed[key]

    def _all_loops_change(self, site: Site) -> set[str]:
        return self.changed_in(site.loops[-1]) if site.loops else set()

    def _name_values(
        self, site: Site, names: list[str], body: cst.CSTNode, at: cst.CSTNode, loop: cst.CSTNode | None
    ) -> list[Captured]:
        """The captured names of a lambda or nested def as `Captured` values; `loop`: the loop the
        hoist goes above (None: the hoist leaves the function)."""
        changed = self.changed_in(loop) if loop is not None else self._all_loops_change(site)
        out = []
        for name in names:
            if self._is_instance_param(name, at):
                raise _Manual(
                    f"it captures `{name}`, the instance; jit the method once (in `__init__`, or with the "
                    "instance as a pytree or static argument)"
                )
            why, numeric = self._arg_needs(name, body)
            variant = site.function is None or name in changed
            out.append(Captured(name, name, self.kinds.of_name(name, at), variant, why, numeric))
        return out

    def _decide(self, site: Site, values_for: Callable[[cst.CSTNode | None], list[Captured]]) -> Decision:
        """Where the hoist goes and which way each captured value goes (see `captures`): out of the
        function when every value can leave it safely; else just above the outermost loop in which
        the values that cannot leave do not change, when that is safer; else out of the function
        with what makes it unsafe; else manual."""
        if site.function is None:
            return leave(values_for(None), factory=False, per="iteration")  # a module-level loop
        per = "iteration" if site.loops else "call"
        try:
            leaving, error = leave(values_for(None), factory=True, per=per), None
        except ManualFix as exc:
            leaving, error = None, exc
        if site.binding is not None and all(
            len(self.idx.enclosing_loops(call)) > len(site.loops) for call in site.calls
        ) and (leaving is None or leaving.unsafe):
            # already made once per iteration of its loop and reused in an inner one (a hoist above
            # the inner loop): leaving the function is all that is left, and it is not safe
            why = str(error) if leaving is None else leaving.unsafe[0]
            raise _Manual(f"the jitted function is made once per iteration and reused in the inner loop; {why}")
        if site.loops and (leaving is None or leaving.unsafe):
            best = None
            for loop in reversed(site.loops):  # outermost first: the fewest compiles
                try:
                    staying = above(values_for(loop), loop)
                except ManualFix:
                    continue
                if best is None or len(staying.unsafe) < len(best.unsafe):
                    best = staying
            if best is not None and (leaving is None or len(best.unsafe) < len(leaving.unsafe)):
                return best  # safer: what cannot leave the function stays captured
        if leaving is None:
            raise error
        return leaving

    def _check_static_under(self, site: Site, static: list[str]) -> None:
        if static and any(k in ("pmap", "filter_pmap") for k in site.kinds):
            raise _Manual("captured static values under pmap need static_broadcasted_argnums; hoist by hand")
        if static and any(k in WRAPPING for k in site.kinds) and site.kinds[0] != "jit":
            raise _Manual("captured static values under this transform chain; hoist by hand")

    @staticmethod
    def _add_risky(decision: Decision, risky: list[str]) -> None:
        for g in risky:
            phrase = f"global `{g}` may be rebound; the hoisted function keeps the value it was traced with"
            decision.phrases.append(phrase)
            decision.unsafe.append(phrase)

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

    def _call_with(self, call: cst.Call, func: str | cst.BaseExpression, extra: list[str], keyword: bool) -> cst.Call:
        """`call` calling `func` instead, with the names `extra` appended (as keywords with `keyword`)."""
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
        return call.with_changes(func=cst.Name(func) if isinstance(func, str) else func, args=args)

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

    # placing the hoisted callable -------------------------------------------------------
    def _finish(
        self,
        site: Site,
        reasons: list[str],
        title: str,
        replace: dict,
        before: dict,
        after: dict,
        phrases: list[str] | None = None,
    ) -> tuple[Fix, str]:
        """The fix: unsafe when there are `reasons`; the note lists `phrases` (default: the reasons)."""
        safety = Safety.UNSAFE if reasons else Safety.SAFE
        if site.binding is not None:
            self._remove_binding(site.binding, replace)
        fix = self.ctx.rewrite(
            title, safety, replace=replace, insert_before=before, insert_after=after, imports=self.imports
        )
        return fix, "; ".join(reasons if phrases is None else phrases)

    def _place(
        self,
        site: Site,
        decision: Decision,
        *,
        base: str,
        what: str,
        prelude: list[cst.BaseStatement],
        value: str | None,
        make_call: Callable[[cst.Call, cst.BaseExpression], cst.Call],
        calls: list[cst.Call],
        replace: dict,
        hoist_names: set[str],
        local_name: str | None = None,
        remove: cst.CSTNode | None = None,
    ) -> tuple[Fix, str]:
        """Put the hoisted callable where `decision` says and call it from `calls`.

        `prelude`: statements the callable needs first (the moved def); `value`: the transform
        expression that makes it (None: the prelude's decorated def is the callable, named
        `local_name`); `remove`: the statement the prelude moves away from."""
        before: dict = {}
        after: dict = {}
        keys = decision.keys
        if decision.target == FACTORY:
            name = self._new_name(base, site)
            cache, imports = self.ctx.names.reference("functools.cache")
            self.imports.extend(imports)
            returned = value if value is not None else local_name
            factory = self._factory(name, keys, cache, prelude, returned)
            before, after = self._hoist_module(site, [factory], set())
            callee: cst.BaseExpression = cst.Call(
                func=cst.Name(name), args=_with_commas([cst.Arg(value=cst.Name(k)) for k in keys])
            )
            title = f"Make the jitted {what} once per value of {_spelled(keys)} in a cached factory `{name}`"
        elif decision.target == ABOVE:
            anchor = self.idx.statement_of(decision.loop)
            if not isinstance(self.idx.parent(anchor), (cst.IndentedBlock, cst.Module)):
                raise _Manual("the loop shares its line with the statement before it; hoist above it by hand")
            depth = sum(1 for a in self.idx.ancestors(anchor) if isinstance(a, cst.IndentedBlock))
            if value is not None:
                name = local_name or self._fresh(f"{base.strip('_') or 'fn'}_{'_'.join(reversed(site.kinds))}")
                stmts = [*prelude, self._statement(f"{name} = {value}", indent=4 * depth)]
                if prelude:
                    stmts[-1] = stmts[-1].with_changes(leading_lines=[_BLANK])
            else:
                name, stmts = local_name, list(prelude)
            block = self.idx.parent(anchor)
            first = isinstance(block, cst.IndentedBlock) and block.body[0] is anchor
            if prelude and not first:
                stmts[0] = stmts[0].with_changes(leading_lines=[_BLANK])
            if value is None:
                self._blank_line_before(anchor, replace)  # one blank line after a nested def, as black
            before = {anchor: stmts}
            callee = cst.Name(name)
            title = f"Make the jitted {what} once, above the loop, as `{name}`"
        else:
            if value is not None:
                name = self._new_name(base, site)
                stmt = self._statement(f"{name} = {value}")
                if prelude:
                    stmt = stmt.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
                stmts = [*prelude, stmt]
            else:
                name, stmts = local_name, list(prelude)
            before, after = self._hoist_module(site, stmts, hoist_names)
            if after and prelude:
                raise _Manual("a name the hoisted def needs is bound only after the function")
            callee = cst.Name(name)
            title = f"Hoist the transformed {what} to module level as `{name}`"
        for call in calls:
            replace[call] = make_call(call, callee)
        if remove is not None:
            block = self.idx.parent(remove)
            replace[remove] = cst.RemovalSentinel.REMOVE
            if isinstance(block, cst.IndentedBlock) and block.body[0] is remove:
                self._drop_leading_blank_lines(block.body[1], replace)
        return self._finish(site, decision.unsafe, title, replace, before, after, decision.phrases)

    def _factory(
        self, name: str, keys: list[str], cache: str, prelude: list[cst.BaseStatement], returned: str
    ) -> cst.FunctionDef:
        """`@functools.cache def name(keys): <prelude>; return <returned>`, black-formatted."""
        text = f"@{cache}\ndef {name}({', '.join(keys)}):\n    return {returned}\n"
        if any(len(line) > 88 for line in text.splitlines()):
            text = black_format(text, 88)
        fdef = cst.parse_statement(text, config=self.ctx.module.config_for_parsing)
        if prelude:
            ret = fdef.body.body[-1].with_changes(leading_lines=[_BLANK])
            body = [*[s.with_changes(leading_lines=[]) for s in prelude[:1]], *prelude[1:], ret]
            fdef = fdef.with_changes(body=fdef.body.with_changes(body=body))
        return fdef

    def _blank_line_before(self, stmt: cst.CSTNode, replace: dict) -> None:
        """`stmt` gets one leading blank line (keeping the replacements planned inside it)."""
        if stmt.leading_lines and stmt.leading_lines[0].comment is None:
            return
        self._with_leading_lines(stmt, [_BLANK, *stmt.leading_lines], replace)

    def _with_leading_lines(self, stmt: cst.CSTNode, lines: list[cst.EmptyLine], replace: dict) -> None:
        """Replace `stmt` by itself with `lines` before it, the replacements planned inside it applied
        (a replacement of the statement itself would otherwise hide them)."""
        inner = {old: new for old, new in replace.items() if any(a is stmt for a in self.idx.ancestors(old))}
        new_stmt = stmt
        for old, new in inner.items():
            new_stmt = new_stmt.deep_replace(old, new)
            del replace[old]
        replace[stmt] = new_stmt.with_changes(leading_lines=lines)

    # lambda -----------------------------------------------------------------------------
    def _fix_lambda(self, site: Site, lam: cst.Lambda) -> tuple[Fix, str]:
        self._check_options(site, site.node)
        free = self.idx.free_names(lam)
        names, risky = self._captures(_in_order(free, lam.body), lam, site.loops)
        decision = self._decide(site, lambda loop: self._name_values(site, names, lam.body, lam, loop))
        self._add_risky(decision, risky)
        extra, static = decision.names(TRACED, STATIC), decision.names(STATIC)
        self._check_static_under(site, static)
        params = lam.params
        if extra and (
            params.star_arg is not cst.MaybeSentinel.DEFAULT
            and params.star_arg is not None
            or params.kwonly_params
            or params.star_kwarg
            or params.posonly_params
            or any(p.default for p in params.params)
        ):
            raise _Manual("the lambda has defaults or star parameters; add the captured values as parameters by hand")
        keywords = {call: any(a.keyword is not None or a.star for a in call.args) for call in site.calls}
        if any(keywords.values()) and extra and any(k in ("vmap", "pmap", "filter_pmap") for k in site.kinds):
            raise _Manual("keyword arguments under vmap/pmap are mapped; add the captured values by hand")
        n_params = len(params.params)
        new_params = [self._code(p).strip().rstrip(",").strip() for p in params.params] + extra
        body = self._code(lam.body)
        lam_text = f"lambda {', '.join(new_params)}: {body}" if new_params else f"lambda: {body}"
        value = self._transform_text(site, lam_text, static, n_params, len(extra))
        return self._place(
            site,
            decision,
            base=self._lambda_base(site, lam),
            what="lambda",
            prelude=[],
            value=value,
            make_call=lambda call, callee: self._call_with(call, callee, extra, keywords[call]),
            calls=site.calls,
            replace={},
            hoist_names=names_read(site.chain[0].func) | _reads_options(site),
            local_name=self._binding_name(site),
        )

    @staticmethod
    def _binding_name(site: Site) -> str | None:
        """The user's name for a bound site (`f = jax.jit(...)`): a hoist above the loop keeps it."""
        if site.binding is None:
            return None
        return site.binding.body[0].targets[0].target.value

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
        self._check_options(site, site.node)
        func = part.args[0].value
        bound = list(part.args[1:])
        if any(a.star for a in bound):
            raise _Manual("the partial unpacks *args/**kwargs; hoist by hand")
        captured, risky = self._captures(_in_order(names_read(part), part), part, site.loops)
        local = set(captured)
        func_local = local & names_read(func)
        definition = self._module_def(func)
        pos_names = (
            [p.name.value for p in (*definition.params.posonly_params, *definition.params.params)] if definition else []
        )
        positional = [a for a in bound if a.keyword is None]

        def param_of(arg: cst.Arg) -> str:
            if arg.keyword is not None:
                return arg.keyword.value
            index = next(i for i, a in enumerate(positional) if a is arg)
            return pos_names[index] if index < len(pos_names) else f"#{index}"

        def values_for(loop: cst.CSTNode | None, force_positional: bool = False) -> list[Captured]:
            changed = self.changed_in(loop) if loop is not None else self._all_loops_change(site)
            if func_local and (loop is None or func_local & changed):
                raise _Manual("the partial wraps a callable that is local or changes per iteration")
            every = self._all_loops_change(site)
            out = []
            for arg in bound:
                reads = names_read(arg.value) & local
                forced = force_positional and arg.keyword is None
                if not reads and not forced:
                    continue
                pname = param_of(arg)
                why, numeric = (
                    self._arg_needs(pname, definition.body) if definition is not None and not pname.startswith("#") else (None, False)
                )
                out.append(
                    Captured(
                        pname,
                        self._code(arg.value).strip(),
                        self.kinds.of_expr(arg.value, part),
                        variant=forced or site.function is None or bool(reads & changed),
                        needs_static=why,
                        numeric=numeric,
                        keyable=not forced and not reads & every and isinstance(arg.value, cst.Name),
                        external=definition is None,
                        key=arg.value.value if isinstance(arg.value, cst.Name) else None,
                    )
                )
            return out

        decision = self._decide(site, values_for)
        movers = set(decision.names(TRACED, STATIC))
        if any(param_of(a) in movers for a in positional) and not all(param_of(a) in movers for a in positional):
            # bound positional values move to the front of the call together, or not at all
            forced = values_for(decision.loop, force_positional=True)
            per = "iteration" if site.loops else "call"
            if decision.target == ABOVE:
                decision = above(forced, decision.loop)
            else:
                decision = leave(forced, factory=decision.target == FACTORY, per=per)
            movers = set(decision.names(TRACED, STATIC))
        self._add_risky(decision, risky)
        moved = [a for a in bound if param_of(a) in movers]
        kept = [a for a in bound if param_of(a) not in movers]
        moved_pos = [a for a in moved if a.keyword is None]
        moved_kw = [a for a in moved if a.keyword is not None]
        if moved_pos and definition is None:
            raise _Manual("the partial binds positional values that change per iteration; hoist by hand")
        if any(param_of(a).startswith("#") for a in moved_pos):
            raise _Manual("the partial binds more positional arguments than the function names")
        if moved_pos and self._has_option(site.chain[0], ("static_argnums", "donate_argnums", "in_axes", "argnums")):
            raise _Manual("bound positional arguments move to the call; shift the position options by hand")
        static = [param_of(a) for a in moved if decision.roles.get(param_of(a)) == STATIC]
        if static and (site.kinds[0] != "jit" or len(site.kinds) > 1):
            if site.kinds[0] != "filter_jit":
                raise _Manual("captured static values under this transform; hoist by hand")
            static = []  # filter_jit makes every non-array argument static by itself
        if moved and any(k in ("vmap", "pmap", "filter_pmap") for k in site.kinds):
            raise _Manual("moving bound values into a vmapped/pmapped call needs in_axes; hoist by hand")
        func_text = self._code(func).strip()
        if kept:
            inner = ", ".join([func_text, *[self._code(a).strip().rstrip(",").strip() for a in kept]])
            inner_text = f"{self._code(part.func)}({inner})"
        else:
            inner_text = func_text
        value = self._transform_text(site, inner_text, static)
        if site.binding is not None:
            moved_reads: set[str] = set()
            for a in moved:
                moved_reads |= names_read(a.value)
            self._check_not_rebound(site, moved_reads)

        def make_call(call: cst.Call, callee: cst.BaseExpression) -> cst.Call:
            new_args = (
                [cst.Arg(value=a.value) for a in moved_pos]
                + list(call.args)
                + [cst.Arg(value=a.value, keyword=a.keyword, equal=a.equal) for a in moved_kw]
            )
            return call.with_changes(func=callee, args=_with_commas(new_args))

        hoist_names = names_read(site.chain[0].func) | _reads_options(site) | names_read(func)
        for a in kept:
            hoist_names |= names_read(a.value)
        return self._place(
            site,
            decision,
            base=_callee_name_expr(func) or "partial",
            what="partial",
            prelude=[],
            value=value,
            make_call=make_call,
            calls=site.calls,
            replace={},
            hoist_names=hoist_names,
            local_name=self._binding_name(site),
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
        if isinstance(head, cst.Name) and not isinstance(self.idx.resolve(head.value, site.node), cst.Module) and site.loops:
            # `jax.jit(net.apply)` of a local `net = hk.transform(f)`: one function, wrapped once above the loop
            return self._fix_bound_method(site)
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
        stored_function = isinstance(target, cst.Attribute) and target.attr.value in FUNCTION_FIELDS
        if other_uses > 1 and not stored_function:  # `state.apply_fn` reads none of the object's values
            reasons.append(
                "the loop also uses the object; if it changes the object's attributes, the hoisted function keeps the values it was traced with"
            )
        method = target.attr.value if isinstance(target, cst.Attribute) else "method"
        name = self._new_name(method, site)
        hoisted = self._transform_text(site, self._code(target).strip(), [])
        depth = sum(1 for a in self.idx.ancestors(loop_stmt) if isinstance(a, cst.IndentedBlock))
        stmt = self._statement(f"{name} = {hoisted}", indent=4 * depth)
        replace = {call: call.with_changes(func=cst.Name(name)) for call in site.calls}
        what = "function" if stored_function else "method"
        return self._finish(
            site, reasons, f"Wrap the {what} once before the loop as `{name}`", replace, {loop_stmt: [stmt]}, {}
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
        own = fdef.name.value
        names, risky = self._captures(_in_order(free - {own}, fdef.body), fdef.body, site.loops)

        def values_for(loop: cst.CSTNode | None) -> list[Captured]:
            values = self._name_values(site, names, fdef.body, fdef.body, loop)
            if loop is not None and not self._inside(fdef, loop) and any(v.variant for v in values):
                raise _Manual("the def is made before the loop but reads values the loop changes")
            return values

        decision = self._decide(site, values_for)
        self._add_risky(decision, risky)
        args, static = decision.names(TRACED, STATIC), decision.names(STATIC)
        self._check_static_under(site, static)
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
        if any(k in ("vmap", "pmap", "filter_pmap") for k in site.kinds) and args:
            raise _Manual("captured values under vmap/pmap need in_axes=None; hoist by hand")
        # where the def goes, and its name there
        moves = not (decision.target == ABOVE and not self._inside(fdef, decision.loop))
        new_def_name = own
        if decision.target == MODULE and (
            own in self.idx.scope_info(self.ctx.module).bindings or own in self.hoisted_defs
        ):
            new_def_name = self._fresh(f"_{site.function.name.value}_{own}")
        if decision.target == MODULE:
            self.hoisted_defs.add(new_def_name)
        new_params = _append_params(list(params.params), args)
        decorators = list(fdef.decorators)
        if site.kind == "decorated nested def" and static:
            decorators[0] = self._static_decorator(decorators[0], static)
        new_def = fdef.with_changes(
            name=cst.Name(new_def_name),
            params=params.with_changes(params=new_params),
            decorators=decorators,
            leading_lines=[],
        )
        replace: dict = {}
        uses = [
            use
            for use in name_uses(scope.body, own)
            if use is not fdef.name and not any(a is fdef for a in self.idx.ancestors(use))
        ]
        if site.kind == "nested def":
            value = self._transform_text(site, new_def_name, static)
            calls = list(site.calls)
            keywords = {call: any(a.keyword is not None or a.star for a in call.args) for call in calls}
            if any(keywords.values()) and args and any(k in ("vmap", "pmap", "filter_pmap") for k in site.kinds):
                raise _Manual("keyword arguments under vmap/pmap are mapped; add the captured values by hand")
            # other uses of the def (direct calls) must keep seeing it, with the values it captured
            others = [use for use in uses if use is not site.target]
            if others and (args or new_def_name != own or decision.target == FACTORY):
                raise _Manual(f"`{own}` is also used elsewhere in the function")
            local_name = None
        else:
            value = None
            calls = [self.idx.parent(use) for use in uses]
            keywords = {call: any(a.keyword is not None or a.star for a in call.args) for call in calls}
            local_name = new_def_name
        if moves:
            block = self.idx.parent(fdef)
            if isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
                raise _Manual("the def is the only statement of its block")
        return self._place(
            site,
            decision,
            base=own,
            what=f"`{own}`",
            prelude=[new_def] if moves else [],
            value=value,
            make_call=lambda call, callee: self._call_with(call, callee, args, keywords[call]),
            calls=calls,
            replace=replace,
            hoist_names=set(outer_reads),
            local_name=local_name,
            remove=fdef if moves else None,
        )

    def _inside(self, node: cst.CSTNode, loop: cst.CSTNode | None) -> bool:
        return loop is not None and any(a is loop for a in self.idx.ancestors(node))

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
        kept = list(stmt.leading_lines)
        while kept and kept[0].comment is None:
            kept.pop(0)
        self._with_leading_lines(stmt, kept, replace)

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


class _ChangedInPlace(cst.CSTVisitor):
    """Adds to `names` the names whose object a loop changes in place (`_Planner.changed_in`)."""

    def __init__(self, names: set[str], qualify) -> None:
        super().__init__()
        self.names, self.qualify = names, qualify

    def _target(self, target: cst.BaseExpression) -> None:
        while isinstance(target, (cst.Attribute, cst.Subscript)):
            target = target.value
            if isinstance(target, cst.Name):
                self.names.add(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._target(node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in _MUTATING_METHODS
            and isinstance(func.value, cst.Name)
            and self.qualify(func.value) == func.value.value  # not a module: `jnp.sort`
        ):
            self.names.add(func.value.value)


def _in_order(names: set[str], node: cst.CSTNode) -> list[str]:
    """`names` in the order they first appear under `node` (then any not found, sorted)."""
    seen: list[str] = []
    walk(node, _FirstSeen(names, seen))
    return seen + sorted(names - set(seen))


class _FirstSeen(cst.CSTVisitor):
    def __init__(self, names: set[str], seen: list[str]) -> None:
        super().__init__()
        self.names, self.seen = names, seen

    def visit_Name(self, n: cst.Name) -> None:
        if n.value in self.names and n.value not in self.seen:
            self.seen.append(n.value)


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


def _append_params(params: list[cst.Param], names: list[str]) -> list[cst.Param]:
    """`params` with `names` appended, in the layout of the list: one per line when the parameters
    are one per line (a trailing comma before the closing parenthesis is kept)."""
    if not names:
        return params
    inline = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    last = params[-1].comma if params else cst.MaybeSentinel.DEFAULT
    multiline = (
        len(params) >= 2
        and isinstance(last, cst.Comma)
        and isinstance(last.whitespace_after, cst.ParenthesizedWhitespace)
        and isinstance(params[0].comma, cst.Comma)
        and isinstance(params[0].comma.whitespace_after, cst.ParenthesizedWhitespace)
    )
    between = params[0].comma if multiline else inline
    out = [*params[:-1], params[-1].with_changes(comma=between)] if params else []
    for i, name in enumerate(names):
        final = i == len(names) - 1
        comma = (last if multiline else cst.MaybeSentinel.DEFAULT) if final else between
        out.append(cst.Param(name=cst.Name(name), comma=comma))
    return out


def _spelled(names: list[str]) -> str:
    """`cfg`, `cfg` and `mode`, `a`, `b` and `c`."""
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _with_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    out = []
    for i, a in enumerate(args):
        comma = (
            cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if i < len(args) - 1 else cst.MaybeSentinel.DEFAULT
        )
        out.append(a.with_changes(comma=comma))
    return out
