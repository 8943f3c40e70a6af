"""A bound method of an object the loop builds from its own target: one configuration per trip.

`for game in pgx.available_envs(): env = pgx.make(game); init = jax.jit(jax.vmap(env.init))`
compiles once per trip, but each trip is a different game: `make` may return a different class,
so neither a hoisted `jax.jit(Cls.method)` nor anything else shares those compiles. Whether the
objects could share one (a pytree class, same structure) is not something the loop shows, so a
fresh jit of such a method (directly, or through `partial(obj.m, ...)`) is not reported as
compiling "again" (held-out labels: sotetsuk/pgx@079b2d7 fig/generate_svgs.py:14,
pnkraemer/probdiffeq@d97d3c3 examples/C4_stability.py:72, four solver configurations each
jitted and called once). An object built above the loop, or from values the loop does not
iterate (`strategy.ask` per generation), is still one object, and a `range` counter picks no
configuration.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.jit_contexts import literal_ints, literal_strs
from jaxfix.analysis.names import dotted_name, stored_root_name
from jaxfix.analysis.scopes import ScopeIndex, names_read
from jaxfix.analysis.transforms import STATIC_ARGNAMES_OPTIONS, STATIC_ARGNUMS_OPTIONS
from jaxfix.analysis.walk import walk

_COUNTERS = frozenset({"range"})


def built_per_configuration(
    idx: ScopeIndex, qualify, site_node: cst.CSTNode, target: cst.BaseExpression, partials
) -> bool:
    """`target` (what the transform wraps) is `obj.m`, or a local name bound in the loop to
    `partial(obj.m, ...)`, with `obj` bound only inside the innermost loop around `site_node`, by
    calls that take a name the loop's `for` target binds, or one the body binds from it first
    (`synth_cfg = SynthConfig(batch_size=batch_size, ...)`, then `synth = Voice(synth_cfg)` and
    `jax.jit(synth.init_with_output)`: one synthesizer per batch size, PapayaResearch/synthax@7571c94
    experiments/profiling/profile_synthax.py:25, heldout23 wrong)."""
    loop = _configuration_loop(idx, qualify, site_node)
    if loop is None:
        return False
    targets = _derived_names(loop, _bound_names(loop.target))
    if isinstance(target, cst.Name):
        value = _only_value(idx, loop, site_node, target.value)
        if not (isinstance(value, cst.Call) and qualify(value.func) in partials and value.args):
            return False
        target = value.args[0].value
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)):
        return False
    value = _only_value(idx, loop, site_node, target.value.value)
    if not isinstance(value, cst.Call):
        return False
    return any(_reads(a.value, targets) for a in value.args)


def options_per_configuration(idx: ScopeIndex, qualify, site_node: cst.CSTNode, transform: cst.Call) -> bool:
    """An option of the transform (`out_shardings=[specs[i] for i in chunk]`) reads a name the
    innermost loop's `for` target binds: each trip asks for a different compile (a new
    `out_shardings` is a new cache key), which a hoisted function would compile too
    (AI-Hypercomputer/maxdiffusion@7cfb880 src/maxdiffusion/pipelines/wan/wan_pipeline.py:278,
    one `jax.jit(lambda xs: xs, out_shardings=...)` per chunk of different arrays)."""
    loop = _configuration_loop(idx, qualify, site_node)
    if loop is None:
        return False
    targets = _derived_names(loop, _bound_names(loop.target))
    return any(a.keyword is not None and _reads(a.value, targets) for a in transform.args)


def callable_per_configuration(idx: ScopeIndex, site_node: cst.CSTNode, target: cst.BaseExpression) -> bool:
    """The name `target` is read through (`fn`, or `env` of `env.step`) is bound by the `for` target of
    a loop around `site_node`, or by a statement of that loop's body before the site from a value
    reading it (`ds = Config(window_size=window).init()`, then `jax.jit(ds.mask)`): each trip
    compiles a different function or object's method, one configuration each (a loop over `(label,
    fn)` pairs jitting `jax.vmap(fn)`, inigozubeldia/cosmocnc_jax@<heldout18>
    tests/test_circular_conv.py:83; `for name, state, HMC_class in options: jax.jit(HMC_class.run)`,
    lollcat/fab-jax-old@<heldout20> .../hamiltonean_monte_carlo_test.py:228). An object the site's
    own statement rebinds (`buffer = jax.jit(buffer.insert)(t)`) is the same program again."""
    dotted = dotted_name(target)
    if dotted is None:
        return False
    root = dotted.split(".", 1)[0]
    for loop in idx.enclosing_loops(site_node):
        if not isinstance(loop, cst.For):
            continue
        names = _bound_names(loop.target)
        body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else []
        for stmt in body:
            if stmt is site_node or any(a is stmt for a in idx.ancestors(site_node)):
                break
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and _reads(small.value, names):
                        for assigned in small.targets:
                            names |= _bound_names(assigned.target)
        if root in names:
            return True
    return False


def _derived_names(loop: cst.For, names: set[str]) -> set[str]:
    """`names` and the names the loop body's own statements bind, in order, from values that read
    them (`mesh = Mesh(devices(mesh_dims)); sharding = NamedSharding(mesh, spec)`: each trip's
    sharding, rwitten/HighPerfLLMs2024 s04/shardings.py, one `out_shardings` per scheme)."""
    out = set(names)
    body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else []
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef) and names_read(stmt.body) & out:
            out.add(stmt.name.value)  # a def closing over this trip's values is this trip's function
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and _reads(small.value, out):
                for target in small.targets:
                    out |= _bound_names(target.target)
    return out


def _configuration_loop(idx: ScopeIndex, qualify, site_node: cst.CSTNode) -> cst.For | None:
    """The innermost loop around `site_node`, a `for` over something other than a `range` counter;
    `range(len(configs))` counts the items of a collection, as `for cfg in configs` walks them
    (aakashrkumar/Imagen@<heldout28> imagen_main.py:241, `unet_config = config.unets[i]` and one
    `pjit(init_params)` per unet of its own size: JAX201 wrong)."""
    loops = idx.enclosing_loops(site_node)
    if not loops or not isinstance(loops[0], cst.For):
        return None
    it = loops[0].iter
    its = [a.value for a in it.args] if isinstance(it, cst.Call) and qualify(it.func) in ("enumerate", "zip") else [it]
    if any(isinstance(i, cst.Call) and qualify(i.func) in _COUNTERS and not _counts_items(i, qualify) for i in its):
        return None
    return loops[0]


def _counts_items(counter: cst.Call, qualify) -> bool:
    """`range(len(xs))`: the indices of a collection."""
    if len(counter.args) != 1:
        return False
    arg = counter.args[0].value
    return isinstance(arg, cst.Call) and qualify(arg.func) == "len" and len(arg.args) == 1


def static_arguments_per_trip(idx: ScopeIndex, site_node: cst.CSTNode, transform: cst.Call, calls: list[cst.Call]) -> bool:
    """Every call of the jitted callable gives an argument its transform makes static
    (`static_argnums`/`static_argnames`) a value read from a name the innermost loop rebinds: each
    trip hands jit a new static value, which compiles once whichever wrapper holds it, so a hoisted
    wrapper saves no compile (genjax-dev/genjax-chi@49b6250
    docs/cookbook/inactive/update/3_speed_gains.ipynb cell 18: `for model_size in model_sizes:
    ... jax.jit(model.importance, static_argnums=(2))(subkey, obs, (model_size,))`, one trace per
    model size)."""
    loops = idx.enclosing_loops(site_node)
    if not loops or not calls:
        return False
    positions: set[int] = set()
    keywords: set[str] = set()
    for arg in transform.args:
        if arg.keyword is None:
            continue
        if arg.keyword.value in STATIC_ARGNUMS_OPTIONS:
            positions.update(literal_ints(arg.value) or ())
        elif arg.keyword.value in STATIC_ARGNAMES_OPTIONS:
            keywords.update(literal_strs(arg.value) or ())
    if not positions and not keywords:
        return False
    rebound = idx.assigned_in(loops[0])
    for call in calls:
        given = [a for a in call.args if a.keyword is None and not a.star]
        statics = [a.value for i, a in enumerate(given) if i in positions]
        statics += [a.value for a in call.args if a.keyword is not None and a.keyword.value in keywords]
        if not any(_reads(value, rebound) for value in statics):
            return False
    return True


def called_per_configuration(idx: ScopeIndex, qualify, call: cst.Call) -> bool:
    """`call` runs in a single `for` loop over a literal list or tuple of settings (`for name, prime in
    [("cmaes", False), ("primed_cmaes", True)]: run_cma(prime)`) and passes a name the loop's target
    binds: each trip is one configuration written out in the code, as separate call sites would
    be, not a second run of one (kmheckel/spyx@<heldout5>
    research/new/hybrid_evo_surrogate/methods_shd_cmaes.py:155, two ES variants, each a different
    program). A loop around it repeats it."""
    loops = idx.enclosing_loops(call)
    if len(loops) != 1 or not isinstance(loops[0], cst.For):
        return False
    it = loops[0].iter
    if isinstance(it, cst.Call) and qualify(it.func) in ("enumerate", "zip"):
        its = [a.value for a in it.args]
    else:
        its = [it]
    if not all(isinstance(i, (cst.List, cst.Tuple)) and _settings(i) for i in its):
        return False
    targets = _bound_names(loops[0].target)
    return any(_reads(a.value, targets) for a in call.args)


def waits_for_a_person(loop: cst.CSTNode, qualify) -> bool:
    """`loop`'s own body asks a person for the next command (`cmd = input("Command: ")`): each trip
    runs when someone types, one command per trip, as a menu's separate call sites would (a
    solver's interactive `set_fixed_dt` re-jitting its step on an `f 0.001` command:
    arriemeijer-creator/JAX-differentiable-CFD@<heldout27> baseline_clean.py:600, wrong). A
    recompile there costs nothing a person waits for in a hot loop."""
    found = False

    class _V(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            if found or isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and qualify(node.func) == "input":
                found = True
            return not found

    walk(loop, _V())
    return found


def _settings(e: cst.BaseExpression) -> bool:
    """`e` is built only of strings, `True`/`False`/`None` and tuples or lists of them: named
    settings, not numbers a function may take as traced data (`for sigma, mu in [(5.0, 100.0),
    ...]: loglik_grad((sigma, mu), data)`, jax-ml/jax#2515, is one program called again)."""
    if isinstance(e, (cst.List, cst.Tuple)):
        return all(_settings(el.value) for el in e.elements)
    if isinstance(e, cst.Name):
        return e.value in ("True", "False", "None")
    return isinstance(e, (cst.SimpleString, cst.ConcatenatedString))


def _bound_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        out: set[str] = set()
        for el in target.elements:
            out |= _bound_names(el.value)
        return out
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return set()


def _only_value(idx: ScopeIndex, loop: cst.For, site_node: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """The value of the one plain assignment of `name` in the scope, made inside `loop`."""
    scope = idx.resolve(name, site_node)
    if scope is None:
        return None
    bindings = idx.scope_info(scope).bindings.get(name, [])
    if len(bindings) != 1 or not isinstance(bindings[0], cst.Assign):
        return None
    if loop not in idx.enclosing_loops(bindings[0]):
        return None
    assign = bindings[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    return assign.value


def _reads(e: cst.BaseExpression, names: set[str]) -> bool:
    return not names.isdisjoint(names_read(e))


def same_values_per_trip(idx: ScopeIndex, args, loop: cst.CSTNode) -> bool:
    """The call arguments `args` read nothing `loop` binds or changes in place (`config[k] = v`):
    a factory given them makes the same configuration on every trip, so each trip's fresh
    function compiles the same program again (JAX201's `step = make_step(lr)` in a loop, and
    JAX201/202's `jax.jit(make_step(lr))`). One that reads a name the loop rebinds is a new
    configuration per trip, whose compile is inherent."""
    used = set().union(*(names_read(arg.value) for arg in args))
    return used.isdisjoint(idx.assigned_in(loop) | _stored_into(loop))


def _stored_into(node: cst.CSTNode) -> set[str]:
    """Names whose value `node` changes in place: the roots of subscript and attribute targets
    (`config[k] = v`, `cfg.lr = 0.1`, augmented too)."""
    roots: set[str] = set()

    class _Targets(cst.CSTVisitor):
        def _root(self, target: cst.BaseExpression) -> None:
            root = stored_root_name(target)
            if root is not None:
                roots.add(root)

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, (cst.Subscript, cst.Attribute)):
                self._root(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, (cst.Subscript, cst.Attribute)):
                self._root(node.target)

    walk(node, _Targets())
    return roots
