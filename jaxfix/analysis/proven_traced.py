"""Values this file *proves* traced, as opposed to values inferred to be (issue #29: safe needs proof).

`jit_contexts` takes a value as traced on any hint: a caller in another module, a framework
convention (a module's `__call__`), the one pytree class whose `__call__` a traced argument may
be, a data attribute of a traced object. That is right for deciding what to look at, and wrong
for promising that a rewrite is safe, or for reporting at all: on four pools of public code
nobody had tuned on, 1 of 208 traced-control-flow findings was real (the one a jitted function of
the same notebook cell showed), and the safe fixes among the rest broke working code. The family
(`codemods/traced_control_flow`) reports only the sites proven here.

Here the same walk runs from proof only. A function's parameters are proven traced when this
file applies a transform to the function itself (`jax.jit(f)`, `@jax.vmap`, a `lax.scan` body:
`DIRECT_REASONS`), except a parameter with a default that no call in this file passes (jit
traces only what a call gives); a callee's parameter is proven traced when a call in this file
passes it a value proven traced in the caller. Everything an array operation makes inside a traced function
is traced either way (`jnp.sum(x)`, even on constants). A data attribute is proven traced only
when read off an object whose class is shown (the method's receiver, a parameter annotated with
a class the module defines or the project index describes: `known_objects`); off anything else
(`rhs.out_scaling`, `cfg.rate`) it may be Python aux data or a static config; nor is an
attribute of the receiver that only a base class out of sight declares
(`ShownAttributes.shown_attributes`: it may be that base's static field). The result never
exceeds the full analysis: a proven name is one the full analysis also takes as traced.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.def_order import DefOrder
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.runs_once import is_notebook_text
from jaxfix.analysis.traced import FunctionFacts, analyse_function

# why a function is traced that this file shows directly: a transform applied to it here
DIRECT_REASONS = ("jitted", "vectorised", "body of")


def is_direct(info: FuncInfo) -> bool:
    """This file applies a transform to `info` itself (not a caller, another module or a convention)."""
    return info.called_from is None and any(
        r.startswith(DIRECT_REASONS) or r.endswith(" of a partial") for r in info.reasons
    )


class ProvenTraced:
    """Per-function facts computed from proven entries only (see the module docstring)."""

    def __init__(
        self, jc: JitContexts, order: DefOrder, notebook: bool = False, facts_type: type[FunctionFacts] | None = None
    ) -> None:
        self.jc = jc
        # a FunctionFacts subclass that propagates less: the same proof from weaker evidence only
        self.facts_type = facts_type
        self.order = order
        self.notebook = notebook  # every call of its functions is in sight (`runs_once.is_notebook_text`)
        self._facts: dict[FuncInfo, FunctionFacts] | None = None

    def facts(self, info: FuncInfo) -> FunctionFacts | None:
        """What is proven traced inside `info`, or None when nothing there is (not in a trace)."""
        if self._facts is None:
            self._facts = self._run()
        return self._facts.get(info)

    def _analyse(self, info: FuncInfo, seeds: set[str], done: dict[FuncInfo, FunctionFacts]) -> FunctionFacts:
        full = info.facts

        def outer(name: str) -> bool:
            p = info.parent
            while p is not None:
                pf = done.get(p)
                if pf is not None and name in pf.locals:
                    return name in pf.all_traced
                p = p.parent
            return False

        return analyse_function(
            info.node,
            self.jc.names,
            seeds,
            outer,
            receiver=full.receiver,
            static_fields=full.static_fields,
            param_fields=full.param_fields,
            sequence_params=full.sequence_params,
            static_attrs=full.static_attrs,
            calls=full.calls,
            known_objects=self.known_objects(info),
            facts_type=self.facts_type,
            receiver_attributes=self.jc.shown_attributes(info.class_name) if full.receiver else None,
        )

    def known_objects(self, info: FuncInfo) -> frozenset[str]:
        """The receiver of a method, and parameters annotated with a class this module defines or
        the project index describes (`param_fields`: diffrax's `saveat: SaveAt`): objects whose
        static fields are known. A class out of sight may keep any field as aux data
        (jax-llm-examples' `cache: PagedKVCache`, checked alone, with its static `page_size`)."""
        full = info.facts
        shown = {p for p, cls in info.class_annotations.items() if cls in self.jc.static_fields}
        shown |= set(full.param_fields)
        return frozenset(shown | ({full.receiver} if full.receiver else set()))

    def _run(self) -> dict[FuncInfo, FunctionFacts]:
        jc = self.jc
        infos = [i for i in jc.functions.values() if i.in_trace and i.facts is not None]
        seeds = {i: (set(i.facts.entry_traced) & i.transform_traced if is_direct(i) else set()) for i in infos}
        for i in infos:
            if self.order.shadowed(i.node) and not any(self.order.may_mean(i.node, s.node) for s in i.jit_sites):
                seeds[i] = set()  # the transform names an earlier def of the same name
            else:
                seeds[i] -= self._defaults_never_passed(i)
                if self.notebook:
                    seeds[i] -= self._given_only_strings(i)
        done: dict[FuncInfo, FunctionFacts] = {}
        children: dict[FuncInfo, list[FuncInfo]] = {}
        for i in infos:
            if i.parent is not None:
                children.setdefault(i.parent, []).append(i)
        # parents before their nested functions (free variables come from the enclosing trace)
        work = sorted(infos, key=_depth)
        budget = 20 * max(len(infos), 1)
        while work and budget > 0:
            budget -= 1
            info = work.pop(0)
            facts = done[info] = self._analyse(info, seeds[info], done)
            entry = frozenset(facts.entry_traced)
            woken: list[FuncInfo] = list(children.get(info, ()))
            for node, stmt in jc._own_nodes.get(info, ()):
                if not isinstance(node, cst.Call):
                    continue
                env = facts.before.get(stmt, entry) if stmt is not None else entry
                if isinstance(node.func, cst.Name) and any(facts.expr_traced(a.value, env) for a in node.args):
                    # `Potential(a)` with `a` traced: the class's `__check_init__` runs on a traced `self`
                    for hook in jc.construction_hooks_of(node.func.value):
                        if hook in seeds and hook.positional[0] not in seeds[hook]:
                            seeds[hook].add(hook.positional[0])
                            woken.append(hook)
                callee, receiver, call = jc.call_target(node, info, facts, env, guess=False)
                if callee is None or callee is info or callee not in seeds:
                    continue
                bound = jc.bind_args(callee, call)
                if bound is None:  # `helper(*carry)`: the parameters from the star on
                    newly = jc._star_traced(callee, call, facts, env)
                else:
                    newly = {p for p, arg in bound.items() if facts.expr_traced(arg, env)}
                if callee.is_method and receiver is not None and callee.positional:
                    if callee.class_name in jc.pytree_classes and facts.expr_traced(receiver, env):
                        newly.add(callee.positional[0])
                newly &= set(callee.facts.entry_traced)
                if not newly <= seeds[callee]:
                    seeds[callee] |= newly
                    woken.append(callee)
            for w in woken:
                if w not in work:
                    work.append(w)
        return done

    def _given_only_strings(self, info: FuncInfo) -> set[str]:
        """In a notebook, where every call of its functions is in sight, the parameters every call
        gives a str: jit rejects a str argument before the body runs (`jax.jit(f)(42, 'add')`,
        probml's jax_intro), so the body never sees one traced. Only when every call seen binds its
        arguments."""
        sites = [s for s in self.jc.call_sites_of(info) if self.order.may_mean(info.node, s.call)]
        given: dict[str, list[cst.BaseExpression]] = {}
        for site in sites:
            bound = self.jc.bind_args(info, site.call)
            if bound is None:
                return set()
            for param, arg in bound.items():
                given.setdefault(param, []).append(arg)
        return {p for p, args in given.items() if all(isinstance(a, _STRINGS) for a in args)}

    def _defaults_never_passed(self, info: FuncInfo) -> set[str]:
        """The parameters with a default that no call of `info` in this file passes by position or
        by name: jit traces only the arguments a call gives, so such a parameter is that Python
        default at trace time as far as this file shows (issue #29: where the analysis cannot tell,
        it does not report). A `**kwargs` at a call may or may not pass one, and does not count
        (lagrangian_nns' `get_trajectory(y0, times, **kwargs)` never passes `use_lagrangian`;
        self-organising-systems' `render_scene(**s)` leaves `view_size`); a `*args` may pass any
        positional one. A jitted library function whose module never passes its default
        (jax_drb's `Lh`, fedjax's `small_n`, which only a test in another module passes) is not
        reported: a known miss when a caller elsewhere passes it. Outside a notebook, not for a
        method: `obj.step(x, n)` calls are not followed to their def (`call_sites_of`); nor for a
        lax body, which its `lax` call gives operands (`lax.cond(p, smooth, keep, x, k)`)."""
        if not info.defaults or (info.is_method and not self.notebook):
            return set()
        if any(r.startswith("body of") for r in info.reasons):
            return set()
        passed: set[str] = set()
        for site in self.jc.call_sites_of(info):
            if not self.order.may_mean(info.node, site.call):
                continue
            params = list(info.positional)
            if info.is_method and not (
                isinstance(site.call.func, cst.Attribute)
                and isinstance(site.call.func.value, cst.Name)
                and site.call.func.value.value == info.class_name
            ):
                params = params[1:]
            i = 0
            for arg in site.call.args:
                if arg.star == "*":
                    passed |= set(params[i:])
                elif arg.star:
                    continue
                elif arg.keyword is None:
                    passed |= set(params[i : i + 1])
                    i += 1
                else:
                    passed.add(arg.keyword.value)
        outer = info.parent.facts if info.parent is not None else None
        # a default computed from a value the enclosing trace holds is that tracer (`_name=name` in a
        # def nested in a jitted function)
        return {p for p, d in info.defaults.items() if p not in passed and not (outer is not None and outer.traced(d))}


_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def _depth(info: FuncInfo) -> int:
    d, p = 0, info.parent
    while p is not None:
        d, p = d + 1, p.parent
    return d


def proven_traced(ctx) -> ProvenTraced:
    """The shared fact, for `ctx.fact(ProvenTraced, proven_traced)`."""
    notebook = str(ctx.path).endswith(".ipynb") or is_notebook_text(ctx.source)
    order = DefOrder(ctx.module, ctx.top_level_statement)
    return ProvenTraced(ctx.fact(JitContexts, jit_contexts), order, notebook=notebook)
