"""Which names and calls of a module run JAX work, and which code waits for it: the facts the
timing checker (`timing_checker.TimingChecker`) reads about a module, kept apart from its walk
over timed regions. A mixin: the checker supplies `ctx` and `names` and calls `_scan` once."""

from __future__ import annotations

import ast

import libcst as cst

from codemods.compile_cost.nodes import all_nodes, own_nodes
from codemods.compile_cost.timed_regions import (
    timer_with,
)
from codemods.compile_cost.timing_screen import (
    IDENTITY_OPS,
    NOT_COMPUTE,
    TIMEIT_CALLS,
)
from jaxfix.analysis import astscan
from jaxfix.analysis.body_facts import assigned_names
from jaxfix.analysis.bound_jits import factory_bound_names, factory_bound_parts, returned_jitted_parts
from jaxfix.analysis.defaults import never_true, switched_off
from jaxfix.analysis.host_sync import (
    BLOCKING_METHODS,
    CONTAINER_METHODS,
    bool_tests,
    calls_looked_up_blocker,
    formatted,
    is_jax_library,
    tree_map_waits,
    unconverted_calls,
    waits_by_name,
)
from jaxfix.analysis.jit_contexts import JIT_NAMES, PARTIAL_NAMES
from jaxfix.analysis.names import ImportMap, dotted_name
from jaxfix.analysis.project_lookups import (
    jit_factories,
    project_async_returner,
    project_host_caller,
    project_jit_factory,
    project_jitted,
    project_jitted_among,
    project_timer,
)
from jaxfix.analysis.pytrees import module_summary
from jaxfix.analysis.scopes import ScopeIndex, names_read, param_names
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.timers import timer_names
from jaxfix.analysis.transforms import (
    BLOCKING_CALLS,
    BLOCKING_JITS,
    CACHED_PARTIAL,
    EAGER_TRANSFORMS,
    STAGE_METHODS,
    STEP_ANNOTATIONS,
    SYNCHRONOUS_CALLBACKS,
)
from jaxfix.analysis.value_kind import STARRED, argument_for
from jaxfix.analysis.value_kinds import ValueKinds
from jaxfix.analysis.walk import walk
from jaxfix.rulebase import RuleContext

# lax's loops: a call of one compiles its body and runs it on the device
LAX_LOOPS = frozenset({"scan", "fori_loop", "while_loop", "map", "associative_scan"})


def bound_by(target: cst.BaseExpression) -> set[str]:
    """What an assignment target binds: names (`a, (b, *c)`) and attribute paths (`self._state`);
    a subscript target (`out[k] = ...`) stores into the container it names."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(bound_by(e.value) for e in target.elements)) if target.elements else set()
    if isinstance(target, cst.StarredElement):
        return bound_by(target.value)
    if isinstance(target, cst.Attribute):
        name = dotted_name(target)
        return {name} if name else set()
    if isinstance(target, cst.Subscript):
        return bound_by(target.value)
    return set()


def own_callee(func: cst.BaseExpression) -> cst.BaseExpression:
    """`m` for `self.m` (read as the one def of that name in the file), else `func` itself."""
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        return func.attr
    return func


def _returned_names(value: cst.BaseExpression) -> set[str]:
    """The names and attribute paths a `return` hands back: `res`, `self.state`, or the elements of
    a tuple of them (`return state, rng, metrics`: forhaoliu/jax_sac@<heldout29> sac.py `SAC.train`)."""
    if isinstance(value, cst.Tuple):
        return set().union(*(_returned_names(e.value) for e in value.elements if not isinstance(e, cst.StarredElement)))
    name = dotted_name(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
    return {name} if name else set()


# Copies of host data to the device: the work is the host's, done before the copy is dispatched
HOST_COPIES = frozenset({"jax.numpy.array", "jax.numpy.asarray"})


class JaxWork:
    """The module's jitted names, its functions that wrap or return JAX work, and the calls that
    wait for a result (see the module docstring)."""

    ctx: RuleContext
    names: ImportMap

    # which names are jitted functions --------------------------------------------------------------
    def _is_jit_expr(self, e: cst.BaseExpression) -> bool:
        """`jax.jit`, `partial(jax.jit, ...)`, `jax.jit(...)` (options only)."""
        return self._jit_of(e) is not None

    def _jit_of(self, e: cst.BaseExpression) -> str | None:
        """The jit `e` applies, qualified (as `_is_jit_expr` reads it)."""
        q = self.names.qualify(e)
        if q in JIT_NAMES:
            return q
        if isinstance(e, cst.Call):
            q = self.names.qualify(e.func)
            if q in JIT_NAMES:
                return q
            if q in PARTIAL_NAMES and e.args:
                inner = self.names.qualify(e.args[0].value)
                if inner in JIT_NAMES:
                    return inner
        return None

    def is_timer(self, func: cst.BaseExpression) -> bool:
        """`func` names a timer of this module, or of another module of the project (its summary's
        `timers`: `from utils import timeblock`)."""
        written = dotted_name(func)
        if written is None:
            return False
        if written in self.timers:
            return True
        if self._project_timer is None:
            self._project_timer = project_timer(self.ctx) or (lambda name: False)
        return self._project_timer(written)

    def _scan(self) -> None:
        """One pass over the module: jitted names, the blocks that start a timed region, `timeit` calls."""
        checker = self
        self.jitted: set[str] = set()
        self.jitted_items: dict[str, frozenset[str]] = {}  # `stuff["step"]`: name -> jitted keys (`_jitted_item`)
        # of those, the ones whose jit waits for its program before it returns (`eqx.filter_jit`)
        self.waiting_jitted: set[str] = set()
        self.convention: dict[str, str] = {}  # jitted names taken by a convention -> why (unsafe fixes)
        # jitted names shown to be so where they are used (`func.cost_analysis()`, a step annotation),
        # not by a binding: there a parameter of that name is the jitted function (`_a_parameter`)
        self.shown_at: dict[str, list[cst.CSTNode]] = {}
        self._handed: dict[tuple[int, str], bool] = {}  # `_a_parameter`: (function, parameter) -> handed a jit
        self.region_blocks: list[tuple[list[cst.BaseStatement], bool]] = []  # (block, a loop's body)
        self.timers = timer_names(self.ctx.tree, self.names.qualify_ast)
        self._project_timer = None
        self.timer_withs: list[tuple[cst.With, cst.Call]] = []
        self.timeit_calls: list[cst.Call] = []
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        self.jitted_defs: dict[str, list[cst.FunctionDef]] = {}  # the jit-decorated defs, by name
        self._calls_back: dict[int, bool] = {}  # `calls_back`, per def
        self._project_host_caller = None
        self._project_async = None  # `_imported_async_work`
        self.local_classes: set[str] = set()
        if any(checker.start_clock(s) for s in self.ctx.module.body):
            self.region_blocks.append((list(self.ctx.module.body), False))
        assigns: list[cst.Assign] = []
        calls: list[cst.Call] = []

        class V(cst.CSTVisitor):
            def visit_ClassDef(self, node: cst.ClassDef) -> None:
                checker.local_classes.add(node.name.value)

            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                checker.functions.setdefault(node.name.value, []).append(node)
                jits = [checker._jit_of(d.decorator) for d in node.decorators]
                if any(jits):
                    checker.jitted.add(node.name.value)
                    checker.jitted_defs.setdefault(node.name.value, []).append(node)
                    if any(j in BLOCKING_JITS for j in jits):
                        checker.waiting_jitted.add(node.name.value)

            def visit_Assign(self, node: cst.Assign) -> None:
                assigns.append(node)
                value = node.value
                jit = checker._jit_of(value.func) if isinstance(value, cst.Call) else None
                if jit is not None:
                    for t in node.targets:
                        name = dotted_name(t.target)
                        if name is not None:
                            checker.jitted.add(name)
                            if jit in BLOCKING_JITS:
                                checker.waiting_jitted.add(name)

            def visit_If(self, node: cst.If) -> bool:
                """`if False:` never runs: no region in its body (exojax@<heldout14>
                tests/.../erfcx_f64_test.py:39, a timing loop switched off that way), nor does
                `if enable_vmap:` right after `enable_vmap = False` (`defaults.switched_off`)."""
                if never_true(node.test) or switched_off(node.test, checker._statements_before(node)):
                    if node.orelse is not None:
                        walk(node.orelse, self)
                    return False
                return True

            def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
                if any(checker.start_clock(s) for s in node.body):
                    parent = checker.ctx.parent(node)
                    looped = isinstance(parent, (cst.For, cst.While)) and parent.body is node
                    checker.region_blocks.append((list(node.body), looped))

            def visit_With(self, node: cst.With) -> None:
                call = timer_with(node, checker.is_timer)
                if call is not None and isinstance(node.body, cst.IndentedBlock):
                    checker.timer_withs.append((node, call))
                if any(
                    isinstance(item.item, cst.Call) and checker.names.qualify(item.item.func) in STEP_ANNOTATIONS
                    for item in node.items
                ):
                    checker._annotated_steps(node)

            def visit_Call(self, node: cst.Call) -> None:
                func = node.func
                calls.append(node)
                if checker.names.qualify(func) in TIMEIT_CALLS:
                    checker.timeit_calls.append(node)
                elif isinstance(func, cst.Attribute) and func.attr.value in STAGE_METHODS:
                    name = dotted_name(func.value)
                    if name is not None:
                        checker.jitted.add(name)  # `func.cost_analysis()`: a compiled JAX function
                        checker.shown_at.setdefault(name, []).append(node)

        walk(self.ctx.module, V())
        self._imported_jitted(calls)
        # `step = make_step(...)` where `make_step` returns a jitted callable (issue #33), and the
        # jitted parts of a factory's returned tuple or dict (`stuff = make_stuff(model)`)
        candidates = [
            fn
            for fn in astscan.walked_statements(self.ctx.tree)
            if isinstance(fn, ast.FunctionDef) and len(self.functions.get(fn.name, ())) == 1
        ]
        self.jitted |= factory_bound_names(self.ctx.tree, self._jit_factories(candidates))
        parts = {fn.name: p for fn in candidates if (p := returned_jitted_parts(fn, self.names.qualify_ast))}
        unpacked, self.jitted_items = factory_bound_parts(self.ctx.tree, parts) if parts else (set(), {})
        self.jitted |= unpacked
        for node in assigns:
            value = node.value
            if isinstance(value, cst.Call) and (
                self.names.qualify(value.func) in EAGER_TRANSFORMS or self._is_aot_compiled(value)
            ):
                for t in node.targets:
                    name = dotted_name(t.target)
                    if name is not None:
                        self.jitted.add(name)
        # aliases: `self.train_step = train_step` of a jitted local (EasyDeL's trainers), and the
        # partials that bind its leading arguments (`nnx.cached_partial(train_step, model, opt)`,
        # JAX204's own fix, or `functools.partial`): calling one calls the jitted function
        grew = True
        while grew:
            grew = False
            for node in assigns:
                source = self._aliased(node.value)
                if source is None or source not in self.jitted:
                    continue
                for t in node.targets:
                    name = dotted_name(t.target)
                    if name is not None and name not in self.jitted:
                        self.jitted.add(name)
                        if source in self.waiting_jitted:
                            self.waiting_jitted.add(name)
                        grew = True

    def _aliased(self, value: cst.BaseExpression) -> str | None:
        """The name `value` spells (`train_step`, `self.step`) or binds arguments of
        (`partial(train_step, model)`, `nnx.cached_partial(train_step, model)`)."""
        if isinstance(value, cst.Call) and value.args and value.args[0].keyword is None:
            if self.names.qualify(value.func) in PARTIAL_NAMES | {CACHED_PARTIAL}:
                value = value.args[0].value
        return dotted_name(value) if isinstance(value, (cst.Name, cst.Attribute)) else None

    def _statements_before(self, stmt: cst.BaseStatement) -> list[cst.BaseStatement]:
        """The statements before `stmt` in its block (none for an `elif`)."""
        parent = self.ctx.parent(stmt)
        body = parent.body if isinstance(parent, (cst.Module, cst.IndentedBlock)) else ()
        for i, s in enumerate(body):
            if s is stmt:
                return list(body[:i])
        return []

    def _is_aot_compiled(self, value: cst.Call) -> bool:
        """`jax.jit(f).lower(x).compile()` (also of a jitted name): an ahead-of-time compiled
        executable, whose call dispatches asynchronously like the jitted function's
        (epignatelli/navix@03b056a navix/experiment.py: `train_fn = jax.jit(jax.vmap(
        self.agent.train)).lower(rng).compile()`, then `training_time` read right after
        `train_fn(rng)`)."""
        func = value.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "compile" and isinstance(func.value, cst.Call)):
            return False
        lower = func.value.func
        if not (isinstance(lower, cst.Attribute) and lower.attr.value == "lower"):
            return False
        base = lower.value
        if isinstance(base, cst.Call):
            return self._is_jit_expr(base.func)
        return dotted_name(base) in self.jitted

    def _imported_jitted(self, calls: list[cst.Call]) -> None:
        """The callees imported from another module of the project that binds them to a jitted
        function (`project_lookups.project_jitted`): `from .bfm import backnforth_sqeuclidean_nd`,
        then `results = backnforth_sqeuclidean_nd(mu=mu, ...)` between two clock reads
        (ucu-computational-ot/ot-algorithm-comparison@f96b388 playground/bfm_animation.py:627)."""
        lookup = project_jitted(self.ctx)
        if lookup is not None:
            self.jitted |= project_jitted_among(lookup, (dotted_name(c.func) for c in calls), self.jitted)

    def _annotated_steps(self, node: cst.With) -> None:
        """`with jax.profiler.StepTraceAnnotation(...): state, m = p_train_step(...)`: the callee of
        an assignment in the body is the project's device step by the profiler's convention
        (`STEP_ANNOTATIONS`), unless an import says it is a library's function. A guess: a wait
        added for it is an unsafe fix (`convention`)."""
        if not isinstance(node.body, cst.IndentedBlock):
            return
        for stmt in node.body.body:
            for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
                    name = dotted_name(small.value.func)
                    if (
                        name is not None
                        and name.split(".", 1)[0] not in self.names.bindings
                        and name not in self.jitted
                    ):
                        self.jitted.add(name)
                        self.shown_at.setdefault(name, []).append(node)
                        self.convention[name] = (
                            "called inside `jax.profiler.StepTraceAnnotation`, taken for the device step"
                        )

    def _jit_factories(self, candidates: list[ast.FunctionDef]) -> set[str]:
        """The functions whose call returns a jitted function (`project_lookups.jit_factories`): the
        one def of that name in this file (`candidates`), or a function another module of the
        project defines (`hf = make_solver(..., use_jit=True)` of `hqc.gto.solver`, timed in
        ZihangL/hqc@<heldout28> test/test_gto_performance.py:90)."""
        lookup = project_jit_factory(self.ctx)
        return jit_factories(candidates, self.ctx.tree, self.names.qualify_ast, lookup, set(self.functions))

    def _wraps_jax_work(self, fn: cst.FunctionDef, depth: int, host_copies: bool = True) -> bool:
        """`fn` returns the result of JAX work (`def run(x): return step_jit(x)`, or a name it
        bound to compiled work it does not wait on: `res = peval(X)` ... `return res`, probml/rebayes@3b88072 demos/showdown/
        regression/regression-uci.ipynb `eval_agent_multiple`): a plain wrapper, whose call is
        JAX work too (issue #33). Without `host_copies`, a returned `jnp.array(v)` copy does not
        count: a method that builds its value on the host and hands back a device copy of it
        (Beremi/jax_petsc_nonlinear_energies@<heldout14> parallel_assembler.py:560 `_get_v_local`,
        an MPI ghost exchange in NumPy) leaves nothing a clock would miss."""
        if depth > 2 or fn.asynchronous is not None or self.calls_back(fn):
            return False
        made: set[str] | None = None  # names the body binds to JAX work (`res = peval(x)`)
        for ret in own_nodes(fn.body, cst.Return):
            value = ret.value
            if value is None:
                continue
            # `return jax.lax.stop_gradient(S0)` after `S0.T.block_until_ready()` (koldunovn/fesom_jax@0383a17
            # scripts/paper/core2_paper_calib_gm_eki.py `spin_up`, heldout13 wrong): the identity returns S0
            if isinstance(value, cst.Call) and self.names.qualify(value.func) in IDENTITY_OPS and len(value.args) == 1:
                value = value.args[0].value
            calls = [c for c in own_nodes(value, cst.Call) if host_copies or self.names.qualify(c.func) not in HOST_COPIES]
            if any(self.is_jax_call(c, depth + 1) for c in calls):
                return True
            returned = _returned_names(value)
            if returned:
                if made is None:
                    made = self._bound_to(fn.body, self._compiled_work)
                if returned & made and not self._certainly_waits(fn.body, made):
                    return True  # not when the body waits on its own work (`assert err < tol`)
        return False

    def _method_of_local_object(self, func: cst.BaseExpression) -> cst.FunctionDef | None:
        """The def `obj.m` calls, where `obj` holds an instance of a class this file defines
        (`ValueKinds.instance_class`: `agent = Agent(...)`, then `agent.train(batch)` between two
        clock reads), and `m` is one undecorated def of that class's body."""
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        name = ValueKinds.of(self.ctx).instance_class(func.value, func)
        stmts = self.ctx.fact(ScopeIndex, ScopeIndex.of).module_bindings(name) if name else []
        if not (len(stmts) == 1 and isinstance(stmts[0], cst.ClassDef)):
            return None
        defs = [s for s in stmts[0].body.body if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value]
        return defs[0] if len(defs) == 1 and not defs[0].decorators else None

    def calls_back(self, fn: cst.FunctionDef) -> bool:
        """`fn`, its nested defs or their decorators call a host callback (`transforms.
        SYNCHRONOUS_CALLBACKS`: `@scan_tqdm(epochs)` on the scanned epoch, a `jax.debug.print`): the
        compiled program it runs returns only when it is done, so its result is no work in flight."""
        key = id(fn)
        found = self._calls_back.get(key)
        if found is None:
            found = self._calls_back[key] = any(self._host_caller(c.func) for c in all_nodes(fn, cst.Call))
        return found

    def _host_caller(self, func: cst.BaseExpression) -> bool:
        """`func` is a host callback, or a function of this module or (imported) of another module of
        the project that calls one (`host_callbacks.host_callers`: JAX-DIPS's `progress_bar`)."""
        if self.names.qualify(func) in SYNCHRONOUS_CALLBACKS:
            return True
        written = dotted_name(func)
        if written is None:
            return False
        if written in module_summary(self.ctx).host_callers:
            return True
        if self._project_host_caller is None:
            self._project_host_caller = project_host_caller(self.ctx) or (lambda name: False)
        return self._project_host_caller(written)

    def waits_then_returns_eager(self, call: cst.Call) -> bool:
        """`call` calls the one function of this file of that name, whose body certainly waits on
        the compiled work it runs (`if accepted:` on each jitted Metropolis step) and returns only
        eager JAX work (`return jnp.array(outputs), ...`): what its caller's clock misses is that
        eager tail, as in a region that waited on its step (JAX501's `eager-after-wait`;
        hershkumar/summer2022@<heldout28> neural/fermions/fermi_nn.ipynb cell 20, wrong)."""
        func = own_callee(call.func)
        defs = self.functions.get(func.value, ()) if isinstance(func, cst.Name) else ()
        if len(defs) != 1:
            return False
        body = defs[0].body

        def stepped(c: cst.Call) -> bool:  # compiled work, or a helper of the file that may run some
            return self._compiled_work(c) or (isinstance(c.func, cst.Name) and c.func.value in self.functions)

        returned = (r.value for r in own_nodes(body, cst.Return) if r.value is not None)
        if any(stepped(c) for value in returned for c in own_nodes(value, cst.Call)):
            return False  # returns compiled work (or a helper's) itself
        made = self._bound_to(body, stepped)
        return bool(made) and self._certainly_waits(body, made)

    def _bound_to(self, body: cst.CSTNode, work) -> set[str]:
        """Names `body` assigns from a value with a call `work` accepts (`res = peval(x)`)."""
        made: set[str] = set()
        for a in own_nodes(body, cst.Assign):
            if any(work(c) for c in own_nodes(a.value, cst.Call)):
                for t in a.targets:
                    made |= bound_by(t.target)
        return made

    def _a_parameter(self, func: cst.BaseExpression) -> bool:
        """`func` is a bare name that, where it is called, is a parameter of the enclosing function:
        whatever its caller passes, not the jitted function another scope of the module binds to
        the same name (`self.jitted` is one set per module): Confirm-Solutions/confirmasaurus@<heldout28>
        tests/test_outlaw.py `my_timeit(N, f)` timing `f()`, a name another test binds to `jax.jit(...)`
        (JAX501, wrong: every caller's lambda blocks). A parameter the function itself shows to be
        compiled (`func.cost_analysis()`, a call under a step annotation) stays jitted."""
        if not isinstance(func, cst.Name):
            return False
        idx = self.ctx.fact(ScopeIndex, ScopeIndex.of)
        scope = idx.resolve(func.value, func)
        if not (isinstance(scope, cst.FunctionDef) and func.value in param_names(scope.params)):
            return False
        if any(idx.enclosing_function(n) is scope for n in self.shown_at.get(func.value, ())):
            return False
        key = (id(scope), func.value)  # asked for every call of the name, on each pass over the region
        handed = self._handed.get(key)
        if handed is None:
            handed = self._handed[key] = self._handed_a_jitted_function(idx, scope, func.value)
        return not handed

    def _handed_a_jitted_function(self, idx: ScopeIndex, fn: cst.FunctionDef, param: str) -> bool:
        """A call of `fn` in this module passes, for `param`, a name the module binds to a jitted
        function (aghilanai/jax-course@<heldout25> ep04/solution.ipynb cell 5: `time_once(f, 3)` of
        the notebook's `@jit def f`, timing `f(*args)` unwaited: real)."""
        positional = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
        for call in idx.of_type(cst.Call):
            if not (isinstance(call.func, cst.Name) and call.func.value == fn.name.value):
                continue
            passed = argument_for(call, positional, param)
            if passed is not STARRED and isinstance(passed, cst.Name) and passed.value in self.jitted:
                if isinstance(idx.resolve(passed.value, passed), cst.Module):
                    return True
        return False

    def _jitted_item(self, func: cst.BaseExpression) -> bool:
        """`stuff["step"]` (or `self.fns["update"]`) of a name bound to a factory's dict of jitted
        functions (`bound_jits.factory_bound_parts`)."""
        if not (isinstance(func, cst.Subscript) and len(func.slice) == 1):
            return False
        keys = self.jitted_items.get(dotted_name(func.value) or "")
        index = func.slice[0].slice
        return (
            bool(keys)
            and isinstance(index, cst.Index)
            and isinstance(index.value, cst.SimpleString)
            and index.value.evaluated_value in keys
        )

    def _compiled_work(self, call: cst.Call) -> bool:
        """A call of a jitted function (`peval(x)` of `peval = jax.pmap(...)`), `jax.jit(f)(x)`, or
        a lax loop: compiled device work, not an eager `jnp` copy of host data."""
        func = call.func
        if isinstance(func, cst.Call):
            return self.is_jax_call(call)
        if self._jitted_item(func):
            return True
        if dotted_name(func) in self.jitted:
            return not self._a_parameter(func)
        q = self.names.qualify(func) or ""
        return q.startswith("jax.lax.") and q.rsplit(".", 1)[-1] in LAX_LOOPS

    def _certainly_waits(self, body: cst.CSTNode, results: set[str]) -> bool:
        """`body` certainly waits on one of `results`: a blocking call, a format or a bool test of
        it (code it hands them to that the file does not show is not counted)."""
        if any(self.is_blocking(c, results) for c in own_nodes(body, cst.Call)):
            return True
        return any(self.reads(e, results) for e in (*formatted(body), *bool_tests(body)))

    def converting_call(self, call: cst.Call, depth: int = 0) -> bool:
        """`call` calls a function of this file that returns its JAX work converted to the host
        (`return float(jnp.mean(accs))`, or a tuple holding such a call's value): the call waits
        for that work, and for the state it reads, which the file may not show to be pending
        (an `nnx` model a jitted step updated in place). kmheckel/spyx@38374e96:research/new/
        quant_aware_evolution/quant_aware_evolution.py `evaluate`, hybrid_evo_surrogate/
        methods_shd_hyper.py `train_hyper`."""
        func = own_callee(call.func)  # `self._entropy()`: the one def of that name (Sn0wfly/aequus_jax@778d8b8)
        defs = self.functions.get(func.value, ()) if isinstance(func, cst.Name) else ()
        if len(defs) != 1 or depth > 2 or defs[0].asynchronous is not None:
            return False
        returns = [r.value for r in own_nodes(defs[0].body, cst.Return) if r.value is not None]
        if not returns or not any(self.jax_calls(v) for v in returns):
            return False
        converts = lambda c: self.converting_call(c, depth + 1)  # noqa: E731
        return not any(
            self.is_jax_call(c, depth + 1) for v in returns for c in unconverted_calls(v, self.names.qualify, converts)
        )

    def is_jax_call(self, call: cst.Call, depth: int = 0) -> bool:
        func = call.func
        if isinstance(func, cst.Call):  # `jax.jit(f)(x)`, `jax.grad(f)(x)`, `jax.vmap(f)(x)`
            q = self.names.qualify(func.func) or ""
            return self._is_jit_expr(func.func) or q.startswith("jax.") or q.startswith("equinox.filter_")
        name = dotted_name(func)
        if name is not None and name in self.jitted:
            return not self._a_parameter(func)
        if self._jitted_item(func):
            return True
        # `self.unbinned(x)`: the one def of that name in the file (inigozubeldia/cosmocnc_jax@<heldout18>
        # cnc.py:2365, a recall entry)
        own = own_callee(func)
        method = own is not func
        defs = self.functions.get(own.value, ()) if isinstance(own, cst.Name) else ()
        if len(defs) == 1 and self._wraps_jax_work(defs[0], depth, host_copies=not method):
            return True
        if not method:
            of_object = self._method_of_local_object(func)
            if of_object is not None and self._wraps_jax_work(of_object, depth, host_copies=False):
                return True
        if self._imported_async_work(func):
            return True
        q = self.names.qualify(func)
        if q is None or q in NOT_COMPUTE:
            return False
        return is_staged_call_name(q) and not q.startswith(("jax.experimental.", "jax._src."))

    def _imported_async_work(self, func: cst.BaseExpression) -> bool:
        """`func` is a function another module of the project defines to return compiled work in
        flight (`async_returns.async_returners`: `from pkg.solver import run`, `solver.run`), or
        `obj.m` where every binding of `obj` makes an instance of a class imported from such a
        module, whose `m` does so (`specter = SPECTER(...)`, then `specter.spectralEMD(...)`
        between two clock reads: rikab/SPECTER@<heldout29> Studies/timing_tests.py:96)."""
        written = dotted_name(func)
        if written is None or written.partition(".")[0] not in self.names.bindings and not isinstance(func, cst.Attribute):
            return False
        if self._project_async is None:
            self._project_async = project_async_returner(self.ctx) or (lambda *args: False)
        if self._project_async(written):
            return True
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            cls = self._imported_instance_class(func.value)
            return cls is not None and self._project_async(cls, func.attr.value)
        return False

    def _imported_instance_class(self, name: cst.Name) -> str | None:
        """The class, as written (`SPECTER`, `mod.Solver`), that every binding of `name` in its scope
        instantiates (`obj = SPECTER(...)`), when its head is an import of this module."""
        idx = self.ctx.fact(ScopeIndex, ScopeIndex.of)
        scope = idx.resolve(name.value, name)
        if scope is None:
            return None
        bindings = idx.scope_info(scope).bindings.get(name.value, [])
        written: set[str] = set()
        for binding in bindings:
            if not (
                isinstance(binding, cst.Assign)
                and len(binding.targets) == 1
                and isinstance(binding.targets[0].target, cst.Name)
                and isinstance(binding.value, cst.Call)
            ):
                return None
            cls = dotted_name(binding.value.func)
            if cls is None or cls.partition(".")[0] not in self.names.bindings:
                return None
            written.add(cls)
        return written.pop() if len(written) == 1 else None

    def jax_calls(self, node: cst.CSTNode) -> list[cst.Call]:
        """JAX calls that run when `node` runs: a def or class statement only defines its body."""
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return []
        return [c for c in own_nodes(node, cst.Call) if self.is_jax_call(c)]

    def last_outer_call(self, node: cst.CSTNode) -> cst.Call:
        """The last JAX call of `node` that is not an argument of another one: the call a message
        names (`simulate(model, jnp.ones(3))` is `simulate`, not `jnp.ones`)."""
        calls = self.jax_calls(node)
        inner = {id(c) for outer in calls for c in all_nodes(outer, cst.Call) if c is not outer}
        outer = [c for c in calls if id(c) not in inner]
        return (outer or calls)[-1]

    def reads(self, node: cst.CSTNode, results: set[str]) -> bool:
        """`node` reads a result of the region's JAX work (a name, or an attribute such as
        `self._state`), or runs JAX work itself."""
        if names_read(node) & results or self.jax_calls(node):
            return True
        return (
            any(dotted_name(a) in results for a in all_nodes(node, cst.Attribute)) if "." in "".join(results) else False
        )

    def is_blocking(self, call: cst.Call, results: set[str]) -> bool:
        """`call` certainly waits for a result (`host_sync`: copies, formats, `block_until_ready`,
        a `tree_map` that blocks leaf by leaf)."""
        func = call.func
        q = self.names.qualify(func) if not isinstance(func, cst.Call) else None
        if isinstance(func, cst.Attribute) and func.attr.value == "block_until_ready":
            return True
        if q == "jax.block_until_ready" or q in BLOCKING_CALLS:
            return True  # `lx.linear_solve(...)`: an `eqx.filter_jit` entry, which waits before it returns
        if isinstance(func, cst.Call) and self._jit_of(func.func) in BLOCKING_JITS:
            return True  # `eqx.filter_jit(f)(x)`
        name = dotted_name(func)
        if name in self.waiting_jitted:
            return True  # a function of this file under `eqx.filter_jit`: its call waits for its program
        defs = self.jitted_defs.get(name or "", ())
        if len(defs) == 1 and self.calls_back(defs[0]):
            return True  # a jitted def of this file whose program calls back to the host
        if self.converting_call(call):
            return True
        if isinstance(func, cst.Attribute) and func.attr.value in BLOCKING_METHODS:
            return self.reads(func.value, results)
        if isinstance(func, cst.Attribute) and func.attr.value == "format" and isinstance(func.value, cst.BaseString):
            return any(self.reads(a.value, results) for a in call.args)
        if waits_by_name(q) or tree_map_waits(call, self.names.qualify):
            return any(self.reads(a.value, results) for a in call.args)
        return False

    def may_wait(self, call: cst.Call, results: set[str], depth: int = 0) -> bool:
        """`call` waits for a result, or may: it hands one to code this file does not show (another
        module's helper, a logger), which could read it back. Precision first: a region whose
        result goes there is not reported. Not waiting: jax's own functions, storing into a
        container, a method of the array itself, a class of this file, and a function of this file
        whose body does not wait on its parameters."""
        if self.is_blocking(call, results):
            return True
        if not any(self.reads(a.value, results) for a in call.args):
            return self._closure_waits(call, results, depth)
        func = call.func
        if isinstance(func, cst.Call) or self.is_jax_call(call):
            return False
        if isinstance(func, cst.Attribute) and (
            func.attr.value in CONTAINER_METHODS or self.reads(func.value, results)
        ):
            return False  # `hist.append(loss)`, `out.sum()` (a JAX value's own method queues work)
        if is_jax_library(self.names.qualify(func)):
            return False
        if isinstance(func, cst.Name):
            if func.value in self.local_classes:
                return False
            defs = self.functions.get(func.value, ())
            if len(defs) == 1 and depth < 2:
                return self._body_waits(defs[0], depth + 1)
        return True

    def _closure_waits(self, call: cst.Call, results: set[str], depth: int) -> bool:
        """`call` calls a function of this file that reads a result through its closure and waits
        on JAX work in its body (google/learned_optimization@32186aa research/univ_nfn/gen_pred/
        train_pred.py: `evaluate(train_dset)` runs `np.asarray(sigmoid(get_pred_logits(theta, x)))`
        on the `theta` the timed steps made, which waits for every step)."""
        func = call.func
        if not isinstance(func, cst.Name) or depth >= 2 or self.is_jax_call(call):
            return False  # a jitted function's body is traced: it never waits
        defs = self.functions.get(func.value, ())
        if len(defs) != 1:
            return False
        fn = defs[0]
        own = {p.name.value for p in all_nodes(fn.params, cst.Param)} | assigned_names(fn.body)
        free = (names_read(fn.body) & results) - own
        return bool(free) and self.waits_in(fn.body, free, depth + 1)

    def _body_waits(self, fn: cst.FunctionDef, depth: int) -> bool:
        """A function of this file waits on its parameters (or may, through code not shown)."""
        params = {
            p.name.value
            for p in (
                *fn.params.params,
                *fn.params.kwonly_params,
                *fn.params.posonly_params,
            )
        }
        for name in ("star_arg", "star_kwarg"):
            star = getattr(fn.params, name)
            if isinstance(star, cst.Param):
                params.add(star.name.value)
        return calls_looked_up_blocker(fn.body) or self.waits_in(fn.body, params, depth)

    def waits_in(self, node: cst.CSTNode, results: set[str], depth: int = 0) -> bool:
        """Code that runs when `node` runs waits (or may wait) for a result: a call, an f-string
        part, or a Python bool test (`if loss < best:`, `assert ok`) that reads one."""
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return False
        if id(node) in self.displayed and self.reads(node, results):
            return True  # a notebook cell's displayed value: its repr reads the result
        if any(self.may_wait(c, results, depth) for c in own_nodes(node, cst.Call)):
            return True
        return any(self.reads(e, results) for e in (*formatted(node), *bool_tests(node)))
