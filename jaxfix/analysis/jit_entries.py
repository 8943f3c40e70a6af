"""Where a module's code enters a JAX trace: the entry half of `jit_contexts.JitContexts`.

A function is entered by a jit/vmap/grad decorator or call (`jax.jit(f, ...)`, through `partial`,
through a factory that returns a nested def), as the body of a lax loop or conditional, or from
another module's traced code (`callgraph.CrossEntry`). For each entry this records the traced
parameters (all but the static ones: `static_argnums`/`static_argnames`, annotations a transform
reads as static, `in_axes=None`, what `eqx.filter_jit` keeps as Python values, what a `partial`
binds), the jit sites, and whether it is differentiated. Functions handed to host callbacks are
never entered. A mixin, so the facts stay on the one `JitContexts` object of the module.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from jaxfix.analysis.defaults import is_hashable_literal
from jaxfix.analysis.jit_records import (
    BODY_ARGS,
    BODY_KEYWORDS,
    CALLED_FROM_ELSEWHERE,
    CALLED_FROM_TESTS,
    FuncInfo,
    JitSite,
    literal_ints,
    literal_strs,
    positional_args,
)
from jaxfix.analysis.static_values import admits_no_array, dtype_params
from jaxfix.analysis.transforms import (
    FILTERED_JITS,
    FILTERED_VMAPS,
    GRAD_NAMES,
    HOST_CALLBACKS,
    JIT_NAMES,
    OLD_STYLE_COND_BODIES,
    OPTION_DISPLAYS,
    PARTIAL_NAMES,
    PASS_THROUGH,
    RECEIVER_CLOSED_OVER,
    STATIC_ANNOTATIONS,
    STATIC_ARGNAMES_OPTIONS,
    STATIC_ARGNUMS_OPTIONS,
    VMAP_NAMES,
    is_old_style_cond,
    keeps_parameters,
    lax_body_arity,
)
from jaxfix.analysis.walk import children, returned_name


class TraceEntries:
    """Mixed into `JitContexts`, which sets the attributes these methods read (`module`, `names`,
    `functions`, `calls`, `aliases`, `nested`, `stored_on`, `external`, `methods`, `module_funcs`,
    `attribute_read`, `host_callbacks`) and defines the name resolution they use
    (`_resolve_callee`, `call_sites_of`, `bind_args`)."""

    # -- entry points -------------------------------------------------------------
    def _transform_of(self, expr: cst.BaseExpression) -> tuple[str, cst.Call | None] | None:
        """(qualified transform, options call) for `jax.jit`, `partial(jax.jit, ...)`, `jax.jit(...)`-factories."""
        qual = self.names.qualify(expr)
        if qual in JIT_NAMES or qual in VMAP_NAMES or qual in PASS_THROUGH:
            return qual, None
        if isinstance(expr, cst.Call):
            fq = self.names.qualify(expr.func)
            pos = positional_args(expr)
            if fq in PARTIAL_NAMES and pos:
                inner = self.names.qualify(pos[0])
                if inner in JIT_NAMES or inner in VMAP_NAMES or inner in PASS_THROUGH:
                    return inner, expr
            if (fq in JIT_NAMES or fq in VMAP_NAMES or fq in PASS_THROUGH) and not pos:
                return fq, expr
        return None

    def _keeps_parameters(self, expr: cst.BaseExpression) -> bool:
        """A decorator applied below a transform hands it the def's parameters (`transforms.
        keeps_parameters`), also as `partial(jax.vmap, ...)` or with options (`jaxtyped(...)`)."""
        if self._transform_of(expr) is not None:
            return True
        return keeps_parameters(self.names.qualify(expr.func if isinstance(expr, cst.Call) else expr))

    def _module_constant(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`NAME`, `tuple(NAME)` or `list(NAME)` where the module binds `NAME` once, at its top
        level, to a literal tuple or list: that literal (jit reads `static_argnames=` when it wraps;
        jsw7460/sb3_jax@heldout13 pin offline_baselines_jax/td3/core.py:11,119,
        `static_argnames=tuple(STATIC_ARGNAMES)`); else `value` itself."""
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value in ("tuple", "list")
            and len(value.args) == 1
            and not value.args[0].star
            and value.args[0].keyword is None
        ):
            inner = value.args[0].value
        else:
            inner = value
        if not isinstance(inner, cst.Name):
            return value
        bound = []  # every store to the name anywhere in the module (nested scopes too: conservative)
        todo: list[cst.CSTNode] = [self.module]
        while todo:
            node = todo.pop()
            todo.extend(children(node))
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
                targets = [node.target]
            elif isinstance(node, cst.For):
                targets = [node.target]
            elif isinstance(node, cst.Global) and any(n.name.value == inner.value for n in node.names):
                return value  # declared global in a function: it may be rebound at run time
            elif isinstance(node, cst.Param) and node.name.value == inner.value:
                return value  # a parameter of that name may shadow the constant where jit is called
            else:
                continue
            if any(isinstance(t, cst.Name) and t.value == inner.value for t in targets):
                bound.append(node)
        top = {id(small) for stmt in self.module.body if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body}
        if len(bound) == 1 and id(bound[0]) in top and isinstance(bound[0], cst.Assign):
            if type(bound[0].value).__name__ in OPTION_DISPLAYS:
                return bound[0].value
        return value

    def _statics(self, site: JitSite, call: cst.Call | None, skip_first_positional: bool) -> None:
        if call is None:
            return
        for key in (*sorted(STATIC_ARGNUMS_OPTIONS), *STATIC_ARGNAMES_OPTIONS):
            arg = _kwarg(call, key)
            if arg is None:
                continue
            arg = arg.with_changes(value=self._module_constant(arg.value))
            if key in STATIC_ARGNUMS_OPTIONS:
                vals = literal_ints(arg.value)
                if vals is None:
                    site.options_known = False
                else:
                    site.static_argnums = tuple(site.static_argnums) + tuple(vals)
            else:
                vals = literal_strs(arg.value)
                if vals is None:
                    site.options_known = False
                else:
                    site.static_argnames = vals

    def _host_callbacks(self) -> set[FuncInfo]:
        """Functions given to `jax.pure_callback`, `io_callback`, `jax.debug.callback`
        (`transforms.HOST_CALLBACKS`): they run on the host with concrete values (measured: they
        see `ArrayImpl`), so their body is not traced, even when they are defined inside a traced
        function (Kinetix's `callback` that logs to wandb from its update step). One that is also
        called directly (`log(x)` beside `jax.debug.callback(log, x)`) runs under the trace too."""
        found: set[FuncInfo] = set()
        called: set[FuncInfo] = set()
        for site in self.calls:
            positions = HOST_CALLBACKS.get(self.names.qualify(site.call.func) or "")
            if positions is None:
                direct = self._resolve_callee(site.call.func, site.caller, allow_attr=False)
                if direct is not None:
                    called.add(direct)
                continue
            for fn_expr in self._body_args(site.call, positions):
                target = self._resolve_callee(fn_expr, site.caller, allow_attr=False)
                if target is not None:
                    found.add(target)
        return found - called

    def _mark(self, info: FuncInfo, reason: str) -> None:
        if info in self.host_callbacks:
            return  # runs on the host, never under a trace
        if not info.in_trace:
            info.in_trace = True
        if reason not in info.reasons:
            info.reasons.append(reason)

    def _apply_jit(self, info: FuncInfo, site: JitSite, offset: int = 0) -> None:
        """`offset`: how many leading parameters the jitted callable has bound (1 for `obj.method`)."""
        info.jit_sites.append(site)
        statics = set(site.static_argnames) | self._annotated_static(info, site.wrapper)
        for i in site.static_argnums:
            if 0 <= i + offset < len(info.positional):
                statics.add(info.positional[i + offset])
        info.static_params |= statics
        self._mark(info, f"jitted ({site.wrapper})")
        if not site.options_known:
            # `static_argnames=frozenset({"N"})`, `NAMES + ("M",)`, a parameter: the static ones are
            # not written out, and any parameter may be among them (the call summaries' `unknown`)
            return
        info.entry_traced |= self._nonstatic_params(info, statics, site.wrapper)

    def _annotated_static(self, info: FuncInfo, wrapper: str) -> set[str]:
        """The parameters `wrapper` makes static by their annotation (`STATIC_ANNOTATIONS`)."""
        generic = STATIC_ANNOTATIONS.get(wrapper)
        if generic is None or not isinstance(info.node, cst.FunctionDef):
            return set()
        params = info.node.params
        return {
            p.name.value
            for p in (*params.posonly_params, *params.params, *params.kwonly_params)
            if p.annotation is not None
            and isinstance(p.annotation.annotation, cst.Subscript)
            and self.names.qualify(p.annotation.annotation.value) == generic
        }

    def _receiver_closed_over(self, info: FuncInfo, had: set[str]) -> None:
        """`jax.vmap(self._zcr_single)`: the transform is given a bound method, so the receiver is
        no argument of it but a value the function closes over; its attributes are the Python
        values and concrete arrays they were (avitai/artifex@5fce040 temporal.py: `len(audio) -
        self.frame_length`, a config int). `had`: what was traced on entry before this transform;
        the receiver stays traced where something else (a decorator, a traced caller) makes it so."""
        if info.positional and info.positional[0] not in had:
            info.entry_traced.discard(info.positional[0])

    def _nonstatic_params(self, info: FuncInfo, statics: set[str], wrapper: str) -> set[str]:
        # filter_jit keeps Python values static (`n: int`, `levels: tuple[int, int]`, `run(x, true=True)`)
        # and so does a parameter the body passes where a dtype goes (`x.astype(dtype)`)
        python = set()
        if wrapper in FILTERED_JITS:
            python = info.python_params | self._literal_at_every_call(info)
            if isinstance(info.node, cst.FunctionDef):
                python |= dtype_params(info.node, self.names.qualify)
            python |= self._untyped_keywords(info)
            python |= self._python_class_params(info)
        return {p for p in info.params if p not in statics and p not in python}

    def _python_class_params(self, info: FuncInfo) -> set[str]:
        """Parameters annotated with a class of this module whose instances hold no arrays (a frozen
        dataclass of settings: `cfg: PCDTrainConfig`): `eqx.filter_jit` keeps them static."""
        if self.python_class is None:
            return set()
        return {p for p, cls in info.class_annotations.items() if "." not in cls and self.python_class(cls)}

    def _untyped_keywords(self, info: FuncInfo) -> set[str]:
        """A `**kwargs` not annotated as arrays: under `eqx.filter_jit` each value is traced only if
        it is an array, and nothing says which are (jeertmans/DiffeRT@d22adc7
        differt/src/differt/geometry/_utils.py: `if epsilon := kwargs.get("epsilon"):` in a
        filter_jit function every caller gives a Python float or None), so what they hold is
        undecidable: never a reason to report."""
        star = info.node.params.star_kwarg
        if star is None:
            return set()
        ann = star.annotation.annotation if star.annotation is not None else None
        if ann is None or self.names.qualify(ann) in ("typing.Any", "object") or admits_no_array(ann, self.names.qualify):
            return {star.name.value}
        return set()

    def _literal_at_every_call(self, info: FuncInfo) -> set[str]:
        """Parameters every call of `info` in the module gives a Python value (passed, or the
        default): a literal (`run(x, true=True)` and `run(x, true=False)`, equinox's tests), or a
        parameter of the caller annotated as admitting no array (`batch_size: int`,
        danielward27/flowjax's `_get_contrastive_idxs`)."""
        sites = self.call_sites_of(info)
        bindings = [(site, self.bind_args(info, site.call)) for site in sites]
        if not bindings or any(b is None for _, b in bindings):
            return set()

        def python(value: cst.BaseExpression | None, caller: FuncInfo | None) -> bool:
            if value is None:
                return False
            if is_hashable_literal(value):
                return True
            return isinstance(value, cst.Name) and caller is not None and value.value in caller.python_params

        return {p for p in info.params if all(python(b.get(p, info.defaults.get(p)), site.caller) for site, b in bindings)}

    def _find_entries(self) -> None:
        for info in list(self.functions.values()):
            node = info.node
            if not isinstance(node, cst.FunctionDef):
                continue
            transforms = [t for d in node.decorators if (t := self._transform_of(d.decorator)) is not None]
            for k, deco in enumerate(node.decorators):
                tr = self._transform_of(deco.decorator)
                if tr is None:
                    continue
                if not all(self._keeps_parameters(below.decorator) for below in node.decorators[k + 1 :]):
                    continue  # what the transform wraps is another function's signature (`keeps_parameters`)
                qual, call = tr
                if qual in JIT_NAMES:
                    site = JitSite(node=deco, wrapper=qual, call=call)
                    self._statics(site, call, False)
                    self._apply_jit(info, site)
                elif qual in VMAP_NAMES:
                    self._mark(info, f"vectorised ({qual})")
                    info.entry_traced |= set(info.params) - self._vmap_static(info, call, wrapper=qual)
                elif qual in GRAD_NAMES:
                    info.differentiated = True
            if transforms and info.is_method and info.in_trace:
                pass  # self is a pytree argument: traced like the rest
        # calls: jax.jit(f, ...), lax bodies, jax.grad(f)
        for site in self.calls:
            call = site.call
            qual = self.names.qualify(call.func)
            pos = positional_args(call)
            if qual in JIT_NAMES or qual in VMAP_NAMES or qual in GRAD_NAMES or qual in PASS_THROUGH:
                if not pos:
                    continue
                target, chain = self._unwrap(pos[0], site.caller)
                if target is None:
                    continue
                bound = self._partial_bound(pos[0], site.caller, target)
                if bound:
                    # `jax.jit(partial(f, flag=True))`: the bound arguments are Python constants
                    self._mark(target, f"{qual.rsplit('.', 1)[-1]} of a partial")
                    statics = self._partial_statics(call, target, bound) if qual in JIT_NAMES else set()
                    target.static_params |= statics
                    target.entry_traced |= set(target.params) - bound - statics
                    if qual in GRAD_NAMES or any(q in GRAD_NAMES for q in chain):
                        target.differentiated = True
                    continue
                if qual in GRAD_NAMES or any(q in GRAD_NAMES for q in chain):
                    target.differentiated = True
                if qual in JIT_NAMES and (self._unread_wrapper(call) or self._unused_alias(call)):
                    continue
                if qual in JIT_NAMES:
                    jsite = JitSite(node=call, wrapper=qual, call=call)
                    self._statics(jsite, call, True)
                    jsite.alias = self._assigned_name(call)
                    if not chain:
                        # `jax.jit(self.do, static_argnums=1)`: a bound method's positions count after `self`
                        bound_method = target.is_method and isinstance(pos[0], cst.Attribute)
                        had = set(target.entry_traced)
                        self._apply_jit(target, jsite, offset=1 if bound_method else 0)
                        if bound_method and qual in RECEIVER_CLOSED_OVER:
                            self._receiver_closed_over(target, had)
                        if jsite.alias:
                            self.aliases.setdefault(jsite.alias, target)
                    else:
                        # `jax.jit(jax.vmap(f, ...), static_argnums=(3, 4))`: vmap/grad keep `f`'s
                        # positions, so the jit's static arguments are `f`'s (flax lm1b predict_step)
                        self._mark(target, f"jitted through {', '.join(chain)}")
                        statics = set(jsite.static_argnames) | {
                            target.positional[i] for i in jsite.static_argnums if 0 <= i < len(target.positional)
                        }
                        target.static_params |= statics
                        target.entry_traced |= set(target.params) - statics
                elif qual in VMAP_NAMES:
                    self._mark(target, f"vectorised ({qual})")
                    # `jax.vmap(self.twist, in_axes=[0, 0, None])`: a bound method's axes count after `self`
                    bound_method = target.is_method and isinstance(pos[0], cst.Attribute)
                    had = set(target.entry_traced)
                    target.entry_traced |= set(target.params) - self._vmap_static(
                        target, call, 1 if bound_method else 0, wrapper=qual
                    )
                    if bound_method and qual in RECEIVER_CLOSED_OVER:
                        self._receiver_closed_over(target, had)
            if qual in BODY_ARGS and qual not in VMAP_NAMES:
                old_cond = _old_style_cond(qual, call)
                for fn_expr in self._body_args(call, OLD_STYLE_COND_BODIES if old_cond else BODY_ARGS[qual]):
                    # a name the scope rebinds to `partial(body, ...)` (`neighbor_fn = partial(neighbor_fn,
                    # max_occupancy=nbrs.max_occupancy)`) is that partial, not the def of the same name
                    bound = self._partial_body(fn_expr, site.caller)
                    if bound is not None:
                        # `fori_loop(0, n, partial(body, cfg=c), init)`, or a name bound once to
                        # that partial: the lax call passes the parameters the partial leaves
                        # open; the bound ones are traced where the partial's arguments are
                        # (`_propagate_calls` reads the partial as a call)
                        target, fixed = bound
                        self._mark(target, f"body of {qual.rsplit('.', 1)[-1]} (through a partial)")
                        open_params = [p for p in target.positional[len(fixed[0]) :] if p not in fixed[1]]
                        arity = 1 if old_cond else _body_arity(qual, call)
                        target.entry_traced |= set(open_params[:arity] if arity is not None else open_params)
                        continue
                    target = self._resolve_callee(fn_expr, site.caller, allow_attr=False)
                    if target is not None:
                        self._mark(target, f"body of {qual.rsplit('.', 1)[-1]}")
                        arity = 1 if old_cond else _body_arity(qual, call)
                        target.entry_traced |= set(target.params) - _defaulted_past(target, arity)
                        # operands the call passes reach the body's defaulted parameters too
                        if arity is not None:
                            target.external_traced |= {p for p in target.positional[:arity] if p in target.defaults}

    def _vmap_static(self, info: FuncInfo, call: cst.Call | None, offset: int = 0, wrapper: str = "") -> set[str]:
        """Parameters the vmap leaves unmapped and unbatched: `in_axes=None`, and under
        `eqx.filter_vmap` (its default `in_axes` maps arrays only) the Python values
        (`_nonstatic_params`' reading: annotated, or a Python value at every call)."""
        python = set()
        if wrapper in FILTERED_VMAPS:
            python = info.python_params | self._literal_at_every_call(info)
        if call is None:
            return python
        arg = _kwarg(call, "in_axes")
        if arg is None:
            pos = positional_args(call)
            arg_value = pos[1] if len(pos) > 1 else None
        else:
            arg_value = arg.value
        out = set(python)
        for i, axis in enumerate(_axes(arg_value) or ()):
            if isinstance(axis, cst.Name) and axis.value == "None" and i + offset < len(info.positional):
                out.add(info.positional[i + offset])
        return out

    def _body_args(self, call: cst.Call, positions: tuple[int, ...]) -> list[cst.BaseExpression]:
        pos = positional_args(call)
        out = []
        for i in positions:
            if i == -1:
                if len(pos) > 1 and isinstance(pos[1], (cst.List, cst.Tuple)):
                    out.extend(el.value for el in pos[1].elements)
            elif i < len(pos):
                out.append(pos[i])
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in BODY_KEYWORDS:
                out.append(arg.value)
        return out

    def _partial_body(self, expr, scope: FuncInfo | None):
        """For a lax body written `partial(f, *a, **k)`, or a name its scope binds exactly once to
        such a call: (`f`'s FuncInfo, (the positional arguments bound, the keywords bound)).
        None for anything else (a star argument, a name bound twice, `f` not of this module)."""
        if isinstance(expr, cst.Name):
            body = scope.node.body if scope is not None and isinstance(scope.node, cst.FunctionDef) else self.module
            values = [
                stmt.value
                for stmt in _flat_statements(body)
                if isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.AugAssign))
                and any(
                    isinstance(t, cst.Name) and t.value == expr.value
                    for t in ([t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target])
                )
            ]
            if len(values) != 1:
                return None
            expr = values[0]
        if not (isinstance(expr, cst.Call) and self.names.qualify(expr.func) in PARTIAL_NAMES):
            return None
        pos = positional_args(expr)
        if not pos or any(a.star for a in expr.args):
            return None
        target = self._resolve_callee(pos[0], scope, allow_attr=False)
        if target is None or target.is_method:
            return None
        return target, (pos[1:], {a.keyword.value for a in expr.args if a.keyword is not None})

    def _partial_statics(self, call: cst.Call, target: FuncInfo, bound: set[str]) -> set[str]:
        """The static arguments of `jax.pmap(partial(f, ...), static_broadcasted_argnums=(0, 1))`
        (jit's alike) as `f`'s parameters: the positions count from the first parameter the partial
        leaves open (scenic's polyvit `train_step(task, dataset, modality, ...)`, pmapped as a
        partial with keywords bound and its three leading arguments static)."""
        jsite = JitSite(node=call, wrapper="", call=call)
        self._statics(jsite, call, True)
        lead = 0
        while lead < len(target.positional) and target.positional[lead] in bound:
            lead += 1
        open_positional = target.positional[lead:]
        return set(jsite.static_argnames) | {
            open_positional[i] for i in jsite.static_argnums if -len(open_positional) <= i < len(open_positional)
        }

    def _partial_bound(self, expr, scope: FuncInfo | None, target: FuncInfo) -> set[str]:
        """Parameters of `target` fixed by `functools.partial` on the way to a transform: written in
        place (`jax.jit(partial(f, n=3))`), or through a name of the same scope rebound to a partial of
        the same function (`f = partial(f, flag=True)` ... `jax.pmap(f)`)."""
        while isinstance(expr, cst.Call) and self.names.qualify(expr.func) not in PARTIAL_NAMES:
            pos = positional_args(expr)
            if not pos:
                return set()
            expr = pos[0]
        partials: list[cst.Call] = []
        if isinstance(expr, cst.Call):
            partials.append(expr)
        elif isinstance(expr, cst.Name):
            body = scope.node.body if scope is not None and isinstance(scope.node, cst.FunctionDef) else self.module
            for stmt in _flat_statements(body):
                if (
                    isinstance(stmt, cst.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0].target, cst.Name)
                    and stmt.targets[0].target.value == expr.value
                    and isinstance(stmt.value, cst.Call)
                    and self.names.qualify(stmt.value.func) in PARTIAL_NAMES
                ):
                    partials.append(stmt.value)
        out: set[str] = set()
        for call in partials:
            pos = positional_args(call)
            if not pos or self._resolve_callee(pos[0], scope, allow_attr=False) is not target:
                continue
            if any(a.star for a in call.args):
                continue
            params = list(target.positional)
            out.update(params[: len(pos) - 1])
            out.update(a.keyword.value for a in call.args if a.keyword is not None)
        return out

    def _unwrap(self, expr, scope) -> tuple[FuncInfo | None, list[str]]:
        chain: list[str] = []
        while isinstance(expr, cst.Call):
            q = self.names.qualify(expr.func)
            pos = positional_args(expr)
            if q in PARTIAL_NAMES and pos:
                expr = pos[0]
                continue
            if q in JIT_NAMES or q in VMAP_NAMES or q in PASS_THROUGH:
                if not pos:
                    return None, chain
                chain.append(q)
                expr = pos[0]
            else:
                return self._made_by(expr, scope), chain
        return self._resolve_callee(expr, scope, allow_attr=False), chain

    def _made_by(self, call: cst.Call, scope: FuncInfo | None) -> FuncInfo | None:
        """The nested def a factory of this file returns: `jax.jit(make_step(lr))` compiles the
        `step` that `def make_step(lr): def step(p, x): ...; return step` hands out, when every
        `return` of the factory names that one def (research scripts' `jax.jit(make_train_step(cfg))`)."""
        factory = self._resolve_callee(call.func, scope, allow_attr=False)
        if factory is None or not isinstance(factory.node, cst.FunctionDef):
            return None
        name = returned_name(factory.node)
        made = self.nested.get(factory, {}).get(name) if name is not None else None
        return made if made is not None and isinstance(made.node, cst.FunctionDef) else None

    def _unread_wrapper(self, call: cst.Call) -> bool:
        """`self._compiled = jax.jit(self._sample_fn)` where nothing in the project reads
        `_compiled`: the jitted function is never called, so the jit traces nothing
        (demon2036/MLLM-JAX@8b19c02 deprecated/MLLM_JAX/language/gemma/sampler.py:127, its calls
        commented out: `_sample_fn` runs only eagerly, heldout12 JAX302/JAX401 wrong)."""
        if self.attribute_read is None:
            return False
        attr = self.stored_on.get(id(call))
        return attr is not None and not self.attribute_read(attr)

    def _unused_alias(self, call: cst.Call) -> bool:
        """`f_jit = jax.jit(f)` at module level where no code uses `f_jit`: the jitted function is
        never called, so the jit traces nothing (heldout26, after its measurement: sfincs_jax
        v3_driver.py binds `solve_v3_full_system_linear_gmres_jit` and nothing calls it, while the
        CLI, the I/O layer and the tests call the host driver eagerly: 20 wrong JAX301/JAX304 in
        the driver and what it calls)."""
        if self.name_used is None:
            return False
        name = self._assigned_name(call)
        return name is not None and not self.name_used(name)

    def _assigned_name(self, call: cst.Call) -> str | None:
        """The name a module-level `name = call` binds (the values indexed once: asked per call,
        a walk of the module body each made a file with thousands of jits quadratic)."""
        if getattr(self, "_assigned", None) is None:
            self._assigned = {}
            for stmt in self.module.body:
                for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                    target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
                    if isinstance(target, cst.Name):
                        self._assigned.setdefault(id(small.value), target.value)
        return self._assigned.get(id(call))

    def _enter_external(self) -> None:
        """Functions that traced code of another module calls with traced arguments."""
        for name, entry in self.external.items():
            cls, _, fname = name.rpartition(".")
            if cls:
                found = [m for m in self.methods.get(fname, []) if m.class_name == cls and m.parent is None]
            else:
                found = [self.module_funcs[fname]] if fname in self.module_funcs else []
            if len(found) != 1:
                continue
            info = found[0]
            kind = CALLED_FROM_TESTS if entry.from_tests else CALLED_FROM_ELSEWHERE
            self._mark(info, f"{kind}: {entry.reason}")
            info.called_from = entry.reason
            traced = set(entry.traced) & set(info.params)
            info.external_traced |= traced
            info.entry_traced |= traced


def _kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None



def _axes(expr: cst.BaseExpression | None) -> list[cst.BaseExpression] | None:
    """The elements of an `in_axes` sequence: a tuple or list display, also built with `+` and
    `* n` (`[0] + [None] * 9`, OTT's k-means); None when not written out."""
    if isinstance(expr, (cst.Tuple, cst.List)):
        return [el.value for el in expr.elements]
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Add):
            left, right = _axes(expr.left), _axes(expr.right)
            return None if left is None or right is None else left + right
        if isinstance(expr.operator, cst.Multiply):
            seq, times = (expr.left, expr.right) if isinstance(expr.right, cst.Integer) else (expr.right, expr.left)
            items = _axes(seq)
            if items is not None and isinstance(times, cst.Integer) and int(times.value) <= 64:
                return items * int(times.value)
    return None


def _old_style_cond(qual: str | None, call: cst.Call) -> bool:
    """`call` is `lax.cond(pred, true_operand, true_fun, false_operand, false_fun)`
    (`transforms.is_old_style_cond`)."""
    pos = positional_args(call)
    plain = not any(a.star or a.keyword is not None for a in call.args)
    second = pos[1] if len(pos) > 1 else None
    return is_old_style_cond(qual, len(pos), isinstance(second, (cst.Tuple, cst.List, cst.Integer, cst.Float)), plain)


def _body_arity(qual: str, call: cst.Call) -> int | None:
    """How many arguments the body of the lax call `call` gets (`transforms.lax_body_arity`)."""
    plain = not any(a.star or a.keyword is not None for a in call.args)
    return lax_body_arity(qual, len(call.args), plain)


def _defaulted_past(info: "FuncInfo", passed: int | None) -> set[str]:
    """Parameters of `info` past the first `passed` positional ones that have a default: a body
    called with fewer arguments runs them with their (Python) default."""
    if passed is None:
        return set()
    return {p for p in info.positional[passed:] if p in info.defaults}



def _flat_statements(body) -> Iterator[cst.BaseSmallStatement]:
    """The small statements of a function body or module, inside `if`/`with`/loops/`try` too, but
    not inside nested functions or classes."""
    stmts = body.body
    if isinstance(stmts, cst.BaseSuite):
        stmts = stmts.body
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        elif isinstance(stmt, cst.BaseCompoundStatement):
            for block in (getattr(stmt, "body", None), getattr(getattr(stmt, "orelse", None), "body", None)):
                if isinstance(block, cst.IndentedBlock):
                    yield from _flat_statements(block)
            if isinstance(getattr(stmt, "orelse", None), cst.If):
                yield from _flat_statements(cst.IndentedBlock(body=[stmt.orelse]))
            for h in getattr(stmt, "handlers", ()):
                yield from _flat_statements(h.body)
