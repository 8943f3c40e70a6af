"""Where a compiling transform wraps a callable that is new each time, in code that runs
repeatedly: the sites the jit-placement rules (JAX201-JAX203) report and `planner` fixes.

A `Site` is `jax.jit` (`jax.pmap`, `eqx.filter_jit`, and chains such as
`jax.jit(jax.grad(...))`) applied to a lambda, a partial, a nested def, a bound method or a
module function, and called right there (`T(F)(x)`, a local `f = T(F)` only ever called, or a
def decorated with `T` only ever called), in a loop or in the body of a function that runs more
than once. What is stored, returned or passed on, or already runs under a trace, is no site.
`find_sites(ctx, idx)` lists them in source order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from codemods.jit_placement.loop_invariant import bound_above_loop
from codemods.jit_placement.per_configuration import (
    callable_per_configuration,
    options_per_configuration,
    waits_for_a_person,
)
from codemods.jit_placement.repetition import RepetitionEvidence
from codemods.jit_placement.site import CONSTRUCTORS, Site
from codemods.jit_placement.site_kinds import SiteKinds, module_class
from codemods.jit_placement.state_builders import jits_an_initialiser
from codemods.jit_placement.trace_reach import TraceReach
from codemods.jit_placement.transform_kinds import (
    COMPILING,
    MODULE_FUNCTION,
    NEW_FUNCTION_WRAPPERS,
    PARTIALS,
    TRACE_BUDGETS,
    TRANSFORMS,
    WRAPPING,
)
from jaxfix.analysis.pytest_files import is_test_case_base, is_test_module
from jaxfix.analysis.runs_once import functions_run_once
from jaxfix.analysis.scopes import ScopeIndex, name_uses
from jaxfix.analysis.walk import walk
from jaxfix.rulebase import Option, Rule, RuleContext


def runs_once(function_name: str) -> bool:
    """Functions a program calls once by convention, pytest tests, `main` and the
    `train_and_evaluate` of flax's examples: a transform made in their body compiles once (a loop
    inside them still repeats it)."""
    return function_name in ("main", "train_and_evaluate") or function_name.startswith("test")


# Names of set-up functions: an initialiser of an object or a model (`init`, `initialize`,
# `initialization`, `init_model_fn`), a constructor from a saved or configured source
# (`from_restart_file`, `from_pretrained`, `from_config`) or a model or train-state factory (`create_model`, `create_train_state`).
# Each builds state once per object, model or run, like `__init__`, so a jit made in one compiles
# once per thing built, as a hoisted jit would, unless the module shows it running again (handed
# on as a key handler, called in a loop: `Site.repeats`). On the eleven spent blind pools 7 JAX202
# findings were in such functions and none was real (algoperf's `init_model_fn`, QDax's
# `PBTEmitter.init`, JAXFLUIDS's `from_restart_file` and `initialization`). Not any `init_*`:
# maxtext's `init_decode_state` runs per request (human fix maxtext-engine-nested-jit-init-per-call);
# nor any `from_*`, which may be a per-step conversion (`from_flat`).
_SETUP_NAMES = frozenset({"init", "initialize", "initialise", "initialization", "initialisation"})
_SETUP_PREFIXES = (
    "init_model",
    *(f"from_{source}" for source in ("restart", "checkpoint", "pretrained", "config", "initial")),
    "create_model",
    "create_train_state",
)


def initialises(function_name: str) -> bool:
    """`function_name` names a set-up function by convention (`_SETUP_NAMES`, `_SETUP_PREFIXES`)."""
    name = function_name.lstrip("_")
    return name in _SETUP_NAMES or name.startswith(_SETUP_PREFIXES)


# `[tool.jaxfix.jit-placement] include-tests`, shared by JAX201-JAX204
INCLUDE_TESTS = Option(
    "include-tests",
    False,
    "Also report test code (`test_*.py`, `*_test.py`, `conftest.py`, files under `tests/` or `test/`), "
    "where a fresh jitted wrapper in a test or test helper is usually how the test exercises jit "
    "(JAX201 reports the same program compiled again per trip there anyway).",
)


def skips_test_code(ctx: RuleContext, rule: Rule) -> bool:
    """The file is test code and the rule's `include-tests` option is off: nothing to report."""
    return is_test_module(ctx.path) and not ctx.option(rule, INCLUDE_TESTS.name)


def skips_site(ctx: RuleContext, rule: Rule, site: Site) -> bool:
    """The site is in a method of a test case class (`Site.in_test_case`) and the rule's
    `include-tests` option is off."""
    return site.in_test_case and not ctx.option(rule, INCLUDE_TESTS.name)


def test_code(ctx: RuleContext, rule: Rule, site: Site) -> bool:
    """The site is test code (its file, or a method of a test case class) and the rule's
    `include-tests` option is off."""
    return (is_test_module(ctx.path) or site.in_test_case) and not ctx.option(rule, INCLUDE_TESTS.name)


def same_computation_per_trip(idx: ScopeIndex, site: Site) -> bool:
    """What the site compiles is the same program on every trip of its loop: a bound method
    (`jax.jit(env.step)(state, action)` per step recompiles, since each `env.step` is a new cache
    key), or a def from above the loop under a wrapper that is new each trip
    (`jax.jit(jax.value_and_grad(loss_fn))(params)` per optimiser step). In test code this is a
    test paying a compile per step (instadeepai/jumanji@<heldout24> jumanji/wrappers_test.py:581,
    adaptive-intelligent-robotics/QDax@<heldout10> tests/.../trajectory_buffer_test.py:84, recall
    entries read as real), while a lambda, partial or def made inside the loop is how a test runs one
    configuration per trip (`for dtype in dtypes: x_jit = jit(x)` of a `def x` reading `dtype`,
    google/neural-tangents@<dev> tests/predict_test.py:1178), and a factory's result is a test
    timing fresh compiles on purpose."""
    if isinstance(site.target, cst.BaseExpression) and callable_per_configuration(idx, site.node, site.target):
        return False
    if site.kind == "bound method":
        return True
    definition = site.definition
    if definition is None and site.kind == MODULE_FUNCTION:
        return site.fresh
    if definition is None or site.kind != "nested def":
        return False
    ancestors = set(map(id, idx.ancestors(definition)))
    return not any(id(loop) in ancestors for loop in site.loops)


def _decorator_target(dec: cst.BaseExpression) -> cst.BaseExpression:
    """`@d` and `@d(...)` both name `d`."""
    return dec.func if isinstance(dec, cst.Call) else dec


def find_sites(ctx: RuleContext, idx: ScopeIndex) -> list[Site]:
    """Every site of the file, in source order."""
    return list(_SiteFinder(ctx, idx).sites())


def runs_under_trace(ctx: RuleContext, idx: ScopeIndex, node: cst.CSTNode) -> bool:
    """`node` is in a function some transform of this module traces (or in a lambda body): a
    transform there is inlined into the caller's trace and compiles nothing on its own."""
    finder = ctx.fact(runs_under_trace, lambda c: _SiteFinder(c, idx))  # its traced names, once per file
    return finder._under_trace(node)


def sibling_of(idx: ScopeIndex, node: cst.CSTNode, siblings: list[cst.CSTNode]) -> cst.CSTNode | None:
    """The statement of `siblings` that holds `node`, or None."""
    for anc in idx.ancestors(node):
        if any(anc is s for s in siblings):
            return anc
    return None


class _SiteFinder(RepetitionEvidence, TraceReach, SiteKinds):
    """One walk of the module for transform calls and decorated defs, each kept when it is a site."""

    def __init__(self, ctx: RuleContext, idx: ScopeIndex) -> None:
        self.ctx = ctx
        self.idx = idx
        self.qualify = ctx.names.qualify
        self._traced_names: dict[str, list[cst.CSTNode]] | None = None
        self._loop_calls: dict[str, str] | None = None  # method name -> who calls it per iteration
        self._calls_by_name: dict[str, list[cst.Call]] | None = None  # `_calls_of`
        self._handed_on: frozenset[str] | None = None  # `_handed_on_attributes`
        self._models: dict[int, bool] = {}  # `_is_model`, per def

    def transform_name(self, expr: cst.BaseExpression) -> str | None:
        return TRANSFORMS.get(self.qualify(expr) or "")

    def sites(self) -> Iterator[Site]:
        found: list[Site] = []
        # the calls and defs in the order a walk of the module visits them (`TreeIndex.of_type`)
        for node in self.idx.of_type(cst.Call, cst.FunctionDef):
            site = self._site_for_call(node) if type(node) is cst.Call else self._site_for_decorated(node)
            if site is not None:
                found.append(site)
        yield from found

    def _site_for_call(self, node: cst.Call) -> Site | None:
        outer = self.qualify(node.func)
        if outer not in COMPILING:
            return None
        parent = self.idx.parent(node)
        if isinstance(parent, cst.Arg) and isinstance(self.idx.parent(parent), cst.Call):
            if self.transform_name(self.idx.parent(parent).func):
                return None  # the outer transform reports it
        chain: list[cst.Call] = [node]
        kinds = [COMPILING[outer]]
        qualified = [outer]
        target: cst.BaseExpression | None = None
        current = node
        while True:
            if not current.args or current.args[0].keyword is not None or current.args[0].star:
                return None
            target = current.args[0].value
            inner = self.transform_name(target.func) if isinstance(target, cst.Call) else None
            if inner is None:
                break
            chain.append(target)
            kinds.append(inner)
            qualified.append(self.qualify(target.func) or "")
            current = target
        site = Site(node=node, chain=chain, kinds=kinds, target=target, kind="", qualified=qualified)
        if isinstance(parent, cst.Call) and parent.func is node:
            site.call = parent
            site.calls = [parent]
        elif not self._bound_calls(site, parent) and not self._stored_on_self(site, parent):
            return None  # stored, returned or passed on: may well be reused
        if not self._classify(site, target):
            return None
        if self._cached_bound_method(site, target):
            return None  # the same bound method hits the transform's cache (`CACHES_BOUND_METHODS`)
        if site.manual is None:
            site.manual = self._wrapper_defined_below(node)
        if "filter_vmap" in kinds and site.kind != MODULE_FUNCTION and site.manual is None:
            # the hoist would pass captured values as new arguments, which filter_vmap maps
            site.manual = (
                "`eqx.filter_vmap` maps every array argument: hoist by hand, captured arrays with `in_axes=None`"
            )
        return self._place(site)

    def _fresh_per_trip(self, site: Site, name: str, bindings: list[cst.CSTNode]) -> bool:
        """A local callable bound above the loop is the same object every trip (`loop_invariant`):
        no site for `jax.jit` of it, a manual one for `filter_jit`'s wrapper made anew each trip."""
        if not bound_above_loop(self.idx, site.node, bindings) or site.rewraps:
            return True
        if any(k in NEW_FUNCTION_WRAPPERS for k in site.kinds[1:]):
            return True  # `jax.jit(jax.grad(f))`: a new function each trip
        if not site.kinds[0].startswith("filter_"):
            return False
        site.kind, site.manual = MODULE_FUNCTION, f"`{name}` is bound above the loop: wrap it once there and call that"
        return True

    def _wrapper_defined_below(self, node: cst.Call) -> str | None:
        """Through a project's own wrapper (`maybe_jit(f)`, `ImportMap.wrappers`) defined after the
        statement holding the site: a hoist to module level there would call it before its def."""
        func = node.func
        if not isinstance(func, cst.Name) or func.value not in self.ctx.names.wrappers:
            return None
        body = list(self.ctx.module.body)
        here = self.idx.statement_in(node, self.ctx.module)
        where = next((i for i, stmt in enumerate(body) if stmt is here), None)
        defined = [
            i for i, stmt in enumerate(body) if isinstance(stmt, cst.FunctionDef) and stmt.name.value == func.value
        ]
        if where is None or not defined or min(defined) > where:
            return f"`{func.value}` is defined below this code; hoist by hand below its def"
        return None

    def _bound_calls(self, site: Site, assign: cst.CSTNode | None) -> bool:
        """`f = T(F)` whose name is only ever called, right there: fill `site.calls`/`binding`.

        False (no finding) when `f` may escape: bound more than once, declared global/nonlocal,
        or used other than as `f(...)` (returned, stored, passed on: the caller may reuse the
        jitted object). Inside a function and outside loops, calls made inside a loop are a reuse
        of the one jit object (one compile per call of the function, amortised over the loop) and
        are left alone too. Shapes the fix cannot rewrite set `site.manual`."""
        if not (
            isinstance(assign, cst.Assign)
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and assign.value is site.node
        ):
            return False
        name = assign.targets[0].target.value
        stmt = self.idx.parent(assign)
        scope = self.idx.enclosing_scope(assign)
        if not isinstance(scope, (cst.FunctionDef, cst.Module)) or not isinstance(stmt, cst.SimpleStatementLine):
            return False
        info = self.idx.scope_info(scope)
        if info.bindings.get(name, []) != [assign] or name in info.params or name in info.globals | info.nonlocals:
            return False
        if isinstance(scope, cst.Module) and name in self.idx.global_declarations():
            return False
        body = scope if isinstance(scope, cst.Module) else scope.body
        calls: list[cst.Call] = []
        for use in name_uses(body, name):
            if use is assign.targets[0].target:
                continue
            parent = self.idx.parent(use)
            if not (isinstance(parent, cst.Call) and parent.func is use):
                return False
            calls.append(parent)
        if not calls:
            return False
        own_loops = self.idx.enclosing_loops(site.node)
        if not own_loops and any(len(self.idx.enclosing_loops(c)) > len(own_loops) for c in calls):
            return False
        if any(self._in_nested_def(c, scope) for c in calls):
            # called from a nested def, a closure that may be returned and called many times over
            # the one jitted object (google-deepmind/penzai@aac7808a:penzai/core/variables.py `variable_jit`)
            return False
        site.calls = calls
        site.binding = stmt
        site.manual = self._bound_shape_problem(stmt, scope, calls)
        return True

    def _memoised(self, assign: cst.CSTNode, target: cst.Attribute, method: cst.CSTNode | None) -> bool:
        """`self.f = T(F)` under `if self.f is None:` (or `if not self.f:`, `if not hasattr(self, "f"):`,
        `if getattr(self, "f", None) is None:`): built on the first call only, then reused
        (AI-Hypercomputer/maxdiffusion@7cfb8801:src/maxdiffusion/pipelines/z_image/z_image_pipeline.py:122
        `_decode_fn`, held-out2 labels; volodymyr-yelisieiev/ndswin-jax@18db39b src/ndswin/training/trainer.py:469
        `_jitted_mixup` behind `hasattr`, heldout19, wrong)."""
        code = _code(target)
        for anc in self.idx.ancestors(assign):
            if anc is method:
                return False
            if not isinstance(anc, cst.If):
                continue
            test = anc.test
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                if _code(test.expression) == code or _attribute_probe(test.expression, target) == "hasattr":
                    return True
            if (
                isinstance(test, cst.Comparison)
                and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Is)
                and isinstance(test.comparisons[0].comparator, cst.Name)
                and test.comparisons[0].comparator.value == "None"
                and (_code(test.left) == code or _attribute_probe(test.left, target) == "getattr")
            ):
                return True
        return False

    def _in_nested_def(self, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """`node` is in the body of a def nested in `scope` (lambdas and comprehensions aside)."""
        for anc in self.idx.ancestors(node):
            if anc is scope:
                return False
            if isinstance(anc, cst.FunctionDef):
                return True
        return False

    def _stored_on_self(self, site: Site, assign: cst.CSTNode | None) -> bool:
        """`self.attr = T(F)` in a method (not `__init__`/`__post_init__`/`setup`) that this module
        calls on one object once per iteration of a loop (`obj.build()` in a loop that does not
        rebind `obj`): every iteration stores a new jitted callable on the same object and the
        next call of it compiles again. Reported with a manual fix (jit once, in `__init__`);
        without such a loop a stored wrapper may well be built once and reused: no site."""
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.value is site.node):
            return False
        target = assign.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
            return False
        method = self.idx.enclosing_function(assign)
        if self._memoised(assign, target, method):
            return False
        if not isinstance(method, cst.FunctionDef) or method.name.value in CONSTRUCTORS:
            return False
        params = method.params.params
        if not params or params[0].name.value != target.value.value:
            return False
        if not isinstance(self.idx.enclosing_scope(method), cst.ClassDef):
            return False
        caller = self._called_per_iteration(method.name.value)
        if caller is None:
            return False
        site.repeats = True
        site.manual = (
            f"`{caller}` calls `{method.name.value}` on the same object in a loop, and each call stores a new "
            f"jitted callable on it; build it once (in `__init__`) and reuse it"
        )
        return True

    def _called_per_iteration(self, method: str) -> str | None:
        """Where the module calls `<name>.method()` inside a loop that does not rebind `<name>`:
        the caller's name (`<module>` at top level), else None."""
        if self._loop_calls is None:
            found: dict[str, str] = {}
            idx = self.idx
            qualify = self.qualify

            class _V(cst.CSTVisitor):
                def visit_Call(self, node: cst.Call) -> None:
                    func = node.func
                    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
                        return
                    if func.attr.value in found:
                        return
                    loops = idx.enclosing_loops(node)
                    if (
                        loops
                        and func.value.value not in idx.assigned_in(loops[0])
                        and not waits_for_a_person(loops[0], qualify)
                    ):
                        where = idx.enclosing_function(node)
                        found[func.attr.value] = where.name.value if isinstance(where, cst.FunctionDef) else "<module>"

            walk(self.ctx.module, _V())
            self._loop_calls = found
        return self._loop_calls.get(method)

    def _bound_shape_problem(
        self, stmt: cst.SimpleStatementLine, scope: cst.CSTNode, calls: list[cst.Call]
    ) -> str | None:
        if len(stmt.body) != 1:
            return "the binding shares its line with other statements"
        if any(line.comment is not None for line in stmt.leading_lines) or stmt.trailing_whitespace.comment:
            return "a comment is attached to the binding line"
        block = self.idx.parent(stmt)
        siblings = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else [stmt]
        index = next(i for i, s in enumerate(siblings) if s is stmt)
        for call in calls:
            if self.idx.enclosing_scope(call) is not scope:
                return "the jitted name is called from a nested function, lambda or comprehension"
            sibling = sibling_of(self.idx, call, siblings)
            if sibling is None or not any(s is sibling for s in siblings[index + 1 :]):
                return "the jitted name is called outside the statements that follow its binding"
        return None

    def _site_for_decorated(self, node: cst.FunctionDef) -> Site | None:
        if not node.decorators:
            return None
        dec = node.decorators[0].decorator
        kinds: list[str] = []
        name = self.qualify(dec)
        if name in COMPILING:
            kinds.append(COMPILING[name])
            qualified = [name]
        elif isinstance(dec, cst.Call) and self.qualify(dec.func) in PARTIALS and dec.args:
            inner = self.qualify(dec.args[0].value)
            if inner not in COMPILING:
                return None
            kinds.append(COMPILING[inner])
            qualified = [inner]
        elif isinstance(dec, cst.Call) and self.qualify(dec.func) in COMPILING:
            return None  # @jax.jit(...) factory form: rare; leave it
        else:
            return None
        if any(self.qualify(_decorator_target(d.decorator)) in TRACE_BUDGETS for d in node.decorators[1:]):
            return None  # `@eqx.debug.assert_max_traces(max_traces=1)`: the author counts this object's traces
        scope = self.idx.enclosing_scope(node)
        if isinstance(scope, cst.ClassDef):
            return None
        site = Site(
            node=node,
            chain=[],
            kinds=kinds,
            target=node,
            kind="decorated nested def",
            definition=node,
            qualified=qualified,
        )
        if isinstance(scope, cst.Module):
            if not self.idx.enclosing_loops(node):
                return None
        if isinstance(dec, cst.Call) and options_per_configuration(self.idx, self.qualify, node, dec):
            return None  # `@partial(jax.jit, out_shardings=...)` per configuration: a compile per trip anyway
        # every use of the name in its scope must be a call
        uses = self._only_called(node.name.value, scope, exclude=node)
        if uses is None:
            return None
        if self._called_in_own_loop(node, scope):
            return None  # made once per call, run in a loop there: one compile amortised over the loop
        if uses:
            site.manual = (
                f"`{node.name.value}` is called through `{uses}`; move the def to module level "
                "(its captured values as parameters) by hand"
            )
        return self._place(site)

    def _called_in_own_loop(self, node: cst.FunctionDef, scope: cst.CSTNode) -> bool:
        """The jitted def is called in a loop deeper than the def itself, as a local `g = jax.jit(f)`
        is (`_bound_calls`): jax-fem's `train_mlp_surrogate` runs its `@jax.jit update` per batch
        (deepmodeling/jax-fem@912632b5:applications/outdated/multi_scale/trainer.py)."""
        own = len(self.idx.enclosing_loops(node))
        if own:
            return False  # a def made per iteration (JAX201) is a new function on every trip however it is used
        body = scope.body if not isinstance(scope, cst.Module) else scope
        for use in name_uses(body, node.name.value):
            parent = self.idx.parent(use)
            if isinstance(parent, cst.Call) and parent.func is use and len(self.idx.enclosing_loops(parent)) > own:
                return True
        return False

    def _only_called(self, name: str, scope: cst.CSTNode, exclude: cst.CSTNode) -> str | None:
        """Whether every use of `name` in `scope` (outside `exclude`) calls it, directly or through
        a wrapping transform called right there (`jax.grad(f)(x)`, `eqx.filter_grad(f)(m)`: the
        wrapper traces `f` and compiles it as a call would), in the scope's own code. None: some
        use is not a call, is inside a nested function (a closure that may be returned and reused),
        or there is none; "": all are direct calls; else the first wrapper a use goes through."""
        uses = name_uses(scope.body if not isinstance(scope, cst.Module) else scope, name)
        called = 0
        wrapper = ""
        home = self.idx.enclosing_function(exclude)
        for use in uses:
            if any(a is exclude for a in self.idx.ancestors(use)) or use is exclude.name:
                continue
            if self.idx.enclosing_function(use) is not home:
                return None  # used from a nested function, which may outlive the call (flax `lift.jit`)
            parent = self.idx.parent(use)
            if isinstance(parent, cst.Call) and parent.func is use:
                called += 1
                continue
            through = self._wrapped_call(use)
            if through is not None:
                called += 1
                wrapper = wrapper or through
                continue
            return None
        return wrapper if called else None

    def _wrapped_call(self, use: cst.Name) -> str | None:
        """`W(use, ...)(...)` with `W` a wrapping transform: W's spelling, else None."""
        arg = self.idx.parent(use)
        if not isinstance(arg, cst.Arg) or arg.keyword is not None or arg.star:
            return None
        wrap = self.idx.parent(arg)
        if not isinstance(wrap, cst.Call) or not wrap.args or wrap.args[0] is not arg:
            return None
        short = WRAPPING.get(self.qualify(wrap.func) or "")
        called = self.idx.parent(wrap)
        if short is None or not (isinstance(called, cst.Call) and called.func is wrap):
            return None
        return f"{'eqx' if short.startswith('filter_') else 'jax'}.{short}"

    def _place(self, site: Site) -> Site | None:
        anchor = site.node
        site.in_test_case = self._in_test_case(anchor)
        site.loops = self.idx.enclosing_loops(anchor)
        site.function = self.idx.enclosing_function(anchor)
        if self._under_trace(anchor):
            return None
        if site.loops:
            return site
        if not site.fresh or site.function is None or isinstance(site.function, cst.Lambda):
            return None
        if site.function.name.value == "__init__":
            return None  # runs once per instance: the usual place to build jitted callables
        if runs_once(site.function.name.value) or self._script_runs_once(site.function):
            return None  # "compiles again on every call" needs more than one call
        site.repeats = site.repeats or self._runs_again(site.function)
        streams = self._streams(site.function)
        if not (site.repeats or streams or self._in_class(site.function)):
            return None  # a module function this module never runs twice: whether anyone does is unknown
        if not (site.repeats or streams) and initialises(site.function.name.value):
            return None  # a set-up function (`init`, `from_*`, `create_model`): once per thing it builds
        if self._drives_a_loop(site.function) and not site.repeats and not streams:
            return None  # a one-shot driver (a training loop): builds its jitted callables once per run
        if not site.repeats and not streams and self._builds_state(site):
            return None  # a jit of an initialiser in a setup function (`state_builders`)
        if self._only_called_under_trace(site.function):
            return None  # every call is traced by an outer transform: the inner one is inlined
        if (
            site.kind in ("nested def", "decorated nested def")
            and self.idx.enclosing_function(site.definition) is not site.function
        ):
            return None
        if not (site.repeats or streams) and self._never_called(site.function):
            return None  # a method the project never calls (one-shot utility); asked last: it reads the tree
        return site

    def _builds_state(self, site: Site) -> bool:
        """The transform wraps an initialiser (`state_builders.jits_an_initialiser`)."""
        target = site.definition if site.definition is not None else site.target
        return jits_an_initialiser(target, self.qualify)

    def _script_runs_once(self, function: cst.FunctionDef) -> bool:
        """A module-level function a script calls once (`runs_once.functions_run_once`)."""
        if not self.ctx.is_top_level(function):
            return False
        if len(re.findall(rf"\b{function.name.value}\b", self.ctx.source)) < 2:
            return False  # the text spells it once, in its def: never called, no module walk needed
        once = self.ctx.fact(functions_run_once, lambda ctx: functions_run_once(ctx.module, runs_once, ctx.source))
        return function.name.value in once

    def _in_test_case(self, node: cst.CSTNode) -> bool:
        """`node` is in the body of a class deriving, here or through classes of this module, from
        a test case base (`pytest_files.is_test_case_base`)."""
        return any(
            isinstance(anc, cst.ClassDef) and self._is_test_case(anc, frozenset()) for anc in self.idx.ancestors(node)
        )

    def _is_test_case(self, cls: cst.ClassDef, seen: frozenset[str]) -> bool:
        for base in cls.bases:
            if is_test_case_base(self.qualify(base.value)):
                return True
            local = module_class(self.idx, base.value)
            if (
                local is not None
                and local.name.value not in seen
                and self._is_test_case(local, seen | {cls.name.value})
            ):
                return True
        return False

def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _attribute_probe(test: cst.BaseExpression, target: cst.Attribute) -> str | None:
    """`hasattr` or `getattr` when `test` is `hasattr(obj, "f")` or `getattr(obj, "f", ...)` for the
    attribute `target` (`obj.f`) names."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value in ("hasattr", "getattr")):
        return None
    if len(test.args) < 2 or _code(test.args[0].value) != _code(target.value):
        return None
    name = test.args[1].value
    if isinstance(name, cst.SimpleString) and name.evaluated_value == target.attr.value:
        return test.func.value
    return None

