"""JAX404 `outer-state-mutation-in-traced-code`: a side effect on state that outlives the call
(an outer container, a `global`/`nonlocal`, a reassigned module name) happens once, at trace time."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from codemods.trace_time_semantics import preview
from codemods.trace_time_semantics.common import (
    TRANSFORM_TOKENS,
    kept_trace,
    short,
    traced_functions,
)
from codemods.trace_time_semantics.outer_state import (
    CONSTRUCTION,
    CONTAINER_CALLS,
    CONTAINER_MUTATORS,
    EMPTYING,
    RETURN_NONE,
    ModuleState,
)
from codemods.trace_time_semantics.outer_state_screen import function_parents, may_touch_outer_state
from jaxfix.analysis.body_facts import assigned_names
from jaxfix.analysis.held_objects import object_uses, read_as_data
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.names import ImportMap, stored_root_name
from jaxfix.analysis.pytest_files import is_test_module
from jaxfix.analysis.scopes import param_names
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.trace_screen import (
    MAY_NAME_A_TRANSFORM,
    NO_ENTRIES,
    ScreenEntries,
    any_site,
)
from jaxfix.analysis.trace_sites import own_sites
from jaxfix.analysis.walk import walk
from jaxfix.model import Finding
from jaxfix.rulebase import Code, Invalid, Option, Rule, RuleContext, Valid


def _result_used(call: cst.Call, stmt: cst.CSTNode) -> bool:
    """Whether the statement assigns or returns the value of `call` itself (a lambda's body, such
    as `lambda: log.append(x)` in a `lax.cond`, is written for its effect and does not count)."""
    body = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
    kinds = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return)
    return any(isinstance(small, kinds) and small.value is call for small in body)


class OuterStateMutationRule(Rule):
    """
    ## What it does
    Finds, inside traced code, Python side effects on state that outlives the call:
    - a mutation of a module-level or enclosing-function container (`results.append(x)`,
      `cache[k] = v`, `seen.add(k)`, `log.extend(...)`), where the container is a list, dict,
      set or deque built by that outer scope. A store of Python values only (literals and the
      function's own untraced names, in a function whose traced parameters are known:
      `count_per_tags[name] += 1`) is trace-time bookkeeping, a library's naming scheme, and is
      not reported;
    - an assignment to a name declared `global` or `nonlocal` (in a function traced only by an eager
      `vmap` or `grad`, which run the body at every call, only one that stores a traced value in one
      name, a leaked tracer: nnx's lifted init unpacking its static `moduledef` is not reported);
    - a read of a module-level name that the module can rebind *after* a trace, before a later
      call of the compiled function (`rebinding_order`): a module-level rebinding after a call
      that traces, or in a module-level loop that also calls the traced function; a `global`
      write in a function whose own order (a driver loop) or whose callers put it after such a
      call. Rebindings that only run at import, before anything traces (a NumPy table converted
      to `jnp`, `N = jnp.int32(N)`, `f = jax.jit(f)`, `setNightColors()` called at module level,
      a script's setup before it defines the jitted step), are not reported, nor a function
      the loop itself defines (a new trace each iteration). In a notebook, a rebinding counts
      only if a later cell calls a compiled function bound before it (a `.py` file under
      jupytext's `# jupyter:` header, or with `# %%` cells, is a notebook): one rebuilt after it
      (`grad_loss = jit(grad(lambda ...))` again, a redefined `@jax.jit def do_rollout`, a
      `jax.jit(env.reset)` of a new object) traces with the new value, and the stale one it
      replaced is never called again; so does a jitted def made before the rebinding whose
      first call comes after it (nothing else may trace in between); and the read is reported
      only in the functions such a later call runs (its def and the module functions it names):
      an experiment cell that rebinds `opt` and redefines the `train_step` reading it, followed
      by calls of an older `render` that never reads `opt`, has no stale read;
    - a traced value stored on an object that outlives the trace: `self.cache[k] = v`,
      `self.last = v`, `self.items.append(v)` in a method of a plain (non-pytree) class that the
      module instantiates at module level (`guide = Guide(...)`, then `jax.jit(lambda k: guide(k))`);
    - a read of a module-level container that ordinary code changes at run time: a function of
      the module empties it (`_CACHE.clear()`, `.pop(k)`, `del _CACHE[k]`) or fills it and is
      itself called from another function (`set_step_size(eps)` in a sampling loop). A registry
      filled at import (by a decorator's wrapper or a module-level call) is not reported, nor a
      scope stack a `@contextmanager` pushes and pops around its `yield` (read inside the scope,
      at trace time too, by design), nor a container only the reading function itself changes.

    ## Why is this bad?
    A traced function's Python body runs once, when it is traced; the compiled program that runs
    on every later call contains only the array operations. So the append happens once (and
    stores a tracer, which leaks if used later), the global assignment happens once, and a
    global read is frozen at its value at trace time: measured with jax 0.10.2, a jitted
    `x * SCALE` kept returning `2.0 * x` after `SCALE = 3`. Inside `lax.scan`/`fori_loop` bodies the
    body is traced once for all iterations.

    Containers the function builds itself (`out = []; out.append(x); return out`), mutations of
    the function's own parameters, of `self` of a pytree or of an object built inside the trace,
    static values stored on `self`, and module constants assigned once are not flagged.

    ## Known problems
    A rebound module name that traced code only calls or reads attributes of (`opt_update(i, g, s)`,
    `get_params(s)`, `optimizer.update`, `model.apply`) holds a function or an object, and a stale
    read of one is not reported: a rebinding of an optimizer or a model comes with arguments of a new
    structure (a retrace) or with an equal object (`adam(lr)` again), and on the spent pools every
    such finding was wrong; a rebound function with unchanged arguments goes stale unreported. The
    analysis is within one module: a global reassigned from another module, or a container
    passed in and mutated through another name, is not seen. A `global` setter that the module
    never calls is not reported: whether it runs before the first trace (setup) or after it is
    unknown, and precision comes first. In a notebook, a compiled function rebuilt after a
    rebinding counts as fresh without following the plain helpers its body calls: one that calls
    an older compiled function through a helper is not reported. A function handed to `jax.debug.callback` (or another
    host callback) runs at every call on concrete values and is not traced code. A function that fills a container
    and is called only at module level counts as import-time setup. Test code (`test_*.py`,
    `*_test.py`, `conftest.py`, files under `tests/`) is not reported: there a side effect inside
    traced code (`num_traces += 1`, `witness.append(x)`) is how a test observes tracing; set
    `include-tests = true` in `[tool.jaxfix.outer-state-mutation-in-traced-code]` to report it.
    Elsewhere, intentional trace-time bookkeeping is flagged too: silence it with `# noqa: JAX404`.

    ## Preview
    The whole rule is shown only with `--preview`: on code nobody had prepared (the fifteen blind
    pools' first-contact labels) it was 8 real of 84, wrong on twelve pools. The reads of a module
    global that is rebound or refilled at run time were 7 real of 76, wrong on ten pools (notebooks
    redefine the function with the rebinding, retrace it on a new structure, or rebind an equal
    value); the untraced writes 0 of 4 on three pools (a treedef, a graph structure, a write in a
    host callback, recorded at trace time on purpose); the writes that store a traced value
    (`log.append(x)`, `global g; g = x`), default until session 22, 1 of 3 (a deliberate trace-time
    capture and a cache filled only with concrete keys on heldout13). `codemods/trace_time_semantics/preview.py`.

    ## Example
    ```python
    SCALE = 2.0
    seen = []


    @jax.jit
    def f(x):
        seen.append(x)
        return x * SCALE


    def set_scale(value):
        global SCALE
        SCALE = value
    ```

    ## Use instead
    ```python
    @jax.jit
    def f(x, scale):
        return x * scale
    ```
    Return what you want to collect (stack it, or carry it through `lax.scan`), and pass values that
    change as arguments (static ones with `static_argnames`).

    ## Fix safety
    No automatic fix (manual): what the side effect was meant to do decides the rewrite.

    ## References
    - https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions
    - https://docs.jax.dev/en/latest/stateful-computations.html
    """

    name = "outer-state-mutation-in-traced-code"
    codes = (
        Code(
            "JAX404",
            "outer-state-mutation-in-traced-code",
            "mutation of outer state (or a read of a reassigned global) inside traced code",
            "never",
        ),
    )
    preview_only = preview.whole_rule(codes)
    prefilter = TRANSFORM_TOKENS
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    follows_calls = True  # also in a file whose functions traced code elsewhere calls
    options = (
        Option(
            "include-tests",
            False,
            "Also report test code, where a side effect inside traced code (`num_traces += 1`, "
            "`witness.append(x)`) is how a test observes tracing.",
        ),
    )
    valid = (
        Valid(
            """
            import jax

            SCALE = 2.0  # assigned once: a constant


            @jax.jit
            def f(x):
                out = []
                out.append(x * SCALE)  # a list the function builds itself
                return out
            """
        ),
        Valid(
            """
            import jax


            @jax.jit
            def f(x, log):
                log.append(x)  # the caller's container, passed in: not outer state
                return x
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax

            history = []


            @jax.jit
            def step(x):
                history.append(x)  # runs once, and keeps a tracer
                return x + 1
            """
        ),
        Invalid(
            """
            import jax

            threshold = 0.5


            @jax.jit
            def clip(x):
                return jax.numpy.minimum(x, threshold)  # frozen at its value at trace time


            def configure(value):
                global threshold
                threshold = value


            def sweep(x, values):
                for value in values:
                    clip(x)
                    configure(value)  # after `clip` was traced: it keeps the old threshold
            """
        ),
        Invalid(
            """
            import jax

            calls = 0


            @jax.jit
            def f(x):
                global calls
                calls += 1
                return x
            """
        ),
    )

    def could_match(self, tree: ast.Module, entries: ScreenEntries = NO_ENTRIES) -> bool:
        """In a function that may run under a trace: a `global`/`nonlocal` of a name it assigns, a
        store into or a mutator call on a name it does not bind, a store on `self` in a method of a
        class the module builds (not a constructor), or a read of a module name the module
        reassigns."""
        outer: list[ModuleState] = []  # built on first need: most traced functions never ask

        def state() -> ModuleState:
            if not outer:
                outer.append(ModuleState.of_tree(tree, ImportMap.from_ast(tree)))
            return outer[0]

        parents: dict[int, tuple[ast.AST, ...]] = {}  # `function_parents`, built when a lambda asks

        def chain(fn: ScreenFunction) -> tuple[ast.AST, ...]:
            if not parents:
                parents.update(function_parents(tree))
            return parents.get(id(fn.node), ())

        return any_site(tree, lambda fn, n: may_touch_outer_state(fn, n, state, chain, tree), entries)

    def could_match_in(self, ctx: RuleContext) -> bool:
        """Not test code left out by `include-tests` (`check` reports nothing there); then as every
        rule that follows calls (`Rule.could_match_in`)."""
        if is_test_module(ctx.path) and not ctx.option(self, "include-tests"):
            return False
        return super().could_match_in(ctx)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if is_test_module(ctx.path) and not ctx.option(self, "include-tests"):
            return
        outer = ctx.fact(ModuleState, ModuleState.of)
        jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
        for info in traced_functions(ctx):
            yield from self._check_function(ctx, jc, outer, info)

    def _check_function(self, ctx, jc: JitContexts, outer: ModuleState, info: FuncInfo) -> Iterator[Finding]:
        facts = info.facts
        sites = list(own_sites(info, ctx))
        declared: dict[str, str] = {}
        for node, _stmt in sites:
            if isinstance(node, (cst.Global, cst.Nonlocal)):
                for item in node.names:
                    declared[item.name.value] = "global" if isinstance(node, cst.Global) else "nonlocal"
        not_reads: set[cst.CSTNode] = set()
        written: set[cst.CSTNode] = set()  # containers this function mutates itself (reported as such)
        for node, _stmt in sites:
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                if node.func.attr.value in CONTAINER_MUTATORS:
                    written.add(node.func.value)
            elif isinstance(node, (cst.Assign, cst.AugAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                written.update(t.value for t in targets if isinstance(t, cst.Subscript))
            if isinstance(node, _COMPREHENSIONS):
                not_reads.update(_comprehension_locals(node))
            if isinstance(node, cst.Attribute):
                not_reads.add(node.attr)
            elif isinstance(node, cst.Arg) and node.keyword is not None:
                not_reads.add(node.keyword)
            elif isinstance(node, (cst.Global, cst.Nonlocal)):
                not_reads.update(item.name for item in node.names)
        reported_reads: set[str] = set()
        object_reads: list[frozenset[cst.Name]] = []

        def objects() -> frozenset[cst.Name]:
            if not object_reads:
                object_reads.append(object_uses(info.node))
            return object_reads[0]

        once = "runs once, when the function is traced, not at every call"
        # `self` of a method of a plain (non-pytree) class that the module instantiates at module
        # level (`guide = AutoDelta(2)`): a Python object that outlives the trace. An object built
        # inside the trace (and returned from it) is not reported.
        plain_self = (
            info.positional[0]
            if info.is_method
            and info.positional
            and info.class_name not in jc.pytree_classes
            and info.class_name in jc.instances.values()
            and info.name not in CONSTRUCTION
            and info.positional[0] not in declared
            else None
        )

        def self_store(target: cst.BaseExpression, value: cst.BaseExpression | None, stmt) -> Finding | None:
            """`self.x = v`, `self.d[k] = v`, `self.x += v` storing a traced value on a plain object."""
            if plain_self is None or value is None or not isinstance(target, (cst.Attribute, cst.Subscript)):
                return None
            if not (stored_root_name(target) == plain_self and facts.traced(value, stmt)):
                return None
            what = (
                f"`{short(ctx, target)}` stores a traced value on a `{info.class_name}` object, which outlives the "
                f"trace: it {once}, and the stored tracer leaks"
            )
            advice = "return the value and store it outside the traced function"
            return self._report(ctx, info, target, what, advice, preview.STORES_TRACER)

        def outer_container(name: str) -> str | None:
            """Where `name` is a container built outside this function, if it is one."""
            if name in facts.locals and name not in declared:
                return None
            parent = info.parent
            while parent is not None:
                if name in _locals_of(parent):
                    if _same_trace(info, parent) or not _container_local(ctx, parent, name):
                        return None
                    return "the enclosing function"
                parent = parent.parent
            return "the module" if name in outer.containers else None

        for node, stmt in sites:
            # assignments to `global`/`nonlocal` names, and item assignments into outer containers
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    stored = self_store(target, node.value, stmt)
                    if stored is not None:
                        yield stored
                        continue
                    for name_node in _target_name_nodes(target):
                        kind = declared.get(name_node.value)
                        if kind == "nonlocal" and _same_trace(info, _owner(info, name_node.value)):
                            continue
                        kept = kind is not None and kept_trace(jc, info)
                        if kind is not None and not kept and not _leaks_tracer(facts, target, node, stmt):
                            continue  # an eager vmap or grad runs the body, and the write, at every call
                        if kind is not None:
                            what = f"assignment to {kind} `{name_node.value}` inside traced code " + (
                                once if kept else "stores a tracer that outlives the transform (it leaks)"
                            )
                            advice = "return the new value instead (or carry it through the loop)"
                            leaks = _leaks_tracer(facts, target, node, stmt)
                            path = preview.STORES_TRACER if leaks else preview.WRITES_STATE
                            yield self._report(ctx, info, target, what, advice, path)
                    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Attribute):
                        # `a.dct[k] = ...` on an object the module built (`a = A({})`): its state
                        root = target.value
                        while isinstance(root, cst.Attribute):
                            root = root.value
                        if (
                            isinstance(root, cst.Name)
                            and root.value in jc.instances
                            and root.value not in facts.locals
                            and _owner(info, root.value) is None
                        ):
                            what = f"`{short(ctx, target)} = ...` mutates an object of the module; it {once}"
                            advice = "return the value and store it outside the traced function"
                            traced = node.value is not None and facts.traced(node.value, stmt)
                            path = preview.STORES_TRACER if traced else preview.WRITES_STATE
                            yield self._report(ctx, info, target, what, advice, path)
                    if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                        where = outer_container(target.value.value)
                        if where is not None and _stores_traced(facts, stmt, node.value, target.slice):
                            what = f"`{short(ctx, target)} = ...` mutates a container of {where}; it {once}"
                            advice = "return the value and store it outside the traced function"
                            yield self._report(ctx, info, target, what, advice, preview.STORES_TRACER)
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                receiver = node.func.value
                if node.func.attr.value in RETURN_NONE and _result_used(node, stmt):
                    continue
                if isinstance(receiver, (cst.Attribute, cst.Subscript)) and node.func.attr.value in CONTAINER_MUTATORS:
                    traced_arg = next((a.value for a in node.args if facts.traced(a.value, stmt)), None)
                    stored = self_store(receiver, traced_arg, stmt)
                    if stored is not None:
                        yield stored
                        continue
                if isinstance(receiver, cst.Name) and node.func.attr.value in CONTAINER_MUTATORS:
                    where = outer_container(receiver.value)
                    stores = where is not None and _stores_traced(facts, stmt, *(a.value for a in node.args))
                    if where is not None and (node.func.attr.value in EMPTYING or stores):
                        yield self._report(
                            ctx,
                            info,
                            node,
                            f"`{receiver.value}.{node.func.attr.value}(...)` mutates a container of {where}; it {once}",
                            "return what you collect (stack it, or carry it through `lax.scan`)",
                            preview.STORES_TRACER if stores else preview.WRITES_STATE,
                        )
            elif isinstance(node, cst.Name) and node not in not_reads:
                name = node.value
                if name in reported_reads or name in declared:
                    continue
                if name not in outer.reassigned and (name not in outer.changed_by or node in written):
                    continue
                if (name in facts.locals and name not in declared) or _owner(info, name) is not None:
                    continue
                if name not in outer.reassigned and outer.changed_by[name] == info.name:
                    continue  # its own trace-time bookkeeping (`count_per_tags`): no other code changes it
                if name not in outer.changed_by and not kept_trace(jc, info):
                    continue  # traced only by an eager vmap or grad: every call reads the global again
                if name in outer.late and not outer.late[name].after(_defined_at(ctx, info)):
                    continue  # every late rebinding runs before the function exists (a notebook's setup cells)
                if name in outer.late and not outer.late[name].read_by(_top_level_name(info)):
                    continue  # no compiled function called after the rebinding runs this one (a notebook)
                if _compiled_once(ctx, info):
                    continue  # `jax.jit(lambda: ...)()`: the compiled function is never called again
                if name in outer.reassigned and not read_as_data(
                    [n for n, _ in sites if isinstance(n, cst.Name) and n.value == name and n not in not_reads],
                    objects(),
                ):
                    continue  # only called or used as an object: an optimizer, a model (`held_objects`)
                reported_reads.add(name)
                if name not in outer.reassigned:
                    yield self._report(
                        ctx,
                        info,
                        node,
                        f"module-level `{name}` is changed at run time (`{outer.changed_by[name]}` fills or empties "
                        "it), but traced code reads it once, at trace time: later contents are not seen by the "
                        "compiled function",
                        "pass what it holds as an argument (a static one with `static_argnames` if it is a Python value)",
                        preview.READS_STATE,
                    )
                    continue
                yield self._report(
                    ctx,
                    info,
                    node,
                    f"module-level `{name}` is rebound (line {outer.reassigned[name]}) after a call that can trace "
                    "this code, but traced code reads it once, at trace time: later values are not seen by the "
                    "compiled function",
                    f"pass `{name}` as an argument (a static one with `static_argnames` if it is a Python value)",
                    preview.READS_STATE,
                )

    def _report(self, ctx: RuleContext, info: FuncInfo, node: cst.CSTNode, message: str, advice: str, path: str) -> Finding:
        """The finding, preview or not by its evidence `path` (`preview.STORES_TRACER`, ...)."""
        found = ctx.finding(self, "JAX404", node, message + info.traced_because(), ctx.manual(advice))
        return preview.outer_state_finding(found, path)


def _stores_traced(facts, stmt, *parts) -> bool:
    """Whether a store into an outer container may put a traced value in it (as a value, or as a
    key: `parts` are expressions or a subscript's elements): a tracer kept past the trace. Not when
    the function's traced parameters are known and every part is a literal or built from its own
    untraced names (`count_per_tags[name] += 1`, a memo keyed by a static name): trace-time
    bookkeeping, as library naming schemes do it on purpose (google/learned_optimization@32186aa
    learned_optimization/summary.py dedups oryx tag names). A closure's or a global's value is
    unknown and counts as traced."""
    if not facts.entry_traced:
        return True  # which values are traced here is not known
    for part in parts:
        if isinstance(part, (list, tuple)):  # `x[k, j]`'s elements
            exprs = [e.slice.value for e in part if isinstance(e.slice, cst.Index)]
        else:
            exprs = [part] if part is not None else []
        for e in exprs:
            if facts.traced(e, stmt):
                return True
            stack: list[cst.CSTNode] = [e]
            while stack:
                node = stack.pop()
                if isinstance(node, cst.Name) and node.value not in facts.locals:
                    return True
                if not isinstance(node, cst.Attribute):  # `a.b`: only `a` is a name
                    stack.extend(node.children)
                else:
                    stack.append(node.value)
    return False


def _compiled_once(ctx: RuleContext, info: FuncInfo) -> bool:
    """`info` is a lambda every transform of which is called where it is made
    (`variables = jax.jit(lambda: model.init(rng, batch), backend="cpu")()`, vision_transformer's
    vit_jax.ipynb): nothing keeps the compiled function to call it after a rebinding."""
    if not isinstance(info.node, cst.Lambda) or not info.jit_sites:
        return False
    for site in info.jit_sites:
        parent = ctx.parent(site.node) if isinstance(site.node, cst.Call) else None
        if not (isinstance(parent, cst.Call) and parent.func is site.node):
            return False
    return True


def _leaks_tracer(facts, target: cst.BaseExpression, node: cst.CSTNode, stmt) -> bool:
    """`aux = loss` (one name) storing a traced value: under an eager `vmap` or `grad`, which run
    the body at every call, the only harm of a `global`/`nonlocal` write is the tracer it leaks. An
    unpacked result (`state, moduledef = module.partition()`, nnx's lifted init) may store its
    static part only, so it is not shown to leak."""
    value = getattr(node, "value", None)
    return isinstance(target, cst.Name) and value is not None and facts.traced(value, stmt)


def _top_level_name(info: FuncInfo) -> str | None:
    """The name of the module-level def that holds `info` (None for a lambda or a method)."""
    while info.parent is not None:
        info = info.parent
    node = info.node
    return node.name.value if isinstance(node, cst.FunctionDef) and info.class_name is None else None


def _defined_at(ctx: RuleContext, info: FuncInfo) -> int:
    """The line of the module-level def that holds `info` (itself, or the function it is nested in)."""
    while info.parent is not None:
        info = info.parent
    return ctx.position(info.node).start.line


# -- the decision -------------------------------------------------------------------------------
def _target_name_nodes(target: cst.BaseExpression) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _target_name_nodes(el.value)]
    if isinstance(target, cst.StarredElement):
        return _target_name_nodes(target.value)
    return []


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _comprehension_locals(comp: cst.BaseComp) -> list[cst.Name]:
    """The `Name`s in `comp` that spell a variable its own `for` clauses bind: the comprehension's
    scope, not the module's (`[x * k for k in range(3)]` reads no global `k`)."""
    bound: set[str] = set()
    clause = comp.for_in
    while clause is not None:
        bound.update(n.value for n in _target_name_nodes(clause.target))
        clause = clause.inner_for_in
    found: list[cst.Name] = []

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value in bound:
                found.append(n)

    walk(comp, V())
    return found


_INLINE_REASONS = ("defined inside traced", "called from traced", "read on a traced object")


def _same_trace(info: FuncInfo, owner: FuncInfo | None) -> bool:
    """Does `info` run inline, in the same trace as the traced `owner` of the state it touches, so
    that the state lives only as long as that one trace (a callback or helper called directly, as
    opposed to a `scan`/`fori_loop` body, a `vmap`ped function or a separately jitted one)?"""
    if owner is None or not owner.in_trace:
        return False
    node = info
    while node is not None and node is not owner:
        if not node.reasons or not all(r.startswith(_INLINE_REASONS) for r in node.reasons):
            return False
        node = node.parent
    return node is owner


def _owner(info: FuncInfo, name: str) -> FuncInfo | None:
    parent = info.parent
    while parent is not None:
        if name in _locals_of(parent):
            return parent
        parent = parent.parent
    return None


def _locals_of(info: FuncInfo) -> set[str]:
    if info.facts is not None:
        return info.facts.locals
    return assigned_names(info.node) | set(param_names(info.node.params))


def _is_container_value(ctx: RuleContext, value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return True
    return isinstance(value, cst.Call) and (ctx.names.qualify(value.func) or "") in CONTAINER_CALLS


def _container_local(ctx: RuleContext, info: FuncInfo, name: str) -> bool:
    """Every binding of `name` in `info`'s own body is a container display or constructor."""
    values: list[cst.BaseExpression | None] = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is not info.node and isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(n, cst.Assign):
                for t in n.targets:
                    if isinstance(t.target, cst.Name) and t.target.value == name:
                        values.append(n.value)
                    elif any(x.value == name for x in _target_name_nodes(t.target)):
                        values.append(None)
            elif isinstance(n, cst.AnnAssign) and isinstance(n.target, cst.Name) and n.target.value == name:
                values.append(n.value)
            return True

    walk(info.node, V())
    return bool(values) and all(v is not None and _is_container_value(ctx, v) for v in values)



# `OuterStateMutationCommand`: the libcst codemod command, made on first access
__getattr__ = commands_for(OuterStateMutationRule)
