"""JAX405 `host-read-in-traced-code`: a read of the host's clock or global random state inside
traced code runs once, at trace time, and its value is baked into the compiled program."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from codemods.trace_time_semantics import preview
from codemods.trace_time_semantics.common import kept_trace, short, traced_functions
from jaxfix.analysis.host_reads import CLOCK, HOST_READ_IDENTS, host_read
from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.trace_screen import (
    MAY_NAME_A_TRANSFORM,
    NO_ENTRIES,
    ScreenEntries,
    any_site,
)
from jaxfix.analysis.trace_sites import own_sites
from jaxfix.analysis.walk import of_type_under
from jaxfix.model import Finding
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid


class HostReadInTracedCodeRule(Rule):
    """
    ## What it does
    Finds, in the own body of a function that a transform of its module traces and keeps the
    trace of (`jax.jit`, `pmap`, a `lax` loop or branch body, or code defined in or called from
    one), a call that reads the host's state instead of computing from its arguments:
    - a clock: `time.time()`, `time.perf_counter()`, `time.monotonic()` (and their `_ns` forms),
      `timeit.default_timer()`, `datetime.datetime.now()`/`utcnow()`;
    - the host's global random state: a function of Python's `random` module (`random.random()`,
      `random.randint(...)`, `random.shuffle(...)`) or a legacy `numpy.random` function
      (`np.random.normal(...)`, `np.random.rand(...)`, `np.random.permutation(...)`).

    ## Why is this bad?
    A traced function's Python body runs once, when it is traced; the compiled program that every
    later call runs holds only its array operations, with the values Python computed at trace time
    as constants. So a clock read inside it returns the time of the trace, on every call: a key
    seeded with `jax.random.PRNGKey(int(time.time()))` is one key for all calls, and an elapsed
    time around a `lax.scan` measures the tracing, not the loop. A draw from `random` or
    `np.random` is drawn once: the "random" noise, dropout mask or sample is the same array on every
    call (and for every step of a `lax.scan`). Measured with jax 0.10.2 on CPU: a jitted
    `lambda x: x + time.time()` called twice a second apart returned the same value both times.

    A function traced only by an eager `jax.vmap` or `jax.grad` is not reported: those trace it
    again at every call, so the read runs once per call. A call that makes or seeds a generator
    (`np.random.default_rng(0)`, `np.random.seed(0)`, `random.Random(0)`) is deterministic and is
    not reported either. Nor is a read bound to a name that nothing under the trace reads: a dead
    `start_time = time.time()`, or `last_time = time.time()` that only a host callback's
    `nonlocal last_time` reads and updates at run time (no constant reaches the program).

    ## Known problems
    Only the traced function's own body is read: a helper that reads the clock and that traced code
    calls with no traced argument (`key = new_key()`) is not reported, nor a draw from a generator
    object (`rng = np.random.default_rng()` at module level, then `rng.normal()` under `jit`).
    A clock read meant to time the tracing itself is reported too: silence it with
    `# noqa: JAX405`. A function traced only because another module's code calls it (no transform
    of its own module reaches it) is not reported.

    ## Preview
    A draw from the host's random state is shown only with `--preview`: on the spent blind pools'
    first contact 2 real of 4 (two dropouts seeding from `np.random`; wrong on heldout24, a jitted
    test helper called once, debatable on heldout28, a script that cannot run under jit at all). A
    clock read is reported by default: 6 real of 9 (the heldout28 recall entries' time-seeded keys,
    an `nnx.jit` solver returning its trace-time duration); the 3 wrong, a dead read and a read
    kept for a host callback, are no longer reported. `codemods/trace_time_semantics/preview.py`.

    ## Example
    ```python
    import time

    import jax


    @jax.jit
    def sample(logits):
        key = jax.random.PRNGKey(int(1000 * time.time()))
        return jax.random.categorical(key, logits)
    ```

    ## Use instead
    ```python
    import jax


    @jax.jit
    def sample(key, logits):
        return jax.random.categorical(key, logits)


    key = jax.random.PRNGKey(0)
    for _ in range(10):
        key, subkey = jax.random.split(key)
        token = sample(subkey, logits)
    ```
    Read a clock outside the jitted function (around the call, after `block_until_ready`), or pass
    its value in as an argument.

    ## Fix safety
    No automatic fix (manual): where the key comes from, or what the time was meant to measure,
    decides the rewrite.

    ## References
    - https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions
    - https://docs.jax.dev/en/latest/random-numbers.html
    """

    name = "host-read-in-traced-code"
    codes = (
        Code(
            "JAX405",
            "host-read-in-traced-code",
            "a read of the host's clock or global random state inside traced code (runs once, at trace time)",
            "never",
        ),
    )
    prefilter = ("time", "random")  # every clock's and every random function's qualified name holds one
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # the traced code it reports needs a jax transform
    valid = (
        Valid(
            """
            import time

            import jax


            @jax.jit
            def step(x):
                return x * 2


            start = time.time()
            y = step(1.0).block_until_ready()  # the clock read outside the jitted function
            print(time.time() - start)
            """
        ),
        Valid(
            """
            import jax


            @jax.jit
            def sample(key, logits):
                return jax.random.categorical(key, logits)  # a key passed in
            """
        ),
        Valid(
            """
            import jax
            import numpy as np


            def noisy(x):
                return x + np.random.normal()


            y = jax.vmap(noisy)(np.ones(3))  # an eager vmap traces again at every call
            """
        ),
        Valid(
            """
            import jax
            import numpy as np


            @jax.jit
            def scale(x):
                rng = np.random.default_rng(0)  # a seeded generator: the same numbers by design
                return x * rng.normal()
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import time

            import jax


            @jax.jit
            def sample(logits):
                key = jax.random.PRNGKey(int(1000 * time.time()))  # one key for every call
                return jax.random.categorical(key, logits)
            """
        ),
        Invalid(
            """
            import jax
            import numpy as np


            @jax.jit
            def noisy(x):
                return x + np.random.normal(size=x.shape)  # drawn once, at trace time
            """
        ),
    )

    def could_match(self, tree: ast.Module, entries: ScreenEntries = NO_ENTRIES) -> bool:
        """A call of a clock or a host random function in a function that may run under a trace."""

        def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
            if type(n) is not ast.Call:
                return False
            func = n.func
            ident = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
            return ident in HOST_READ_IDENTS and host_read(fn.screen.names.qualify_ast(func)) is not None

        return any_site(tree, may_flag, entries)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
        for info in traced_functions(ctx):
            kept: bool | None = None  # `kept_trace`, asked once a function has a read
            for node, stmt in own_sites(info, ctx):
                if not isinstance(node, cst.Call):
                    continue
                kind = host_read(ctx.names.qualify(node.func))
                if kind is None or _head(node.func) in info.facts.locals:
                    continue
                if kept is None:
                    kept = kept_trace(jc, info)
                if not kept:
                    break  # an eager vmap or grad traces at every call: the read runs every call
                if not _value_used_under_trace(ctx, jc, info, stmt):
                    continue
                yield self._report(ctx, info, node, kind)

    def _report(self, ctx: RuleContext, info: FuncInfo, node: cst.Call, kind: str) -> Finding:
        named = info
        while named.name == "<lambda>" and named.parent is not None:
            named = named.parent
        where = f"`{named.name}`" if named.name != "<lambda>" else "this lambda"
        every = "on every call"
        if any(reason.startswith("body of ") for reason in info.reasons):
            every = "on every step of the loop and every call"
        call = short(ctx, node)
        if kind == CLOCK:
            what = (
                f"`{call}` reads the clock once, when {where} is traced: the time is a constant of the compiled "
                f"program, the same {every}"
            )
            advice = (
                "read the clock outside the jitted function (after `block_until_ready`), or pass the value in as an "
                "argument; for a random seed, pass a `jax.random` key in and split it per call"
            )
        else:
            what = (
                f"`{call}` draws from the host's random state once, when {where} is traced: the same numbers "
                f"{every}"
            )
            advice = "draw with `jax.random` from a key passed in as an argument (split it per call)"
        fix = ctx.manual(advice)
        found = ctx.finding(self, "JAX405", node, what, fix)
        return preview.host_read_finding(found, random=kind != CLOCK)


def _value_used_under_trace(ctx: RuleContext, jc: JitContexts, info: FuncInfo, stmt: cst.CSTNode | None) -> bool:
    """Whether the value of a read in `stmt` reaches the trace: always, unless `stmt` binds it
    (alone or in an expression) to one plain name that nothing traced reads: not the function's own
    body, nor a nested function under the trace. Such a value is dead (`start_time = time.time()`
    never read again: compiler-paper tblr2bbox.py, heldout16), or lives only in Python state that a
    host callback reads and updates at run time (`last_time = time.time()` then a
    `jax.debug.callback` closure's `nonlocal last_time`: FLAIROx/Kinetix experiments/ppo.py, dev)."""
    line = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else stmt
    if not (isinstance(line, cst.Assign) and len(line.targets) == 1 and isinstance(line.targets[0].target, cst.Name)):
        return True
    target = line.targets[0].target
    name = target.value
    for other in of_type_under(info.node, cst.Name):  # a read elsewhere has no `scope` below
        if other is target or other.value != name or not _is_load(ctx, other):
            continue
        scope = _enclosing_function(ctx, other, info.node)
        if scope is info.node:
            return True  # read in the function's own body, at trace time
        if scope is not None:
            nested = jc.functions.get(scope)
            if nested is None or nested.in_trace:
                return True
    return False


def _is_load(ctx: RuleContext, name: cst.Name) -> bool:
    """A read of the name (not a binding, a `nonlocal`/`global` item, an attribute or a keyword)."""
    parent = ctx.parent(name)
    if isinstance(parent, (cst.AssignTarget, cst.NameItem, cst.Param, cst.FunctionDef, cst.ClassDef)):
        return False
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return False
    return not (isinstance(parent, (cst.For, cst.CompFor)) and parent.target is name)


def _enclosing_function(ctx: RuleContext, node: cst.CSTNode, outer: cst.CSTNode) -> cst.CSTNode | None:
    """The innermost def or lambda around `node`, when `outer` holds it (else None)."""
    innermost = None
    up = ctx.parent(node)
    while up is not None:
        if isinstance(up, (cst.FunctionDef, cst.Lambda)) and innermost is None:
            innermost = up
        if up is outer:
            return innermost
        up = ctx.parent(up)
    return None


def _head(func: cst.BaseExpression) -> str | None:
    """The name a called expression starts from (`np` of `np.random.normal`)."""
    while isinstance(func, cst.Attribute):
        func = func.value
    return func.value if isinstance(func, cst.Name) else None


# `HostReadInTracedCodeCommand`: the libcst codemod command, made on first access
__getattr__ = commands_for(HostReadInTracedCodeRule)
