"""JAX501 `unblocked-timing`: a timed region that reads the clock before its JAX work is done."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codemods._command import commands_for
from codemods.compile_cost.timing_checker import TimingChecker
from codemods.compile_cost.timing_screen import (
    CLOCK_IDENTS,
    imported_names,
    imports_time_module,
    may_use_imported_timer,
    region_screen,
)
from jaxfix.analysis import astscan
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.project_lookups import project_async_returner, project_jitted
from jaxfix.analysis.pytrees import dotted
from jaxfix.analysis.sync_dispatch import dispatch_is_synchronous
from jaxfix.analysis.timers import timer_names
from jaxfix.model import Finding
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid, token_found


class UnblockedTimingRule(Rule):
    """
    ## What it does
    Finds a timed region, `t0 = time.perf_counter()` (also `time.time()`, `time.monotonic()`,
    their `_ns` forms, `timeit.default_timer()` and `datetime.datetime.now()`) up to the next
    statement of the same block that reads the clock again, which runs JAX work and reads the
    clock before that work is done. In a loop body, a start taken after the body's last clock
    read closes at the first clock read of the next trip when the trip uses it (`delta = now()
    - last` ... `last = now()`, or `new = now()` ... `last = new`: a step time). A `with Timer(...):` body is a timed region too when the
    class's `__enter__` and `__exit__` both read a clock, or a `@contextmanager` reads it before
    and after its `yield` (`with timeblock("epoch"):`), defined in this file or, when the whole
    project is checked, in another module of it.
    JAX work is a call of a function jitted in this module (`@jax.jit`, `f_jit = jax.jit(f)`,
    `jax.jit(f)(x)`; when the whole project is checked, one a module of it binds at its top level
    and this one imports, also through a package's re-export, or a function or a method of a
    class it defines that returns a jitted call's result or an eager lax loop's without waiting:
    `run(x)`, `solver.run(x)`, `s.solve(x)` after `s = Solver(...)`), also `jax.grad`/`jax.vmap` applied in place or bound to a name: `dloss =
    jax.grad(loss)`; an ahead-of-time compiled `jax.jit(f).lower(x).compile()`) or of `jax.numpy`, `jax.lax`,
    `jax.random`, `jax.nn` and `jax.scipy` functions. Also `timeit.timeit`/`timeit.repeat`/
    `timeit.Timer` given a `lambda` that calls JAX work (or a def that is one `return` of it: `def
    time_fn(): return train(keys)`), or a function jitted in this module itself
    (`timeit(step, number=n)`: the fix times `lambda: jax.block_until_ready(step())`). A call of a
    function under `eqx.filter_jit` (and `lineax.linear_solve`, `diffrax.diffeqsolve`, optimistix's
    `minimise` and kin, each `@eqx.filter_jit`) waits for its work before it returns: equinox >=
    0.11.8 blocks on a marker output (measured: the output is ready at the return), so it is a wait,
    not work left in flight (`transforms.BLOCKING_JITS`). So does a program that calls back to the
    host (`jax.debug.print`, `jax.debug.callback`, `host_callback.id_tap`, a jax_tqdm progress bar,
    in the jitted function or the helper timed, or through a function of the project that calls
    one): measured on CPU, it is ready when its call returns (`transforms.SYNCHRONOUS_CALLBACKS`).

    The region counts as blocked when, at or after its last JAX call, it calls
    `.block_until_ready()` or `jax.block_until_ready(...)`, or passes a JAX result to something
    that needs its value: any NumPy function but the metadata ones (`np.asarray`, `np.argmax`,
    `np.testing.*`; not `np.shape`), `float`, `int`, `.item()`, `.tolist()`, `print`,
    `jax.device_get`.

    ## Why is this bad?
    JAX dispatches work asynchronously: a jitted call returns as soon as the computation is
    queued, before it has run. A clock read right after it measures the dispatch only. Measured
    here (CPU, 1000x1000 matmul): 0.13 ms reported without blocking, 30.6 ms with
    `jax.block_until_ready`.

    ## Known problems
    A module whose top-level code turns on `jax_debug_nans` or `jax_debug_infs`
    (`jax.config.update("jax_debug_nans", True)`) is not checked: each call then checks its outputs,
    so it returns only when they are ready (`jaxfix.analysis.sync_dispatch`).
    Only regions whose start and end clock reads are in the same block are seen; a closing clock
    read inside a loop (`for ...: log(time.time() - t0)`, an elapsed-since-start log) is not
    reported. A region whose only JAX work is a host-to-device transfer (`jax.device_put`) is
    not reported: serving and input pipelines issue transfers asynchronously on purpose, to
    overlap with the running step, and time the issue cost. A lap timer (the clock read once per
    trip, each lap from the previous read) whose trip certainly waits on its step's result
    (`loss.item()`) is not reported: each lap spans one device step. A def or class statement in a
    region only defines its body: nothing in it runs there. Nor is a region in the body of `if False:` (code switched off), or in a function the
    file proves traced (its clock reads run once, at trace time, around tracing). Precision first: a region whose JAX result is handed, after its last JAX call, to
    code the file does not show (another module's helper, a logger, a method of another object)
    is not reported, as that code may read the value back (`jaxfix.analysis.host_sync`); a
    function of this file is looked into, also one called without the result that reads it
    through its closure (`evaluate()` converting predictions made from the new `theta`). Blocking on some other JAX value of the region than
    the last one is taken as blocking (one dispatch usually computes them together), as are a
    Python bool test (`if loss < best:`), an f-string part and a `tree_map` that blocks leaf by
    leaf (`jax.tree_util.tree_map(lambda x: x.block_until_ready(), out)`; a helper of this file that
    looks the method up, `getattr(leaf, "block_until_ready", None)()`, too), also when they come
    before the clock read in the closing statement. A container a result is stored into
    (`history["iou"].append(iou)`) holds it: formatting or converting the container waits. A
    function of this file that returns its JAX work converted to the host (`return
    float(jnp.mean(accs))`) waits for it, and for the state it reads: its call is taken as a
    wait whatever its arguments (an `nnx` model a step updated in place is not seen as pending). A clock read whose name is bound
    again before anything reads it (`end = time()` ... `start = time()` ... `end = time()`;
    `end - start`) times nothing, and one bound to a name that is never read with the start or
    an earlier clock value (`time_d_start = timer()` inside a step whose `iteration_start` is only
    read as `timer() - iteration_start` later) starts the next window rather than ending this one. In a notebook, a cell's last bare expression is displayed, and
    its repr waits for the result. Splitting a PRNG key is not timed work, nor, once the region
    waited on a value by name (`loss.block_until_ready()`), an eager call (not of a jitted
    function, nor of one of this file that reaches one or a lax loop) whose arguments are only
    Python counters (`for step in range(...)`, `step = 0` ... `step += 1`), literals and values
    already waited for: `jnp.float32(loss[0])`, a learning-rate schedule of the step number.
    JAX work also includes calls of a function of this file that returns JAX work (a plain
    wrapper; called on `self`, the one def of that name in the file), of a callable made by a function of this file that returns a jitted callable,
    and of a name or attribute bound to one of these (`self.train_step = train_step`). Inside a
    `with`/`if` block, only what runs after the block's last JAX call can wait for it (a call
    before it that reads the previous batch does not); where that call is inside a loop of the
    block, the whole block counts, as the next trip runs the earlier code again. Timers made
    outside the checked project (a library's timer, `pytest-benchmark`'s fixture) and timers
    reached through an object (`self.tracker.record_time(...)`) are not seen.

    ## Preview
    Shown only with `--preview` (figures in `compile_cost.preview`): a region whose last JAX work
    only makes arrays (`jnp.asarray` of host data: the clock times the host code before it), and a
    timer whose own words say it measures compilation (`print(f"Time to jit: {time.time() - st}")`,
    `compile_time = timeit(...)`, `TimeIt(tag="COMPILATION")`, a "warmup" block): the first call compiles
    synchronously, so the figure includes the compile by construction and misses one run, which
    the compile usually dominates (a log inside the region counts: `logging.info("Testing and
    compiling eval_step...")`). Words that name the run too ("training and compilation took")
    stay default: the run they claim is what is missed. Also preview: a set-up or loading timer
    ("[setup] built mesh in", "loading data took") whose last work is eager array work or a helper
    of the file that calls no jitted function: what it leaves in flight is the end of the set-up.
    And a region whose step work was already waited for, leaving an eager tail in flight (a
    `state.block_until_ready()` or a host-side SciPy solve inside the region, then a `jnp.mean` of
    the metrics), or one that calls a method of the object its arrays came from after its last JAX
    work (`mcmc.print_summary()`, which may read them back).

    ## Example
    ```python
    t0 = time.perf_counter()
    out = f_jit(x)
    print(time.perf_counter() - t0)
    ```

    ## Use instead
    ```python
    t0 = time.perf_counter()
    out = f_jit(x)
    jax.block_until_ready(out)
    print(time.perf_counter() - t0)
    ```

    ## Fix safety
    Safe: `jax.block_until_ready` returns its argument unchanged and only waits. The fix blocks
    on the names the region's last JAX call assigns, just before the closing clock read; where
    that assignment is inside a loop or branch and the name may not exist before it, it wraps
    the call in place (`out = jax.block_until_ready(f(x))`), which waits on every trip, unless
    the call is one compiled program (a jitted function) and some of the names it assigns exist
    before the loop (`params, opt_state, loss = step(...)` with `loss` first bound there): the
    outputs of one program are ready together, so the fix waits once,
    before the clock, on those (`jax.block_until_ready((params, opt_state))`); a call
    whose result is discarded is wrapped in place. In a notebook whose closing clock read starts
    a cell, the call is wrapped in place too: a wait inserted there would end the previous cell
    and change what it displays. A `timeit` lambda's body is wrapped. In a
    timer's `with` body the wait goes after the body's last statement. Unsafe when the wait lands
    on a host-to-device transfer (`jax.device_put` last in the region, as a learner that queues
    new params for actor threads does): transfers are issued asynchronously on purpose, and
    waiting there changes the pipeline's overlap.

    ## References
    - https://docs.jax.dev/en/latest/async_dispatch.html
    - https://docs.jax.dev/en/latest/_autosummary/jax.block_until_ready.html
    """

    name = "unblocked-timing"
    codes = (Code("JAX501", "unblocked-timing", "timed region reads the clock before JAX work is done", "always"),)
    prefilter = (
        "perf_counter",
        "time.time",
        "monotonic",
        "default_timer",
        "timeit",
        "import time",
        "time_ns",
        "datetime",
    )
    uses_project = True  # the timers and jitted functions of other modules (in their summaries)
    valid = (
        Valid(
            """
            import time

            import jax
            import jax.numpy as jnp

            f_jit = jax.jit(lambda x: x @ x)
            x = jnp.ones((1000, 1000))

            t0 = time.perf_counter()
            out = f_jit(x).block_until_ready()
            print(time.perf_counter() - t0)
            """
        ),
        Valid(  # near miss: the loss is read back as a Python float before the clock
            """
            import time

            import jax
            import jax.numpy as jnp

            loss_fn = jax.jit(lambda w: jnp.sum(w**2))
            w = jnp.ones(1000)

            start = time.time()
            loss = float(loss_fn(w))
            elapsed = time.time() - start
            """
        ),
        Valid(  # an evaluation loop: NumPy reads every batch's logits back before the clock
            """
            import time

            import jax
            import jax.numpy as jnp
            import numpy as np

            infer = jax.jit(lambda x: x @ jnp.ones((4, 3)))
            batches = [np.ones((2, 4)) for _ in range(3)]

            t0 = time.time()
            hits = []
            for batch in batches:
                logits = infer(batch)
                hits.append(np.argmax(logits, axis=-1))
            per_second = len(batches) / (time.time() - t0)
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import time

            import jax
            import jax.numpy as jnp

            f_jit = jax.jit(lambda x: x @ x)
            x = jnp.ones((1000, 1000))

            t0 = time.perf_counter()
            out = f_jit(x)
            print(time.perf_counter() - t0)
            """,
            fixed="""
            import time

            import jax
            import jax.numpy as jnp

            f_jit = jax.jit(lambda x: x @ x)
            x = jnp.ones((1000, 1000))

            t0 = time.perf_counter()
            out = f_jit(x)
            jax.block_until_ready(out)
            print(time.perf_counter() - t0)
            """,
        ),
        Invalid(
            """
            import timeit

            import jax.numpy as jnp

            x = jnp.ones(1000)
            print(timeit.timeit(lambda: jnp.sin(x), number=100))
            """,
            fixed="""
            import timeit

            import jax
            import jax.numpy as jnp

            x = jnp.ones(1000)
            print(timeit.timeit(lambda: jax.block_until_ready(jnp.sin(x)), number=100))
            """,
        ),
    )

    @classmethod
    def passes_prefilter(cls, source: str) -> bool:
        """`could_match`'s tests in the text: a jax import, and a clock's name, an import of the
        `time` module, or a timer another module of the project may define (`with timeblock():`,
        `may_use_imported_timer`); a clock read is what a timer or a timed region of this module
        starts with, and a `timeit` call names its module."""
        return any(token_found(token, source) for token in ("jax", "flax", "equinox")) and (
            super().passes_prefilter(source)
            or imports_time_module(source)
            or may_use_imported_timer(source)
        )

    def could_match(self, tree: ast.Module) -> bool:
        """A jax import and either a `timeit` call of a lambda, or a timed region of some block
        (`region_screen`) with a call in it that may be JAX work."""
        return self._could_match(tree, None, None)

    def could_match_in(self, ctx: RuleContext) -> bool:
        """`could_match` again, where a name imported from another module is JAX work only if the
        project says that module binds it to a jitted function (`project_jitted`, as the checker
        asks; nothing without a project). flax's `checkpoints.py` times `logging.info` of
        `from absl import logging`, which the text alone cannot tell from a jitted step of the
        project: admitted to the libcst check for nothing (issue #33 item 7)."""
        jitted, returners = project_jitted(ctx), project_async_returner(ctx)
        if jitted is None or returners is None:
            return self._could_match(ctx.tree, _nothing_elsewhere, _nothing_elsewhere)
        return self._could_match(ctx.tree, lambda written: jitted(written) or returners(written), returners)

    def _could_match(self, tree: ast.Module, jitted_elsewhere, method_elsewhere=None) -> bool:
        idents = set(CLOCK_IDENTS)
        jax = uses_timeit = False
        starts: list[ast.Call] = []
        for node in astscan.statements(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                jax = jax or astscan.imports_jax(node)
                if isinstance(node, ast.ImportFrom) and node.module in ("time", "timeit"):
                    idents.update(a.asname for a in node.names if a.asname)  # `perf_counter as clock`
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                uses_timeit = uses_timeit or "timeit" in modules
            elif (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)
                and not node.value.args
            ):
                starts.append(node.value)
        if not jax:
            return False
        if timer_names(tree, ImportMap.from_ast(tree).qualify_ast) or _with_imported_call(tree):
            return region_screen(tree, jitted_elsewhere, method_elsewhere)  # a timer of this module, or maybe one of the project
        if uses_timeit:  # `timeit.timeit(lambda: ...)`, `timeit(step, number=n)` of a jitted `step`
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.args[0] if node.args else None, ast.Lambda):
                    return True
                if (
                    isinstance(node, ast.Call)
                    and node.args
                    and isinstance(node.args[0], (ast.Name, ast.Attribute))
                    and (dotted(node.func) or "").rpartition(".")[2] in ("timeit", "repeat", "Timer")
                ):
                    return True
                if isinstance(node, ast.Call) and any(isinstance(k.value, ast.Lambda) for k in node.keywords):
                    return True
        for call in starts:  # `t0 = time.perf_counter()`: a timed region can start here
            func = call.func
            if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) in idents:
                return region_screen(tree, jitted_elsewhere, method_elsewhere)
        return False

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if dispatch_is_synchronous(ctx.tree, ctx.names.qualify_ast):
            return iter(())  # `jax_debug_nans` on: every call waits for its result
        return iter(TimingChecker(self, ctx).run())


def _nothing_elsewhere(*written: str) -> bool:
    """No project: no name of another module is known to be jitted (`project_jitted` is None), nor
    a method of its classes to return work in flight."""
    return False


def _with_imported_call(tree: ast.Module) -> bool:
    """A `with f(...):` whose `f` is imported from the project (`timing_screen.imported_names`)."""
    imported = None
    for node in astscan.nodes(tree):
        if type(node) in (ast.With, ast.AsyncWith):
            imported = imported_names(tree) if imported is None else imported
            if any(type(i.context_expr) is ast.Call and dotted(i.context_expr.func) in imported for i in node.items):
                return True
    return False

# `UnblockedTimingCommand`: the rule as a libcst codemod, made on first access
__getattr__ = commands_for(UnblockedTimingRule)
