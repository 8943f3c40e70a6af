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

from collections.abc import Callable

import libcst as cst

from jaxfix.analysis.def_order import DefOrder
from jaxfix.analysis.defaults import NOT_LITERAL, literal_value
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.runs_once import is_notebook_text
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.trace_sites import ArrayEvidence, is_array_annotation
from jaxfix.analysis.traced import FunctionFacts, analyse_function
from jaxfix.analysis.transforms import FILTERED_JITS, FILTERED_VMAPS
from jaxfix.analysis.value_kinds import ARRAY, PYTREE, ValueKind, ValueKinds

# why a function is traced that this file shows directly: a transform applied to it here
DIRECT_REASONS = ("jitted", "vectorised", "body of")
# the direct reasons of the transforms that trace only the arrays they are given
_FILTERED_REASONS = frozenset(
    {f"jitted ({w})" for w in FILTERED_JITS} | {f"vectorised ({w})" for w in FILTERED_VMAPS}
)


def is_direct(info: FuncInfo) -> bool:
    """This file applies a transform to `info` itself (not a caller, another module or a convention)."""
    return info.called_from is None and any(
        r.startswith(DIRECT_REASONS) or r.endswith(" of a partial") for r in info.reasons
    )


class ProvenTraced:
    """Per-function facts computed from proven entries only (see the module docstring)."""

    def __init__(
        self,
        jc: JitContexts,
        order: DefOrder,
        notebook: bool = False,
        facts_type: type[FunctionFacts] | None = None,
        kind_of: Callable[[cst.BaseExpression, cst.CSTNode], ValueKind] | None = None,
    ) -> None:
        self.jc = jc
        # what kind of value an expression holds (`ValueKinds.of_expr`): a filtered transform's
        # argument (`_filtered_unshown`)
        self.kind_of = kind_of
        # a FunctionFacts subclass that propagates less: the same proof from weaker evidence only
        self.facts_type = facts_type
        self.order = order
        self.notebook = notebook  # every call of its functions is in sight (`runs_once.is_notebook_text`)
        self._facts: dict[FuncInfo, FunctionFacts] | None = None
        # callee -> parameter -> the Python literals the traced calls of this file give it
        # (`NOT_LITERAL` for anything else): `dead_branch`
        self._given: dict[FuncInfo, dict[str, set]] = {}

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
                seeds[i] -= self._filtered_unshown(i)
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
                self._record_given(callee, bound)
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

    def dead_branch(self, info: FuncInfo, node: cst.CSTNode) -> bool:
        """`node` (a statement of `info`) sits in a branch no trace of `info` takes: `info` is
        traced only as the callee of traced calls in this file, and each gives a Python literal
        for the flag the branch tests (uwplasma/JAX-in-Cell@3d43dcc examples/inference_two_stream.py:174:
        `float(...)` under `if not for_jit:` in `energy_gamma_from_output`, which the jitted
        entry points call with `for_jit=True`; its eager callers pass False)."""
        if self._facts is None:
            self._facts = self._run()
        given = self._given.get(info)
        if not given or not info.reasons or not all(r.startswith("called from traced") for r in info.reasons):
            return False
        idx = self.jc.scope_index()
        if idx is None:
            return False
        for test, in_body in _enclosing_tests(idx, info.node, node):
            values = _flag_values(test, given)
            if values is not None and not any(bool(v) == in_body for v in values):
                return True
        return False

    def _record_given(self, callee: FuncInfo, bound: dict[str, cst.BaseExpression] | None) -> None:
        given = self._given.setdefault(callee, {})
        for param in callee.params:
            arg = None if bound is None else bound.get(param)
            if bound is not None and arg is None:
                arg = callee.defaults.get(param)
            given.setdefault(param, set()).add(literal_value(arg) if arg is not None else NOT_LITERAL)

    def _filtered_unshown(self, info: FuncInfo) -> set[str]:
        """Under `eqx.filter_jit` (or `filter_vmap`) alone, a parameter is traced only when its
        caller gives it an array: a Python value stays static (`FILTERED_JITS`). Unless annotated
        as an array or a pytree class of this module (or the receiver of one's method), or used as
        only an array is, it is proven traced only when a call in this file passes it a traced value
        (VLSF/SDC@<heldout15> architectures/SDC_RNN.py:38: `jnp.zeros((..., M + 1))` in a
        `filter_jit` method every caller gives an int `M`)."""
        direct = [r for r in info.reasons if r.startswith(DIRECT_REASONS)]
        if not direct or not all(r in _FILTERED_REASONS for r in direct):
            return set()
        node = info.node
        shown = {
            p.name.value
            for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
            if p.annotation is not None and is_array_annotation(p.annotation.annotation, self.jc.names.qualify)
        }
        # a pytree of this module's classes or one the project index describes (`model: Threshold`,
        # diffrax's `saveat: SaveAt`, the receiver of an `eqx.Module`'s method): its array fields
        # are the traced leaves
        shown |= {p for p, cls in info.class_annotations.items() if cls in self.jc.pytree_classes}
        shown |= set(info.facts.param_fields)
        if info.is_method and info.positional and info.class_name in self.jc.pytree_classes:
            shown.add(info.positional[0])
        # used as only an array is (`x.shape`, `x.at[...]`, `x.astype(...)`): a Python number has none of those
        shown |= ArrayEvidence(info, self.jc.names).used_as_array & set(info.params)
        # given an array or a pytree by a call in this file (`eqx.filter_vmap(f)(radii)`, `radii = jnp.linspace(...)`)
        if self.kind_of is not None:
            for site in self.jc.call_sites_of(info):
                for param, arg in (self.jc.bind_args(info, site.call) or {}).items():
                    if self.kind_of(arg, site.call).kind in (ARRAY, PYTREE):
                        shown.add(param)
        return set(info.params) - shown

    def _star_length(self, value: cst.BaseExpression, at: cst.CSTNode) -> int | None:
        """How many positional arguments `*value` passes when the file shows it: a tuple or list
        display, or a name its scope binds once to one (leleucas/compiler-paper@<heldout16>
        cases/jax/tblr2bbox.py:72: `sargs = (priors, tblr)`, then `fast_tblr(*sargs)`, which leaves
        `normalize_by_wh` its default `True`); None otherwise."""
        idx = self.jc.scope_index()
        if isinstance(value, cst.Name) and idx is not None:
            value = idx.sole_value(value.value, at) or value
        if isinstance(value, (cst.Tuple, cst.List)) and not any(
            isinstance(el, cst.StarredElement) for el in value.elements
        ):
            return len(value.elements)
        return None

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
                    n = self._star_length(arg.value, site.call)
                    passed |= set(params[i:] if n is None else params[i : i + n])
                    i += n or 0
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
def _flag_values(test: cst.BaseExpression, given: dict[str, set]) -> list[object] | None:
    """What `test` evaluates to for each literal a parameter it tests is given (`flag`, `not flag`,
    `flag is None`, `mode == "fast"`); None when it reads anything else or a value is not a literal."""
    negate = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negate, test = not negate, test.expression
    if isinstance(test, cst.Name):
        values = given.get(test.value)
        if not values or NOT_LITERAL in values:
            return None
        return [(not v) if negate else bool(v) for v in values]
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        values = given.get(test.left.value)
        other = literal_value(test.comparisons[0].comparator)
        op = test.comparisons[0].operator
        if not values or NOT_LITERAL in values or other is NOT_LITERAL:
            return None
        if isinstance(op, (cst.Is, cst.Equal)):
            out = [v == other and type(v) is type(other) for v in values]
        elif isinstance(op, (cst.IsNot, cst.NotEqual)):
            out = [not (v == other and type(v) is type(other)) for v in values]
        else:
            return None
        return [(not v) if negate else v for v in out]
    return None


def _enclosing_tests(idx: ScopeIndex, root: cst.CSTNode, target: cst.CSTNode) -> list[tuple[cst.BaseExpression, bool]]:
    """The `if` tests around `target` inside `root`, each with whether `target` is in its body
    (True) or its `else`/`elif` part (False)."""
    found: list[tuple[cst.BaseExpression, bool]] = []
    child = target
    for anc in idx.ancestors(target):
        if anc is root:
            break
        if isinstance(anc, cst.If) and child is not anc.test:
            found.append((anc.test, child is anc.body))
        child = anc
    return found


def _depth(info: FuncInfo) -> int:
    d, p = 0, info.parent
    while p is not None:
        d, p = d + 1, p.parent
    return d


def proven_traced(ctx, facts_type: type[FunctionFacts] | None = None) -> ProvenTraced:
    """The shared fact, for `ctx.fact(ProvenTraced, proven_traced)`; with `facts_type`, the same
    proof from weaker evidence (`traced_control_flow.evidence`)."""
    notebook = str(ctx.path).endswith(".ipynb") or is_notebook_text(ctx.source)
    order = DefOrder(ctx.module, ctx.top_level_statement, ctx.parent)
    return ProvenTraced(
        ctx.fact(JitContexts, jit_contexts),
        order,
        notebook=notebook,
        facts_type=facts_type,
        kind_of=lambda expr, at: ValueKinds.of(ctx).of_expr(expr, at),
    )
