"""JAX504 `unblocked-timing-magic`: IPython's `%timeit`/`%time` timing JAX work that nothing
waits for (asynchronous dispatch: it times the dispatch only)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

from codemods._command import commands_for
from codemods.compile_cost.magics import (
    Magics,
    Timed,
    blocks,
    callee,
    calls,
    chars,
    computes,
    flowed_names,
    inline_jit,
    is_jax_call,
    plot_objects,
    produced_names,
    waits_for_inputs_only,
)
from codemods.compile_cost.preview import flag, magic_path
from codemods.compile_cost.timed_first_call import timed_first_call
from codemods.compile_cost.tiny_work import TinyWork
from jaxfix.analysis.project_lookups import project_jit_factory, project_jitted
from jaxfix.analysis.sync_dispatch import dispatch_is_synchronous
from jaxfix.model import Edit, Finding, Fix, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid


class UnblockedTimingMagicRule(Rule):
    """
    ## What it does
    Finds IPython's timing magics in notebooks, `%timeit f(x)`, `%time f(x)` and cells that
    start with `%%timeit` or `%%time`, whose timed code ends in JAX work that nothing waits for:
    a call of a function jitted in the notebook (`@jax.jit`, `f = jax.jit(...)`,
    `jax.jit(f)(x)`), of `jax.numpy`, `jax.lax`, `jax.random`, `jax.nn` functions, or of a
    function of the notebook that returns such work unconverted (`def complex_fun(x): return
    jnp.sum(jnp.sin(x) * x)`, or names it bound to such work: `m = jnp.where(...)` then
    `return m @ m`, as the binding in effect at the timed code), with no
    `.block_until_ready()`, `jax.block_until_ready(...)`, `float(...)`, `np.asarray(...)`,
    `print(...)`, other read of the value, or call of a helper of the notebook that calls
    `block_until_ready` itself, after it (a wait inside the arguments of the JAX call waits for
    its input only: `%timeit f(X.block_until_ready())` is reported). A read counts also for data
    the cell computes from the
    JAX results (`samples = inference_loop(key, kernel, state, n)` then `plt.hist(samples[:, 0])`),
    or collects them (`samples.append(state)` in the loop, then `np.array(samples)`), for a
    method of a matplotlib object the cell made drawing them (`fig, axs = plt.subplots(2, 3)`,
    then `ax.fill_between(x, lb, ub)` for each `ax` of `axs.ravel()`), for an
    f-string that formats a result (`pbar.set_description(f"{loss:0.4e}")`), and for a helper of the notebook handed a JAX result that reads on the host what it computes
    from that parameter (`callback(step, params)` that formats the accuracy of `params`; a
    `return out[:n_iter]` whose slice bound is made a Python int), also
    when the read is conditional (`if step % 500 == 0:`). A name counts as jitted by its last
    top-level binding before the timed code (`%timeit f()` of a NumPy `def f` that a later cell
    rebinds to a `@jax.jit def f` times NumPy). A function of the notebook whose program calls back
    to the host (`jax.debug.print`, `jax.debug.callback`, a jax_tqdm progress bar) is ready when its
    call returns (measured on CPU; `transforms.SYNCHRONOUS_CALLBACKS`): timing it is not reported.

    jaxfix reads a notebook with its timing magics commented out, as jupytext writes them in a
    `.py` notebook; the rule reads that form in `.py` files too (`# %timeit f(x)`).

    ## Why is this bad?
    JAX dispatches work asynchronously: a jitted call returns once the computation is queued.
    `%timeit f(x)` then measures the dispatch, not the computation; JAX's own documentation
    times `f(x).block_until_ready()`.

    ## Known problems
    A notebook whose top-level code turns on `jax_debug_nans` or `jax_debug_infs` is not checked:
    each call then returns only when its outputs are ready (`jaxfix.analysis.sync_dispatch`).
    Timed code that runs host code (a data loader, a plot) and whose only JAX work makes arrays
    (`jnp.array(host_data)`, `jnp.linspace`, `jax.device_put`) is not reported: it times the
    host code. `%timeit jnp.ones((n, n))` alone is still a timing of JAX work, shown with
    `--preview` (see Preview). `%time jax.jit(f)(x)` is not reported: the jit is written into the
    timed line, whose one run measures its trace and compile, finished when the call returns.
    The statement of a line magic must be Python on that line. Functions jitted in another
    module are not looked into; a helper that blocks inside counts as waiting only when it is
    defined in the notebook (a top-level function) and blocks or reads there itself.

    ## Preview
    A `%%time`/`%%timeit` cell that loops over steps is reported only with `--preview` (2 real,
    2 wrong on the blind pools: with dependent steps only the last one in flight escapes the clock);
    line magics and cells without a loop are reported by default (21 real, 1 wrong, 2 debatable).
    So is a `%time` of a jitted function's first call (JAX505's item, 0 real, 2 wrong, 6 debatable
    on first contact), also when a later cell reads its result, which JAX505 leaves alone: its one
    run is mostly the compile, which is done when the call returns. So
    is timed code that runs only straight-line JAX code (no loop, no `lax` loop, no other library's
    function) on data of at most 1,024 elements that the notebook writes out from literals
    (`%timeit jax.jacrev(f)(jnp.array([3.0, 4.0, 5.0]))`, a pmap of `x + 3` over a 2x4 array:
    0 real, 0 wrong, 6 debatable on the spent pools): its device work is about what the dispatch
    costs, so the unwaited figure is close to the blocked one. So is timed code whose only JAX
    work makes arrays (`%%time aux = jnp.array(x_train)`, a host-to-device copy; JAX501's `made`
    path). A `def` in the timed code runs its decorators and defaults, not its body: a cell that
    only builds jitted wrappers and defs times no JAX work.

    ## Example
    ```python
    f = jax.jit(lambda x: x @ x)
    x = jnp.ones((1000, 1000))
    %timeit f(x)
    ```

    ## Use instead
    ```python
    f = jax.jit(lambda x: x @ x)
    x = jnp.ones((1000, 1000))
    %timeit jax.block_until_ready(f(x))
    ```

    ## Fix safety
    Safe: it wraps the timed statement's value in `jax.block_until_ready(...)`, which returns
    its argument unchanged (any pytree, where `.block_until_ready()` needs an array) and only
    waits; in a cell magic, the last statement with JAX work is wrapped. JAX work that is not
    the value of an expression or assignment (a loop's body) is reported without a fix, and so
    is a cell that calls, after that statement, a function of the notebook or a method of an
    object made before the cell (`model.score_samples(grid)`): it may queue work the wait would
    miss. A fix
    that needs `import jax` adds it to the notebook's first import cell.

    ## References
    - https://docs.jax.dev/en/latest/async_dispatch.html
    - https://docs.jax.dev/en/latest/faq.html#benchmarking-jax-code
    - https://ipython.readthedocs.io/en/stable/interactive/magics.html#magic-timeit
    """

    name = "unblocked-timing-magic"
    codes = (
        Code("JAX504", "unblocked-timing-magic", "`%timeit`/`%time` of JAX work that is not waited for", "sometimes"),
    )
    prefilter = ("%time",)
    valid = (
        Valid(
            """
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            # %timeit f(x).block_until_ready()
            """
        ),
        Valid(  # warmed up, and waited for
            """
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            f(x).block_until_ready()
            # %time jax.block_until_ready(f(x))
            """
        ),
        Valid(  # near miss: plain Python timed
            """
            # %timeit sum(range(100))
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            # %timeit -n 10 f(x)
            """,
            fixed="""
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            # %timeit -n 10 jax.block_until_ready(f(x))
            """,
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp

            @jax.jit
            def step(x):
                return jnp.tanh(x) * 2

            x = jnp.ones(1000)
            step(x).block_until_ready()
            # %%timeit
            y = step(x)
            """,
            fixed="""
            import jax
            import jax.numpy as jnp

            @jax.jit
            def step(x):
                return jnp.tanh(x) * 2

            x = jnp.ones(1000)
            step(x).block_until_ready()
            # %%timeit
            y = jax.block_until_ready(step(x))
            """,
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        return True  # the magics are comments: the text test (`prefilter`) is the screen

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        if dispatch_is_synchronous(ctx.tree, ctx.names.qualify_ast):
            return  # `jax_debug_nans` on: every call waits for its result
        notebook = Magics.of(ctx.source, ctx.tree, project_jitted(ctx), project_jit_factory(ctx))
        tiny_work: TinyWork | None = None  # the bindings indexed once, when a finding first asks
        for item in notebook.timed:
            m = notebook.at(item)
            first_call = timed_first_call(item, m, ctx.tree, data_runs=True) is not None
            if item.magic == "time" and any(inline_jit(c, m.names) for c in m.jax_calls(item)):
                continue  # `%time jax.jit(f)(x)`: times the jit's compile, done when the call returns
            m = replace(m, jitted=m.jitted | m.wrapping)  # a notebook function returning JAX work is JAX work
            work = [
                i for i, s in enumerate(item.statements) if any(is_jax_call(c, m.names, m.jitted) for c in calls(s))
            ]
            if not work:
                continue  # no JAX call timed (`%time x = list(range(n))` beside JAX cells)
            made = not any(computes(item.statements[i], m.names, m.jitted) for i in work)
            if made and any(not is_jax_call(c, m.names, m.jitted) for s in item.statements for c in calls(s)):
                continue  # host code timed (a loader, a plot) around arrays made (`CREATION`)
            last = work[-1]
            produced = flowed_names(item.statements, work[0], produced_names(item.statements, work))
            plotting = plot_objects(item.statements, m.names)
            inputs = waits_for_inputs_only(item.statements, m.names, m.jitted)
            if not any(
                blocks(c, m.names, m.jitted, m.waiting, produced, m.reading, plotting)
                for s in item.statements[last:]
                for c in calls(s)
                if id(c) not in inputs
            ):
                tiny_work = tiny_work or TinyWork(ctx.tree, m.names)
                tiny = tiny_work.timed(item.statements, item.line)
                later = _may_run_jax_work(item.statements, last, m)
                yield self._finding(ctx, m, item, item.statements[last], first_call, tiny, made, later)

    def _finding(
        self,
        ctx: RuleContext,
        m: Magics,
        item: Timed,
        stmt: ast.stmt,
        first_call: bool,
        tiny: bool,
        made: bool,
        later: bool,
    ) -> Finding:
        line = item.line if item.stmt_source is not None else stmt.lineno
        block, imports = ctx.reference_at("jax.block_until_ready", line)
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        fix = None
        if value is not None and not later:
            if item.stmt_source is not None:  # the statement is text in a comment: its own offsets
                text_lines = item.stmt_source.splitlines(keepends=True)
                a = item.offset + chars(text_lines[0], value.col_offset)
                b = (
                    item.offset
                    + sum(map(len, text_lines[: value.end_lineno - 1]))
                    + chars(text_lines[value.end_lineno - 1], value.end_col_offset)
                )
            else:
                a = m.starts[value.lineno - 1] + chars(m.lines[value.lineno - 1], value.col_offset)
                b = m.starts[value.end_lineno - 1] + chars(m.lines[value.end_lineno - 1], value.end_col_offset)
            fix = Fix(
                title=f"wrap it in `{block}(...)`",
                safety=Safety.SAFE,
                edits=(Edit(a, a, f"{block}("), Edit(b, b, ")")),
                imports=tuple(imports),
            )
        what = "`%%" + item.magic + "` cell" if item.stmt_source is None else "`%" + item.magic + "`"
        message = (
            f"{what} times JAX work that nothing waits for (JAX dispatches asynchronously, so this times "
            "the dispatch only); " + (fix.title if fix else "block on its result before the cell ends")
        )
        # the first call of a jitted function (JAX505's `timed_first_call`): its one run is mostly the compile;
        # straight-line work on a handful of numbers (`tiny_work`): the dispatch is about the work
        if first_call:
            path = "time-first-call"
        elif made:
            path = "made"  # only arrays made (`jnp.array(host_data)`): JAX501's preview path of the same name
        elif tiny:
            path = "tiny-work"
        else:
            looping = any(callee(c, m.names) in m.looping for s in item.statements for c in calls(s))
            path = magic_path(item.magic, item.stmt_source is not None, item.statements, looping)
        return flag(m.finding(item, code="JAX504", name=self.name, path=ctx.path, message=message, fix=fix), path)


def _may_run_jax_work(statements: list[ast.stmt], last: int, m: Magics) -> bool:
    """Whether the timed `statements` after `last` (its last known JAX work) call something that may
    queue JAX work the rule cannot see: a function of the notebook, or a method of an object made
    before the timed code (`model.score_samples(grid)`; not `yhat.ravel()` of a value the timed code
    computed, whose wait the fix's dependencies already cover or which is an array method). The wait
    the fix would add then lands before that work, not after it (heldout26, after its measurement:
    rbig_jax cells whose wait wrapped the grid made before the `score_samples` call that does the
    work): the finding stays, without a fix."""
    bound_here = {
        n.id for s in statements for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    for call in (c for s in statements[last + 1 :] for c in calls(s)):
        func = call.func
        if isinstance(func, ast.Name) and func.id in m.bindings:
            return True
        head = func
        while isinstance(head, (ast.Attribute, ast.Subscript, ast.Call)):
            head = head.func if isinstance(head, ast.Call) else head.value
        if isinstance(func, ast.Attribute) and not (
            isinstance(head, ast.Name) and (head.id in m.names.bindings or head.id in bound_here)
        ):
            return True
    return False


# `UnblockedTimingMagicCommand`: the rule as a libcst codemod, made on first access
__getattr__ = commands_for(UnblockedTimingMagicRule)
