"""The hoist planner's fix for each kind of site (part of `planner._Planner`): a lambda, a
`functools.partial`, a module function, a bound method, a method of a new object, a nested def.
"""

from __future__ import annotations

import libcst as cst

from codemods.jit_placement.captures import (
    ABOVE,
    FACTORY,
    MODULE,
    STATIC,
    TRACED,
    Captured,
    ManualFix,
    above,
    leave,
)
from codemods.jit_placement.plan_layout import (
    append_params,
    callee_name_expr,
    with_commas,
)
from codemods.jit_placement.plan_values import in_order, reads_options
from codemods.jit_placement.site import Site
from codemods.jit_placement.site_kinds import module_class, single_module_binding
from jaxfix.analysis.pytrees import pytree_classes
from jaxfix.analysis.scopes import COMPREHENSIONS, name_uses, names_read
from jaxfix.analysis.transforms import FUNCTION_FIELDS
from jaxfix.model import Fix

_Manual = ManualFix  # the planner's name for "the fix must be done by hand"


class SiteFixes:
    """The fix of each kind of site (`planner._Planner.plan_fix` picks one)."""

    # lambda -----------------------------------------------------------------------------
    def _fix_lambda(self, site: Site, lam: cst.Lambda) -> tuple[Fix, str]:
        self._check_options(site, site.node)
        local_defaults, _ = self._captures(sorted(_default_reads(lam.params)), lam, site.loops)
        if local_defaults:
            # `lambda t, impl=fn: impl(nu, t)` per trip of `for name, fn in variants.items()`: the
            # default is evaluated where the lambda is made, so hoisted it would read a name the
            # module does not bind (philipjones77/arbPlusJAX tests/test_bessel_jax_contract.py:95)
            raise _Manual(f"the lambda's defaults read local `{local_defaults[0]}`")
        free = self.idx.free_names(lam)
        names, risky = self._captures(in_order(free, lam.body), lam, site.loops)
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
            hoist_names=names_read(site.chain[0].func) | reads_options(site),
            local_name=self._binding_name(site),
        )

    def _fix_partial(self, site: Site, part: cst.Call) -> tuple[Fix, str]:
        self._check_options(site, site.node)
        func = part.args[0].value
        bound = list(part.args[1:])
        if any(a.star for a in bound):
            raise _Manual("the partial unpacks *args/**kwargs; hoist by hand")
        captured, risky = self._captures(in_order(names_read(part), part), part, site.loops)
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
            return call.with_changes(func=callee, args=with_commas(new_args))

        hoist_names = names_read(site.chain[0].func) | reads_options(site) | names_read(func)
        for a in kept:
            hoist_names |= names_read(a.value)
        return self._place(
            site,
            decision,
            base=callee_name_expr(func) or "partial",
            what="partial",
            prelude=[],
            value=value,
            make_call=make_call,
            calls=site.calls,
            replace={},
            hoist_names=hoist_names,
            local_name=self._binding_name(site),
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
        name = self._new_name(callee_name_expr(target) or "fn", site)
        hoisted = self._transform_text(site, self._code(target).strip(), [])
        stmt = self._statement(f"{name} = {hoisted}")
        before, after = self._hoist_module(
            site, [stmt], names_read(target) | names_read(site.chain[0].func) | reads_options(site)
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
        before, after = self._hoist_module(site, [stmt], {cls_name} | reads_options(site))
        call = site.calls[0]
        new_args = with_commas([cst.Arg(value=ctor), *[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in call.args]])
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
        outer_reads = _default_reads(fdef.params)
        for dec in fdef.decorators:
            outer_reads |= names_read(dec.decorator)
        dec_args, _ = self._captures(sorted(outer_reads), fdef, site.loops)
        if dec_args:
            raise _Manual(f"the def's decorators or defaults read local `{dec_args[0]}`")
        if site.chain:
            self._check_options(site, site.node)
        own = fdef.name.value
        names, risky = self._captures(in_order(free - {own}, fdef.body), fdef.body, site.loops)

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
        new_params = append_params(list(params.params), args)
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


def _default_reads(params: cst.Parameters) -> set[str]:
    """The names the parameters' defaults read: evaluated where the function is made."""
    reads: set[str] = set()
    for p in (*params.params, *params.kwonly_params, *params.posonly_params):
        if p.default is not None:
            reads |= names_read(p.default)
    return reads
