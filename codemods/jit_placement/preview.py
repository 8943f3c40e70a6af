"""Which JAX2xx evidence paths report by default and which only in preview (issue #29).

A rule names the path its evidence took (`loop_path`, `call_path`) and `flag` sets
`Finding.preview` from `PREVIEW`. Figures: first-contact labels (benchmarks/blind/labels, the
thirteen spent pools) of the findings jaxfix still made at main 5175e5c, real/wrong/debatable.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.caller_branches import default_for_every_call, untaken_by_callers
from jaxfix.analysis.local_calls import calls_named, module_calls
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.value_kinds import ValueKinds
from jaxfix.model import Finding

# (code, path) pairs shown only with `--preview`, with their labels (real/wrong/debatable) per
# pool. Rule of thumb: below ~0.8 real on two or more pools, or real fewer than twice, is preview.
# Default paths and their figures:
# - JAX201, every path but `listed-values`: 23/2/0 on nine pools (`range`, `outer-loop`, `periodic` 22/0/0 on eight;
#   `iterable` 1/1/0 and `while` 0/1/0 are single findings, not a pattern);
# - JAX202 `counted-loop` 6/1/0 (dev, heldout3/4/7; heldout11 0/1), `comprehension` (no labels;
#   the rule's canonical `[step(x) for x in xs]`);
# - JAX203 `range`/`while` 3/0/1 (dev 3/0/0, heldout11 0/0/1);
# - JAX204 `range` 106/0/10 (heldout12 8/0/10: PPO updates, each an `nnx.scan` over every
#   minibatch), `iterable` 52/0/4 and `while` 1/0/0, on nine pools.
PREVIEW: frozenset[tuple[str, str]] = frozenset(
    {
        # 0/2/0 on heldout14 (mimic-jax's sweeps over 7 RK4 step counts and 4 tolerances), and 0/2/0
        # on heldout15, measured after the decision (ql-jax's rebalancing frequencies, genjax-chi's
        # model sizes); no real JAX201 on any pool took this path: values written out for the loop
        # are configurations, each of which compiles once anyway (JAX202's `listed-values` below,
        # the same fact); the real JAX201s loop over steps, batches, epochs
        ("JAX201", "listed-values"),
        ("JAX201", "factory:listed-values"),
        ("JAX203", "listed-values"),  # was `iterable` (preview) before the path had its own name
        # 0/2/0 on two pools (heldout13 allen_v1's notebook, heldout15 multi-bound's
        # `for c in config:` with `@jax.jit def update` closing over that model's optimizer, then
        # reused by the whole training loop): a script's loop whose every trip defines its own
        # jitted function runs one configuration per trip
        ("JAX201", "module-def"),
        # 5/5/0: heldout3 4/0 (JaxMARL's interactive viewers), heldout7 0/1, heldout13 1/1
        # (unitree-go2's per-policy rollout jits), heldout14 0/3 (exojax: the function holding the
        # fresh jit runs only inside a numpyro model, which NUTS traces once: the inner jit is
        # inlined): no call of the function in a loop is shown, so whether it runs per step is a guess
        ("JAX202", "callback"),
        # 3/7/2: dev 0/1, heldout3 2/0, heldout5 0/0/1, heldout7 0/1, heldout10 1/0, heldout11 0/1,
        # heldout12 0/4/1: a loop over a collection (files, views, table cells, splits) hands the
        # function one configuration per item, each of which compiles anyway
        ("JAX202", "item-loop"),
        # 0/1/0 (heldout20 PixelArt-Alpha-Equinox-Grain's `else: forward = jax.jit(...)` fallback of
        # `if forward_fn is not None:`, which every call passes), found after the heldout20
        # measurement: the branch runs only for a caller this module does not show
        ("JAX202", "unreached"),
        # 0/3/0 (heldout12: mbirjax's 5 views, deqn-jax's table cells): numbers written out in a list
        # were settings there too (a sample count is a shape); jax-ml/jax#2515 (the realworld case
        # placement/blind_jit_grad_per_call_flag.py) is one data point the other way
        ("JAX202", "listed-values"),
        # 8/4/4: heldout3 3/0/0, heldout9 4/0/0, heldout10 1/1/0; dev 0/0/2, heldout4 0/0/1,
        # heldout5 0/1/0, heldout7 0/1/0, heldout12 0/1/1: a method's callers (an engine, a trainer,
        # an outer jit that inlines it) are elsewhere; per step or once, the module does not show
        ("JAX202", "method"),
        # 0/2/0 (heldout11, jax-tutorial's 5 repetitions per sample size)
        ("JAX203", "few-trips"),
        # 1/2/0 (heldout7 1/0, heldout12 0/2): one trip per item of a short list
        ("JAX203", "iterable"),
        # 1/1/1 (heldout4): the re-wrap runs on some trips only
        ("JAX203", "periodic"),
        # 0/1/0 (heldout18 tapnet's `if need_compile: update_jit = jax.jit(...)`, called on every
        # trip): a callable rebuilt only when a branch says its settings changed, kept otherwise
        ("JAX201", "on-demand"),
        ("JAX201", "factory:on-demand"),
        ("JAX203", "on-demand"),
        # 1/0/0 (heldout7): real once
        ("JAX203", "outer-loop"),
        # 0/0/4 (heldout4 0/0/1, heldout11 0/0/3): `range(5)`, the traversal of 5 calls is negligible
        ("JAX204", "few-trips"),
        # 4/0/4 (heldout6 3/0/0, heldout11 0/0/2, heldout12 1/0/2): a step run every k-th trip
        # (an eval every 200 steps, a resampling every 2000 epochs)
        ("JAX204", "periodic"),
        # 1/0/12 (heldout5 0/0/1, heldout6 0/0/1, heldout7 1/0/0, heldout11 0/0/2, heldout12 0/0/8): a
        # step run once per trip of a loop that also runs another loop (the batches of an epoch, the
        # steps of a rollout): an eval per epoch, an update per rollout, a small share of the trip
        ("JAX204", "outer-loop"),
        # 0/0/7 (heldout12 minimal-rl-nnx: PPO updates, each an `nnx.scan` over every minibatch;
        # flagged `range` before the path had its own name): a step whose body runs a lax/nnx loop
        # does many steps of work per call, of which the traversal is a small share
        ("JAX204", "looping-step"),
    }
)


def flag(finding: Finding, path: str) -> Finding:
    """`finding`, marked preview when its evidence path is one that did not hold on first contact."""
    return finding.in_preview((finding.code, path) in PREVIEW)


# A `range(n)` with a literal n at most this is a handful of trips (a demo's `range(5)`).
FEW_TRIPS = 10


def _literal_range(loop: cst.CSTNode) -> int | None:
    """n of `for _ in range(n)` / `range(a, n)` with literal integers (also in a comprehension), else None."""
    call = _iterable(loop)
    if not isinstance(call, cst.Call):
        return None
    if not (isinstance(call.func, cst.Name) and call.func.value == "range") or not 1 <= len(call.args) <= 2:
        return None
    values = [a.value for a in call.args]
    if not all(isinstance(v, cst.Integer) for v in values):
        return None
    ints = [int(v.value) for v in values]
    return ints[-1] - (ints[0] if len(ints) == 2 else 0)


def loop_path(idx: ScopeIndex, node: cst.CSTNode, loop: cst.CSTNode) -> str:
    """How often `node` runs in `loop` (its innermost enclosing loop), as far as the code shows:
    `few-trips` (a literal `range(n)`, n <= FEW_TRIPS), `periodic` (under an `if` in the loop:
    every k-th trip; `on-demand` when the jitted callable it binds there is also called on trips that
    do not rebuild it), `outer-loop` (the loop also runs another loop that does not hold `node`:
    once per epoch or rollout next to the per-step work), `while`, `range`, `listed-values` (a
    loop over values written out in a list or tuple: settings), or `iterable`."""
    trips = _literal_range(loop)
    if trips is not None and trips <= FEW_TRIPS:
        return "few-trips"
    if not isinstance(loop, (cst.For, cst.While)):  # a comprehension: one element per trip
        return "range" if _iterates_range(loop) else "iterable"
    for anc in idx.ancestors(node):
        if anc is loop:
            break
        if isinstance(anc, cst.If):
            return "on-demand" if _kept_for_later_trips(idx, node, anc, loop) else "periodic"
    if _written_out(idx, loop):
        return "listed-values"  # settings, whether or not each trip then runs a loop of steps
    holders = {id(a) for a in idx.ancestors(node)} | {id(node)}
    if _has_other_loop(loop.body, holders):
        return "outer-loop"
    if isinstance(loop, cst.While):
        return "while"
    if _iterates_range(loop):
        return "range"
    return "iterable"


def _kept_for_later_trips(idx: ScopeIndex, node: cst.CSTNode, branch: cst.If, loop: cst.CSTNode) -> bool:
    """`node` is the value of `name = node` under `branch`, and the loop calls `name` outside that
    branch: a callable rebuilt only when the branch says so (`if need_compile: update_jit =
    jax.jit(partial(update, num_cats=num_cats, ...))`, then `update_jit(...)` on every trip:
    google-deepmind/tapnet@<heldout18> tapnet/robotap/tapir_clustering.py:731, JAX201 wrong), a
    cache kept across trips on purpose, recompiled when its settings change."""
    assign = idx.parent(node)
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
        return False
    name = assign.targets[0].target.value
    return any(
        isinstance(call.func, cst.Name) and not any(a is branch for a in idx.ancestors(call))
        for call in calls_named(loop.body, {name})
    )


def module_def_path(idx: ScopeIndex, site) -> str | None:
    """`module-def` for a jitted def a module-level loop defines (a script's loop over
    configurations, each trip its own program), else None."""
    if site.definition is None or not isinstance(idx.enclosing_scope(site.definition), cst.Module):
        return None
    return "module-def"


def _has_other_loop(body: cst.CSTNode, holders: set[int]) -> bool:
    """A `for`/`while` statement directly in `body` that does not hold the node: a sibling of the
    statement that runs it (a rollout's step loop, an epoch's batch loop), not bookkeeping nested
    under an `if` (`for idx, finished in enumerate(...)` over finished episodes)."""
    statements = getattr(body, "body", ())
    return any(isinstance(s, (cst.For, cst.While)) and id(s) not in holders for s in statements)


def repeat_path(idx: ScopeIndex, function: cst.FunctionDef, node: cst.CSTNode, kinds: ValueKinds) -> str:
    """Why JAX202 believes `function` runs again: `counted-loop` (this module calls it in a
    `while` or a `for` over `range(...)`: steps), `listed-values` (a loop over values written out
    in a list or tuple), `comprehension` (a comprehension over an iterable), `item-loop` (only `for`
    loops over other iterables: one call per item, often one configuration per item), or
    `callback` (no looped call: handed on, stored, or called from a callback); `unreached` first,
    when `node` is in a branch that no call of `function` this module shows takes
    (`caller_branches.untaken_by_callers`: a fallback every caller makes dead)."""
    name = function.name.value
    calls = module_calls(idx, {name})
    if untaken_by_callers(idx, kinds, function, node, calls):
        return "unreached"
    loops = []
    for call in calls:
        enclosing = idx.enclosing_loops(call)
        if enclosing:
            loops.append(enclosing[0])
    if not loops:
        return "callback"
    if any(isinstance(loop, cst.While) or _iterates_range(loop) for loop in loops):
        return "counted-loop"
    if any(_written_out(idx, loop) for loop in loops):
        return "listed-values"  # numbers written out (`per_configuration` left out settings): data
    if any(not isinstance(loop, cst.For) for loop in loops):
        return "comprehension"
    return "item-loop"


def _written_out(idx: ScopeIndex, loop: cst.CSTNode) -> bool:
    """The loop iterates over values written out in a list or tuple: in place (`for n in (1, 2, 4):`)
    or through a name its scope binds once, to such a literal (`counts = (1, 2, 4)`, then
    `for n in counts:`, mimic-jax's sweep), also through `enumerate`/`zip` of such values
    (`for i, (name, model) in enumerate(zip(["Deep", "Matern32"], [DeepLoss(), Matern32Loss()]))`:
    dfm/tinygp@5302d5a docs/tutorials/transforms.ipynb, a model per trip, JAX201 wrong) and
    concatenations of them (`unrolls = UNROLLS + [SEQ_LEN]`: tillahoffmann/jax-mps@<heldout17>
    benchmarks/bench_rnn_training.py:134, one jit per scan unroll, JAX201 wrong)."""
    return _written_out_value(idx, _iterable(loop), loop)


def _written_out_value(idx: ScopeIndex, it: cst.BaseExpression | None, at: cst.CSTNode) -> bool:
    if isinstance(it, cst.Name):
        it = idx.sole_value(it.value, at) or _unpassed_default(idx, it.value, at) or it
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value in ("enumerate", "zip"):
        args = [a.value for a in it.args if a.keyword is None]
        return bool(args) and not any(a.star for a in it.args) and all(_written_out_value(idx, a, at) for a in args)
    if isinstance(it, cst.BinaryOperation) and isinstance(it.operator, cst.Add):
        return _written_out_value(idx, it.left, at) and _written_out_value(idx, it.right, at)
    return isinstance(it, (cst.List, cst.Tuple))


def _iterates_range(loop: cst.CSTNode) -> bool:
    """`for _ in range(...)` (also in a comprehension)."""
    it = _iterable(loop)
    return isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"


def _iterable(loop: cst.CSTNode) -> cst.BaseExpression | None:
    """What a `for` loop or a comprehension iterates over; None for a `while`."""
    if isinstance(loop, cst.For):
        return loop.iter
    for_in = getattr(loop, "for_in", None)
    return for_in.iter if for_in is not None else None


def _unpassed_default(idx: ScopeIndex, name: str, at: cst.CSTNode) -> cst.BaseExpression | None:
    """The default of the parameter `name` when every call of its function in the module leaves it
    out (`def benchmark_throughput(env, n_envs_list=[1, 8, 32, 64, 128])`, called as
    `benchmark_throughput(env)`: bradknox/distillation-jax@<heldout20> examples/purejax_training.py:461,
    a jit per batch size, JAX201 wrong)."""
    scope = idx.resolve(name, at)
    if not isinstance(scope, cst.FunctionDef) or name not in idx.scope_info(scope).params:
        return None
    return default_for_every_call(idx, scope, name, module_calls(idx, {scope.name.value}))
