"""JAX204 nnx-step-without-cached-partial: an `@nnx.jit` step called once per batch in a loop
with the same NNX graph objects, which it traverses again in Python on every call."""

from __future__ import annotations

import ast
from collections.abc import Iterable

import libcst as cst

from codemods._command import commands_for
from codemods.jit_placement.preview import PREVIEW as PREVIEW_PATHS
from codemods.jit_placement.preview import flag, loop_path
from codemods.jit_placement.sites import INCLUDE_TESTS, skips_test_code
from jaxfix.analysis import astscan
from jaxfix.analysis.cstparse import parsing_config
from jaxfix.analysis.local_calls import calls_named
from jaxfix.analysis.names import ImportMap, dotted_name
from jaxfix.analysis.project_lookups import project_class_kind
from jaxfix.analysis.pytrees import NNX, PYTREE_BASES
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.transforms import CACHED_PARTIAL, LAX_LOOPS, PARTIAL_NAMES
from jaxfix.analysis.walk import own_returns, walk
from jaxfix.model import Finding, Fix, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid

NNX_JIT = "flax.nnx.jit"
# the bases that make a class an NNX graph object (pytrees' one table)
NNX_GRAPH_BASES = frozenset(name for name, kind in PYTREE_BASES.items() if kind == NNX)


class NnxStepWithoutCachedPartialRule(Rule):
    """
    ## What it does
    Finds a call of an `@nnx.jit` function (at module level or nested in the driver that calls
    it) inside a `for`/`while` loop whose leading arguments are the same NNX graph objects on
    every trip (a model built from an `nnx.Module` class of the file or of another module of the
    project, an `nnx.*` layer, an `nnx.Optimizer`, or a function of the file that returns one),
    the loop passing the batch after them: `loss = train_step(model, optimizer, x, y)`.

    ## Why is this bad?
    Every call of an `nnx.jit` function first walks the graph objects it is given in Python
    (split into graph definition and state, then merge and write the updated Variables back)
    before the compiled program runs. For a small model that traversal is most of a step.
    `nnx.cached_partial(train_step, model, optimizer)` (Flax's performance guide) caches the
    traversal of the objects it binds; the loop then calls the partial with the batch.
    Measured (`python benchmarks/nnx_cached_partial.py --steps 300 --repeats 3`, jax 0.10.2,
    flax 0.12.8, CPU (2 shared cores), a 4-layer MLP, batch 32, best of 3, the same parameters
    after both loops): width 8: 5.7 ms -> 0.76 ms per step (7.6x); width 64: 6.8 ms -> 0.78 ms
    (8.8x); width 256: 6.6 ms -> 3.6 ms (1.8x), where the compiled step takes a larger share.

    ## Known problems
    Which objects are NNX graph objects is read from their bindings: names bound, in the scope
    they resolve to (the loop's function, or the module for a notebook's globals read in a
    `train_one_epoch` function), only to calls of an `nnx.Module` subclass (of the file, or of
    the project when the whole project is checked), of a `flax.nnx` class (`nnx.Linear`,
    `nnx.Optimizer`), of `nnx.merge`, or of a function of the file each of whose returns builds
    one; or bound only to calls of a capitalised (class) name and handed to `nnx.Optimizer` as its
    model, which takes only a graph object (a notebook's `model = KAN(...)` from its project's
    package, which a notebook checked without the project index cannot see). Parameters (unless
    annotated with such a class: `def train(model: VAE, optimizer: nnx.Optimizer, ...)`), and
    names also bound to anything else, are not taken for them: a step whose graph objects come
    from elsewhere is not reported. Nor is a loop that calls a method of one of the objects for
    its effect (`model.update_grids(...)`, `model.eval()`: a statement, its result unused), which
    may change its graph (a new Variable, a static attribute) under a cached partial. Test code is not reported (a
    test's training loop exercises the step): set `include-tests = true` in
    `[tool.jaxfix.jit-placement]` to report it. The gain is the traversal's share of the step: large for small models and on
    CPU, small for large models on an accelerator.

    ## Preview
    Reported by default when the step runs on every trip of the loop (159 real, 14 debatable,
    0 wrong on the blind pools). With `--preview` only: a `range(n)` of at most 10 trips (0 real of
    4), a step under an `if` in the loop (an eval every k steps), and a step in a loop that also runs
    another loop beside it (an eval per epoch, an update per rollout), and a step whose body runs a
    lax/nnx loop (an `nnx.scan` over every minibatch): the traversal is real but a small share of
    what the trip or the call does (the figures in `jit_placement.preview`).

    ## Example
    ```python
    @nnx.jit
    def train_step(model, optimizer, x, y):
        ...

    for x, y in batches:
        loss = train_step(model, optimizer, x, y)
    ```

    ## Use instead
    ```python
    train_step_cached = nnx.cached_partial(train_step, model, optimizer)
    for x, y in batches:
        loss = train_step_cached(x, y)
    ```

    ## Fix safety
    Unsafe, always: `nnx.cached_partial` works in graph mode only (flax's default, `nnx.jit(...,
    graph=False)` is left alone) and requires the graph structure of the objects it caches to be
    the same after every call (a step that adds or removes a Variable or submodule, or code in
    the loop that does, makes it raise); it clones the cached objects (sharing their Variables,
    so updates reach `model` and `optimizer`), so code that compares object identity inside the
    step sees the clones. It needs flax >= 0.11. The fix binds the partial just before the loop
    and calls it in the loop; a loop that rebinds one of the cached names is not reported.

    ## References
    - https://flax.readthedocs.io/en/latest/guides/performance.html
    """

    name = "nnx-step-without-cached-partial"
    codes = (
        Code(
            "JAX204",
            "nnx-step-without-cached-partial",
            "`@nnx.jit` step called per batch with the same graph objects (no `nnx.cached_partial`)",
            fix="sometimes",
        ),
    )
    prefilter = ("nnx",)
    options = (INCLUDE_TESTS,)
    options_table = "jit-placement"  # the option JAX201-JAX203 share
    uses_project = True  # an NNX class another module of the project defines (`_GraphObjects`)
    valid = (
        Valid(
            """
            import optax
            from flax import nnx


            @nnx.jit
            def train_step(model, optimizer, x, y):
                return model(x).mean()


            def fit(batches):
                model = nnx.Linear(2, 1, rngs=nnx.Rngs(0))
                optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
                step = nnx.cached_partial(train_step, model, optimizer)
                for x, y in batches:
                    step(x, y)
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import optax
            from flax import nnx


            @nnx.jit
            def train_step(model, optimizer, x, y):
                return model(x).mean()


            def fit(batches):
                model = nnx.Linear(2, 1, rngs=nnx.Rngs(0))
                optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
                for x, y in batches:
                    loss = train_step(model, optimizer, x, y)
                return loss
            """,
            fixed="""
            import optax
            from flax import nnx


            @nnx.jit
            def train_step(model, optimizer, x, y):
                return model(x).mean()


            def fit(batches):
                model = nnx.Linear(2, 1, rngs=nnx.Rngs(0))
                optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
                train_step_cached = nnx.cached_partial(train_step, model, optimizer)
                for x, y in batches:
                    loss = train_step_cached(x, y)
                return loss
            """,
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A def decorated with `nnx.jit` and a call of it by name inside a loop."""
        # the decorated defs of the flat listing the screens share (`astscan.nodes`), before the
        # imports are read: most modules decorate few functions (this screen walked the whole tree
        # with `ast.walk`, as long as the three other jit-placement screens together)
        decorated = [n for n in astscan.nodes(tree) if type(n) is ast.FunctionDef and n.decorator_list]
        if not decorated:
            return False
        qualify = ImportMap.from_ast(tree).qualify_ast
        steps = {node.name for node in decorated if any(_names_nnx_jit(d, qualify) for d in node.decorator_list)}
        if not steps:
            return False
        for loop in astscan.nodes(tree):
            if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                for n in ast.walk(loop):
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in steps:
                        return True
        return False

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        if skips_test_code(ctx, self):
            return  # a test's training loop exercises the step; its speed is not the user's
        steps = _nnx_jitted_steps(ctx)
        if not steps:
            return
        idx: ScopeIndex = ctx.fact(ScopeIndex, ScopeIndex.of)
        graph = _GraphObjects(ctx, idx)
        step_ids = {id(step) for step in steps}
        for call in calls_named(ctx.module, {step.name.value for step in steps}, methods=False):
            defs = _called_defs(idx, call)
            if not defs or any(id(d) not in step_ids for d in defs):
                continue  # a local binding of the same name, or a name also bound to something else
            loops = idx.enclosing_loops(call)
            if not loops or not isinstance(loops[0], (cst.For, cst.While)):
                continue
            loop = loops[0]
            if any(loop in idx.ancestors(d) for d in defs):
                continue  # a step defined on every trip: a new function each time (JAX201's concern)
            cached = graph.leading(call, loop)
            if not cached or len(cached) == len(call.args):
                continue
            step = call.func.value
            what = (
                f"`{step}` (`nnx.jit`) is called once per trip with the same graph objects "
                f"({', '.join(f'`{n}`' for n in cached)}), which it traverses in Python on every call"
            )
            fix = self._fix(ctx, idx, loop, call, step, cached)
            message = what if fix.safety is Safety.MANUAL else f"{what}; {fix.title}"
            path = loop_path(idx, call, loop)
            if ("JAX204", path) not in PREVIEW_PATHS and any(_loops_over_its_work(ctx, d) for d in defs):
                path = "looping-step"
            yield flag(ctx.finding(self, "JAX204", call, message, fix), path)

    def _fix(self, ctx: RuleContext, idx: ScopeIndex, loop, call: cst.Call, step: str, cached: list[str]) -> Fix:
        calls_in_loop = [c for c in calls_named(loop, {step}, methods=False) if c is not call]
        if calls_in_loop:
            return ctx.manual(
                f"bind `nnx.cached_partial({step}, {', '.join(cached)})` once before the loop and call it "
                "(the loop calls the step more than once)"
            )
        holder = ctx.parent(loop)
        if not isinstance(holder, (cst.IndentedBlock, cst.Module)):
            return ctx.manual(f"bind `nnx.cached_partial({step}, ...)` before the loop and call it in the loop")
        new_name = f"{step}_cached"
        if idx.resolve(new_name, call) is not None:
            return ctx.manual(f"bind `nnx.cached_partial({step}, ...)` before the loop (`{new_name}` is taken)")
        spelled, imports = ctx.names.reference(CACHED_PARTIAL)
        binding = cst.parse_statement(
            f"{new_name} = {spelled}({step}, {', '.join(cached)})\n", config=parsing_config(ctx.module)
        )
        new_call = call.with_changes(func=cst.Name(new_name), args=_trimmed(call.args[len(cached) :]))
        why = f"needs flax >= 0.11 in graph mode and the same graph structure of {', '.join(f'`{n}`' for n in cached)} after every call"
        return ctx.rewrite(
            f"bind `{new_name} = nnx.cached_partial({step}, {', '.join(cached)})` before the loop and call it (unsafe: {why})",
            Safety.UNSAFE,
            replace={call: new_call},
            insert_before={loop: [binding]},
            imports=imports,
        )


def _names_nnx_jit(decorator: ast.AST, qualify) -> bool:
    """`_is_nnx_jit` on the stdlib AST, without the graph-mode test (the screen admits more)."""
    if type(decorator) is ast.Call:
        if qualify(decorator.func) in PARTIAL_NAMES and decorator.args:
            return qualify(decorator.args[0]) == NNX_JIT
        return qualify(decorator.func) == NNX_JIT
    return qualify(decorator) == NNX_JIT


def _trimmed(args) -> list[cst.Arg]:
    """The remaining arguments, the last one without a trailing comma."""
    args = list(args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return args


def _is_nnx_jit(ctx: RuleContext, expr: cst.BaseExpression) -> bool:
    """`@nnx.jit`, `@nnx.jit(...)` or `@partial(nnx.jit, ...)`, in graph mode (no `graph=False`,
    `graph_updates=False`)."""
    if ctx.names.qualify(expr) == NNX_JIT:
        return True
    if not isinstance(expr, cst.Call):
        return False
    q = ctx.names.qualify(expr.func)
    if q in PARTIAL_NAMES and expr.args and ctx.names.qualify(expr.args[0].value) == NNX_JIT:
        pass
    elif q != NNX_JIT:
        return False
    for arg in expr.args:
        if arg.keyword is not None and arg.keyword.value in ("graph", "graph_updates"):
            if not (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
                return False
    return True


def _nnx_jitted_steps(ctx: RuleContext) -> list[cst.FunctionDef]:
    """Defs decorated with `nnx.jit` (graph mode), at module level or nested in a driver
    (`def main(): ... @nnx.jit def train_step(...)`: lbd's `main_mlp.py`)."""
    found: list[cst.FunctionDef] = []

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            if any(_is_nnx_jit(ctx, d.decorator) for d in node.decorators):
                found.append(node)

    walk(ctx.module, V())
    return found


def _loops_over_its_work(ctx: RuleContext, step: cst.CSTNode) -> bool:
    """The step's body runs a lax/nnx loop (`nnx.scan` over every minibatch, a `fori_loop` of
    inner steps), directly or as a decorated inner def: each call does many steps of work, and the
    per-call traversal is a small share of it (heldout12 minimal-rl-nnx's PPO updates: 0/0/7 moved)."""
    found = False

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            found = found or ctx.names.qualify(node.func) in LAX_LOOPS

        def visit_Decorator(self, node: cst.Decorator) -> None:
            nonlocal found
            found = found or ctx.names.qualify(node.decorator) in LAX_LOOPS

    if isinstance(step, cst.FunctionDef):
        walk(step.body, V())
    return found


def _called_defs(idx: ScopeIndex, call: cst.Call) -> list[cst.CSTNode]:
    """The bindings of the name `call` calls, in the scope it resolves to (a notebook may define
    the same `@nnx.jit def step` in two cells)."""
    name = call.func.value
    scope = idx.resolve(name, call)
    return [] if scope is None else list(idx.scope_info(scope).bindings.get(name, []))


class _GraphObjects:
    """Which names hold NNX graph objects: bound, in the scope the name resolves to (the loop's
    function, or the module for a notebook's globals read in `def train_one_epoch`), only to
    calls that build one: a class of the file deriving from an NNX graph base, a capitalised
    `flax.nnx` class (`nnx.Linear`, `nnx.Optimizer`), an NNX class of another module of the
    project (through the project index), or a function of the file whose every return builds one
    (`model = create_model()`)."""

    def __init__(self, ctx: RuleContext, idx: ScopeIndex) -> None:
        self.ctx = ctx
        self.idx = idx
        self.classes = _graph_classes(ctx)
        self._factories: dict[str, bool] = {}
        self._kind_of = None
        self._optimizers: dict[int, frozenset[str]] = {}  # `_optimized`, per scope

    def leading(self, call: cst.Call, loop: cst.CSTNode) -> list[str]:
        """The names of the leading positional arguments of `call` that hold NNX graph objects
        bound outside `loop` and not rebound in it."""
        rebound = self.idx.assigned_in(loop) | _methods_called_on(loop)
        out: list[str] = []
        for arg in call.args:
            if arg.keyword is not None or arg.star or not isinstance(arg.value, cst.Name):
                break
            name = arg.value.value
            if name in rebound or not self.holds_graph_object(name, call):
                break
            out.append(name)
        return out

    def holds_graph_object(self, name: str, at: cst.CSTNode) -> bool:
        scope = self.idx.resolve(name, at)
        if scope is None:
            return False
        info = self.idx.scope_info(scope)
        bindings = info.bindings.get(name, [])
        if not bindings and name in info.params:
            return self._annotated_graph_object(scope, name)
        values = [b.value for b in bindings if isinstance(b, cst.Assign) and len(b.targets) == 1]
        if not bindings or len(values) != len(bindings):
            return False
        if all(self.builds(v) for v in values):
            return True
        return all(_constructs(v) for v in values) and name in self._optimized(scope)

    def _optimized(self, scope: cst.CSTNode) -> frozenset[str]:
        """Names `scope` hands to `nnx.Optimizer` as its model (`nnx.Optimizer(model, tx, wrt=...)`),
        which takes only an NNX graph object: a model built by a class this file cannot see (a
        notebook's `model = KAN(...)` from its project's package: srigas/jaxKAN's tutorials)."""
        key = id(scope)
        if key not in self._optimizers:
            names: set[str] = set()
            qualify = self.ctx.names.qualify

            class _V(cst.CSTVisitor):
                def visit_Call(self, node: cst.Call) -> None:
                    if qualify(node.func) not in _OPTIMIZERS:
                        return
                    for i, arg in enumerate(node.args):
                        first = arg.keyword is None and i == 0 and not arg.star
                        if (first or (arg.keyword is not None and arg.keyword.value == "model")) and isinstance(
                            arg.value, cst.Name
                        ):
                            names.add(arg.value.value)

            walk(scope, _V())
            self._optimizers[key] = frozenset(names)
        return self._optimizers[key]

    def _annotated_graph_object(self, func: cst.CSTNode, name: str) -> bool:
        """A parameter (never rebound in `func`) annotated with an NNX graph class: `def train(model:
        VAE, optimizer: nnx.Optimizer, ...)` (heldout26 vae-jax's driver); an unannotated parameter
        may be handed anything."""
        if not isinstance(func, cst.FunctionDef):
            return False
        params = func.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.name.value == name:
                return param.annotation is not None and self.graph_class(param.annotation.annotation)
        return False

    def graph_class(self, expr: cst.BaseExpression) -> bool:
        """`expr` names a class whose instances are NNX graph objects: a graph class of the file, a
        capitalised `flax.nnx` class (`nnx.Linear`, `nnx.Optimizer`), or an NNX class of another
        module of the project."""
        written = dotted_name(expr)
        if written is not None and written in self.classes:
            return True
        q = self.ctx.names.qualify(expr) or ""
        if q.startswith("flax.nnx."):
            return q.rsplit(".", 1)[-1][:1].isupper() and q not in _NOT_GRAPH
        return written is not None and self._project_kind(written) == NNX

    def builds(self, value: cst.BaseExpression) -> bool:
        """`value` is a call that builds an NNX graph object."""
        if not isinstance(value, cst.Call):
            return False
        if self.ctx.names.qualify(value.func) in _GRAPH_BUILDERS:
            return True  # `nnx.merge(graphdef, state)`
        if isinstance(value.func, cst.Name) and self._factory(value.func.value):
            return True
        return self.graph_class(value.func)

    def _project_kind(self, written: str) -> str | None:
        """The pytree kind of a class another module of the project defines (`from flaxchat.gpt
        import GPT`: NNX), through the project index (`project_lookups.project_class_kind`)."""
        if self._kind_of is None:
            self._kind_of = project_class_kind(self.ctx) or (lambda name: None)
        return self._kind_of(written)

    def _factory(self, name: str) -> bool:
        """A module-level def of the file each of whose returns builds a graph object, directly
        or through a name its body binds only to such calls (`model = GPT(cfg); return model`)."""
        if name not in self._factories:
            self._factories[name] = False  # a recursive factory decides nothing
            defs = [s for s in self.ctx.module.body if isinstance(s, cst.FunctionDef) and s.name.value == name]
            ok = len(defs) == 1 and self._returns_graph_objects(defs[0])
            self._factories[name] = ok
        return self._factories[name]

    def _returns_graph_objects(self, func: cst.FunctionDef) -> bool:
        returns = own_returns(func)
        if not returns:
            return False
        for ret in returns:
            value = ret.value
            if isinstance(value, cst.Name):
                if not self.holds_graph_object(value.value, ret):
                    return False
            elif value is None or not self.builds(value):
                return False
        return True


def _methods_called_on(loop: cst.CSTNode) -> set[str]:
    """Names `loop` calls a method on for its effect, the result unused (`model.update_grids(x,
    g)`, `model.eval()`): the call may change the object's graph (a new Variable, a submodule, a
    static attribute), which a cached partial would not see (srigas/jaxKAN's adaptive grid
    updates). A method whose result is used (`float(model.compute_continuity_loss())`) reads."""
    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Expr(self, node: cst.Expr) -> None:
            func = node.value.func if isinstance(node.value, cst.Call) else None
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
                found.add(func.value.value)

    walk(loop, _V())
    return found


def _constructs(value: cst.BaseExpression) -> bool:
    """`value` calls a class by its conventional capitalised name (`KAN(...)`, `models.GPT(...)`)."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name[:1].isupper()


def _graph_classes(ctx: RuleContext) -> set[str]:
    """Classes of this module that derive, directly or through another class of it, from an NNX
    graph base (`nnx.Module`, `nnx.Pytree`, `nnx.Optimizer`)."""
    classes = {s.name.value: s for s in ctx.module.body if isinstance(s, cst.ClassDef)}
    graph: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, cls in classes.items():
            if name in graph:
                continue
            for base in cls.bases:
                q = ctx.names.qualify(base.value)
                if q in NNX_GRAPH_BASES or dotted_name(base.value) in graph:
                    graph.add(name)
                    grew = True
                    break
    return graph


# flax.nnx callables with a capitalised name that build no graph object
_NOT_GRAPH = frozenset({"flax.nnx.Rngs", "flax.nnx.GraphDef", "flax.nnx.State"})
# flax.nnx optimizers whose first argument (`model=`) must be an NNX graph object
_OPTIMIZERS = frozenset({"flax.nnx.Optimizer", "flax.nnx.ModelAndOptimizer", "flax.nnx.optimizer.Optimizer"})
# flax.nnx functions that return a graph object (`model = nnx.merge(graphdef, state)`)
_GRAPH_BUILDERS = frozenset({"flax.nnx.merge"})


# `NnxStepWithoutCachedPartialCommand`: this rule as a libcst codemod command, made on first access
__getattr__ = commands_for(NnxStepWithoutCachedPartialRule)
