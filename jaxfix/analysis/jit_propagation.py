"""How a trace spreads through a module: the propagation half of `jit_contexts.JitContexts`.

From the entries (`jit_entries`), a worklist analyses each traced function (`traced.analyse_function`)
and pushes its traced values into what it runs: the functions and methods it calls with traced
arguments (`call_target`: also a linen `model.apply`, a `partial` or a transform built in the
trace, a traced model parameter's `__call__`), the properties it reads on traced objects, the
`__post_init__`/`__check_init__` of the pytree classes it builds, and the functions nested in
it, until nothing grows. A mixin, so the facts stay on the one `JitContexts` object of the module.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.defaults import is_hashable_literal, python_default
from jaxfix.analysis.jit_records import FuncInfo, positional_args
from jaxfix.analysis.traced import FunctionFacts, analyse_function
from jaxfix.analysis.transforms import JIT_NAMES, LINEN_APPLY, PARTIAL_NAMES, PASS_THROUGH, VMAP_NAMES


class TracePropagation:
    """Mixed into `JitContexts`, which sets the attributes these methods read (`functions`,
    `names`, `methods`, `module_funcs`, `module_names`, `pytree_classes`, `static_classes`,
    `static_fields`, `static_attrs`, `class_nodes`, `flax_classes`, `linen_classes`, `instances`,
    `host_callbacks`, `call_oracle`, `class_fields`, `instance_class`) and defines the name
    resolution and entry facts they use (`_resolve_callee`, `_lookup`, `_method_of`, `_mark`,
    `_unwrap`, `_transform_of`, `call_sites_of`, `bind_args`)."""

    # -- propagation --------------------------------------------------------------
    def _outer_lookup(self, info: FuncInfo):
        parent = info.parent

        def lookup(name: str) -> bool:
            p = parent
            while p is not None:
                if p.facts is not None and name in p.facts.locals:
                    return name in p.facts.all_traced
                p = p.parent
            return False

        return lookup

    def _passed_explicitly(self, info: FuncInfo, param: str) -> bool:
        """Some call of `info` in the module passes `param` a value that may be traced: anything
        but a hashable literal (`_scan_fun(state, val, first=True)` beside `lax.scan(_scan_fun,
        ...)` keeps `first` a Python bool everywhere)."""
        decorated = isinstance(info.node, cst.FunctionDef) and any(
            self._transform_of(d.decorator) is not None for d in info.node.decorators
        )
        for site in self.call_sites_of(info):
            bound = self.bind_args(info, site.call)
            if bound is None:
                return True
            if param in bound and not (
                is_hashable_literal(bound[param]) and not decorated and self._plain_call(site.call)
            ):
                return True
        return False

    def _plain_call(self, call: cst.Call) -> bool:
        """A call of the function itself, not through a transform (`jax.jit(jax.jacrev(f))(r, 0)`)
        or a jitted alias (`f_jit(r, 0)`): those trace a literal argument like any other."""
        func = call.func
        if isinstance(func, cst.Call):
            return False
        return not (isinstance(func, cst.Name) and func.value in self.aliases)

    def _rooted_at_param(self, expr: cst.BaseExpression, info: FuncInfo) -> bool:
        """`model`, `self.model`, `cfg.net` where the head is a parameter of `info` not rebound in it."""
        while isinstance(expr, cst.Attribute):
            expr = expr.value
        if not isinstance(expr, cst.Name) or expr.value not in info.params:
            return False
        return info.facts is None or expr.value not in self._locals_of(info)

    def _param_fields(self, info: FuncInfo, receiver: str | None) -> dict[str, frozenset[str]]:
        """Parameters annotated with a class (of this module, or with a project index of another
        one): the class's fields that hold Python data, read as static on the parameter."""
        out: dict[str, frozenset[str]] = {}
        for param, written in info.class_annotations.items():
            if param == receiver:
                continue
            found = self._fields_memo.get(written)
            if found is None:
                if written in self.static_fields and written not in self.module_funcs:
                    found = frozenset(self.static_fields[written])
                elif self.class_fields is not None:
                    found = self.class_fields(written)
                else:
                    found = frozenset()
                self._fields_memo[written] = found
            if found:
                out[param] = found
        return out

    def _sequence_params(self, info: FuncInfo) -> set[str]:
        """Parameters that every call site in the module passes a tuple/list display (`ids=(i, j)`),
        whose default, if any, is one too or None: Python sequences, not arrays."""
        if isinstance(info.node, cst.Lambda) or info.jit_sites:
            return set()
        sites = self.call_sites_of(info)
        if not sites:
            return set()
        out = set()
        for p in info.params:
            default = info.defaults.get(p)
            if default is not None and not (
                isinstance(default, (cst.Tuple, cst.List))
                or (isinstance(default, cst.Name) and default.value == "None")
            ):
                continue
            ok = True
            for site in sites:
                bound = self.bind_args(info, site.call)
                if bound is None:
                    ok = False
                    break
                arg = bound.get(p)
                if arg is None:
                    if default is None:
                        ok = False
                        break
                elif not isinstance(arg, (cst.Tuple, cst.List, cst.ListComp)):
                    ok = False
                    break
            if ok:
                out.add(p)
        return out

    def _entry(self, info: FuncInfo) -> set[str]:
        entry = set(info.entry_traced) - info.static_params
        if info.is_method and info.positional and info.class_name not in self.pytree_classes:
            # an instance of a plain class cannot be a traced argument: `self` is a Python object
            entry.discard(info.positional[0])
        for p in list(entry):
            if info.class_annotations.get(p) in self.static_classes:
                entry.discard(p)  # `cfg: Config` of a `register_static` class: hashed, never traced
                continue
            default = info.defaults.get(p)
            if p in info.external_traced:
                continue  # passed traced by a call in another module
            # a nested def's defaults are evaluated in its enclosing function: only where that
            # function is not traced itself can a name there not hold a tracer
            nested = info.parent is not None and (info.parent.in_trace or bool(info.parent.reasons))
            if default is not None and python_default(default, nested) and not self._passed_explicitly(info, p):
                entry.discard(p)  # never passed: stays the Python default under jit (`defaults`)
        return entry

    def _propagate(self) -> None:
        """Worklist to a fixpoint: analyse each traced function, push traced arguments into the
        functions it calls, re-analyse those whose traced entry grew (and nested functions, whose
        free variables come from the enclosing trace)."""
        for info in self.functions.values():
            if info.parent is not None and info not in self.host_callbacks:
                self._children.setdefault(info.parent, []).append(info)
        work = [i for i in self.functions.values() if i.in_trace]
        queued = set(work)
        budget = 20 * max(len(self.functions), 1)
        while work and budget > 0:
            budget -= 1
            info = work.pop(0)
            queued.discard(info)
            entry = self._entry(info)
            receiver = info.positional[0] if info.is_method and info.positional else None
            facts = analyse_function(
                info.node,
                self.names,
                entry,
                self._outer_lookup(info),
                receiver=receiver,
                static_fields=self.static_fields.get(info.class_name or "", ()),
                param_fields=self._param_fields(info, receiver),
                sequence_params=self._sequence_params(info),
                static_attrs=self.static_attrs,
                calls=self.call_oracle,
            )
            old = info.facts
            info.facts = facts
            wake: list[FuncInfo] = []
            if old is None or old.all_traced != facts.all_traced:
                for child in self._children.get(info, ()):
                    if child in self.host_callbacks:
                        continue  # defined in traced code, run on the host (`jax.debug.callback(child, ...)`)
                    if not child.in_trace:
                        child.in_trace = True
                        child.reasons.append(f"defined inside traced `{info.name}`")
                    wake.append(child)
            wake.extend(self._propagate_calls(info, facts))
            for other in wake:
                if other not in queued:
                    queued.add(other)
                    work.append(other)

    def _linen_applied(self, call: cst.Call) -> FuncInfo | None:
        """The `__call__` that `model.apply(variables, *args)` runs (flax.linen's `Module.apply`,
        `transforms.LINEN_APPLY`): `model` a module-level instance of a linen module class of this
        module, or any receiver when the module defines exactly one linen module class with a
        `__call__`. A `method=` argument (another method runs) or a positional star is no call."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in LINEN_APPLY) or not call.args:
            return None
        head = func.value
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name) and head.value in self.names.bindings:
            return None  # `nn.apply(fn, module)`: a module's function, not a model's method
        if call.args[0].star or call.args[0].keyword is not None or any(
            a.keyword is not None and a.keyword.value == "method" for a in call.args
        ):
            return None
        linen = sorted(self.linen_classes)
        if isinstance(func.value, cst.Name) and self.instances.get(func.value.value) in linen:
            return self._method_of(self.instances[func.value.value], "__call__")
        calls = [m for name in linen if (m := self._method_of(name, "__call__")) is not None]
        return calls[0] if len(calls) == 1 else None

    def call_target(
        self, call: cst.Call, info: FuncInfo, facts: FunctionFacts, env, *, guess: bool = True
    ) -> tuple[FuncInfo | None, cst.BaseExpression | None, cst.Call]:
        """(the function `call` runs, the object it runs on as `self` or None, the call as that
        function sees it). Beyond a plain call of a function or method of this module: a linen
        `model.apply(variables, x)` runs `__call__` on `x`; a `partial(f, ...)` built in traced code,
        and a transform applied there (`nnx.value_and_grad(loss_fn)(model, x)`), run `f` in this
        trace. With `guess`, calling a traced parameter by its name (`model(x)`) runs the `__call__`
        of the one model class of the module that defines one (a flax or equinox module: a guess
        the proof, `proven_traced`, does not make). Not a method or attribute of the parameter
        (`batch.pop("labels")`, `state.apply_fn(x)`), nor a plain pytree's `__call__`: in
        sanchit-gandhi/seq2seq-speech (heldout9) those guesses ran a host-side
        `@flax.struct.dataclass` data collator in pmapped steps (`to_dtype(x)`, `batch.pop(...)`):
        6 wrong JAX402 with safe fixes."""
        callee = self._resolve_callee(call.func, info)
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if callee is None and isinstance(call.func, cst.Name) and call.func.value in info.class_annotations:
            # `model(x)` with `model: Model` (a class of this module): `Model.__call__` on `model`
            callee = self._method_of(info.class_annotations[call.func.value], "__call__")
            receiver = call.func if callee is not None else None
        if callee is None and (callee := self._passed_model_call(call.func, info)) is not None:
            receiver = call.func  # `model(x)`, `model` an `MLP(...)` at every call: `MLP.__call__`
        if (
            callee is None
            and guess
            and isinstance(call.func, cst.Name)
            and self._rooted_at_param(call.func, info)
            and facts.expr_traced(call.func, env)
        ):
            # calling a traced argument (`model(x)`): the `__call__` of the one model class of the
            # module that defines it. Locals (`partial(...)` objects, closures) are not guessed at.
            models = self._model_classes()
            candidates = [m for m in self.methods.get("__call__", []) if m.is_method and m.class_name in models]
            if len(candidates) == 1:
                callee, receiver = candidates[0], call.func
        if callee is None and (applied := self._linen_applied(call)) is not None:
            # `model.apply(variables, x, train)`: the linen module's `__call__` runs on `x`, `train`
            callee, receiver = applied, None
            call = call.with_changes(args=call.args[1:])
        if callee is None and self.names.qualify(call.func) in PARTIAL_NAMES:
            # `partial(f, cfg=v)` built in traced code: a deferred call of `f`, which can only
            # run inside this trace (its arguments are this trace's values)
            pos = positional_args(call)
            callee = self._resolve_callee(pos[0], info, allow_attr=False) if pos else None
            if callee is not None and not callee.is_method and not call.args[0].star:
                call = call.with_changes(func=pos[0], args=call.args[1:])
            else:
                callee = None
        if callee is None and isinstance(call.func, cst.Call):
            # `nnx.value_and_grad(loss_fn)(model, x)` in traced code: the transformed function
            # runs inside this trace, on these arguments (a transform under a trace is inlined)
            inner = call.func
            qual = self.names.qualify(inner.func)
            pos = positional_args(inner)
            if pos and (qual in PASS_THROUGH or qual in JIT_NAMES or qual in VMAP_NAMES):
                target, chain = self._unwrap(pos[0], info)
                if target is not None and not chain and not target.is_method:
                    callee = target
                    call = call.with_changes(func=pos[0])
                elif target is None and (model_call := self._passed_model_call(pos[0], info)) is not None:
                    callee, receiver = model_call, pos[0]  # equinox's `jax.vmap(model)(x)`
                    call = call.with_changes(func=pos[0])
        if callee is None and isinstance(call.func, cst.Name) and (wrapped := self._local_transform(call.func, info)):
            # `grad_fn = nnx.value_and_grad(loss_fn, has_aux=True)`, then `grad_fn(model, batch)`
            target, chain = self._unwrap(wrapped, info)
            if target is not None and not chain and not target.is_method:
                callee, call = target, call.with_changes(func=wrapped)
        return callee, receiver, call

    def _local_transform(self, name: cst.Name, info: FuncInfo) -> cst.BaseExpression | None:
        """`f` when `name` is bound once in `info`'s function, to a transform of `f` that passes
        the arguments through (`grad_fn = nnx.value_and_grad(loss_fn)`: Flax's training steps)."""
        if self._scopes is None or not isinstance(info.node, cst.FunctionDef):
            return None
        bindings = self._scopes().scope_info(info.node).bindings.get(name.value, [])
        if len(bindings) != 1 or not isinstance(bindings[0], cst.Assign) or len(bindings[0].targets) != 1:
            return None
        value = bindings[0].value
        if not (isinstance(value, cst.Call) and isinstance(bindings[0].targets[0].target, cst.Name)):
            return None
        pos = positional_args(value)
        qual = self.names.qualify(value.func)
        return pos[0] if pos and (qual in PASS_THROUGH or qual in JIT_NAMES or qual in VMAP_NAMES) else None

    def _passed_model_call(self, func: cst.BaseExpression, info: FuncInfo) -> FuncInfo | None:
        """`MLP.__call__` when `func` is a parameter that every call this module shows gives an
        `MLP(...)` (a flax or equinox model class of the module; `ValueKinds.instance_class`, which
        follows a nested `loss_fn` through `nnx.value_and_grad(loss_fn)(model)`). A binding whose
        class is not known (`model, opt = step(model, opt)` in the loop) does not stop it: the first
        call gets the `MLP`, so its `__call__` runs under the trace."""
        if self.instance_class is None or not isinstance(func, cst.Name) or not self._rooted_at_param(func, info):
            return None
        cls = self.instance_class(func, func, some=True)
        return self._method_of(cls, "__call__") if cls in self._model_classes() else None

    def _model_classes(self) -> frozenset[str]:
        """The module's flax (nnx, linen) and equinox module classes: models, whose `__call__` a
        traced `model(x)` may run (`call_target`'s guess); a plain pytree (`flax.struct.dataclass`)
        with a `__call__` is no candidate (memoised: asked at every guessed call)."""
        if self._models is not None:
            return self._models
        found = set(self.flax_classes)
        grew = True
        while grew:
            grew = False
            for node in self.class_nodes:
                name = node.name.value
                if name in found or name not in self.pytree_classes:
                    continue
                for base in node.bases:
                    qual = self.names.qualify(base.value) or ""
                    if qual.startswith("equinox.") and qual.endswith("Module") or (
                        isinstance(base.value, cst.Name) and base.value.value in found
                    ):
                        found.add(name)
                        grew = True
                        break
        self._models = frozenset(found)
        return self._models

    def _propagate_calls(self, info: FuncInfo, facts: FunctionFacts) -> list[FuncInfo]:
        woken: list[FuncInfo] = []
        for node, stmt_env in self._calls_in(info):
            resolved = self._resolve_callee(node.func, info)
            if isinstance(node.func, cst.Name) and (resolved is None or resolved.name == "__init__"):
                cls = node.func.value if resolved is None else resolved.class_name
                if self._lookup(cls, info) is resolved and any(facts.expr_traced(a.value, stmt_env) for a in node.args):
                    woken.extend(self._construction_hooks(cls, info))
            callee, receiver, call = self.call_target(node, info, facts, stmt_env)
            if callee is None or callee is info:
                continue
            bound = self.bind_args(callee, call)
            if bound is None:
                newly = self._star_traced(callee, call, facts, stmt_env)
            else:
                newly = {pname for pname, arg in bound.items() if facts.expr_traced(arg, stmt_env)}
            # `def set_cost(self, ..., use_danskin: bool)`: a parameter annotated as admitting no
            # array gets a Python value in a working program (OTT); a jit entry still traces it
            newly -= callee.python_params
            if callee.is_method and receiver is not None and callee.positional:
                if callee.class_name in self.pytree_classes and facts.expr_traced(receiver, stmt_env):
                    newly.add(callee.positional[0])
            if newly and not newly <= callee.entry_traced:
                callee.entry_traced |= newly
                woken.append(callee)
            if newly and not callee.in_trace:
                self._mark(callee, f"called from traced `{info.name}`")
                woken.append(callee)
        # properties read on traced objects
        for attr, env in self._attrs_in(info):
            props = [
                m
                for m in self.methods.get(attr.attr.value, [])
                if m.is_property and m.class_name in self.pytree_classes
            ]
            if len(props) == 1 and facts.expr_traced(attr.value, env):
                prop = props[0]
                if prop.positional and prop.positional[0] not in prop.entry_traced:
                    prop.entry_traced.add(prop.positional[0])
                    self._mark(prop, f"read on a traced object in `{info.name}`")
                    woken.append(prop)
        return woken

    def _star_traced(self, callee: FuncInfo, call: cst.Call, facts: FunctionFacts, env) -> set[str]:
        """`helper(*carry)` with a traced `carry`: the positional parameters from the star on."""
        start = 0
        for arg in call.args:
            if arg.star == "**" or (arg.star == "" and arg.keyword is not None):
                return set()
            if arg.star == "*":
                if not facts.expr_traced(arg.value, env):
                    return set()
                params = callee.positional[1:] if callee.is_method else callee.positional
                return set(params[start:])
            start += 1
        return set()

    def construction_hooks_of(self, class_name: str) -> list[FuncInfo]:
        """The `__post_init__`/`__check_init__` (dataclass, equinox) a construction of the module's
        pytree class `class_name` runs."""
        if class_name not in self.pytree_classes or class_name in self.module_funcs or class_name in self.module_names:
            return []
        hooks = (self._method_of(class_name, hook) for hook in ("__post_init__", "__check_init__"))
        return [h for h in hooks if h is not None and h.positional]

    def _construction_hooks(self, class_name: str, caller: FuncInfo) -> list[FuncInfo]:
        """A pytree class built with traced fields runs `__post_init__`/`__check_init__` (dataclass,
        equinox) on them: `self` is traced there."""
        out = []
        for found in self.construction_hooks_of(class_name):
            if found.positional[0] not in found.entry_traced:
                found.entry_traced.add(found.positional[0])
                self._mark(found, f"runs when traced `{caller.name}` builds a `{class_name}`")
                out.append(found)
        return out

    def _own_with_env(self, info: FuncInfo, kind):
        facts = info.facts
        entry = frozenset(facts.entry_traced)
        out = []
        for node, stmt in self._own_nodes.get(info, ()):
            if isinstance(node, kind):
                out.append((node, facts.before.get(stmt, entry) if stmt is not None else entry))
        return out

    def _calls_in(self, info: FuncInfo):
        return self._own_with_env(info, cst.Call)

    def _attrs_in(self, info: FuncInfo):
        return self._own_with_env(info, cst.Attribute)
