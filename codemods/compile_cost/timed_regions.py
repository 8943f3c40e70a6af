"""Timed regions JAX501 sees beyond `t0 = clock()` ... `clock() - t0` in one block.

- A loop-carried region: a loop body whose last start (`last = now()`) closes at the top of the
  next trip (`dt = now() - last` before the step): MaxText's step time.
- A timer (`jaxfix.analysis.timers`): `with TimeIt("run"): out = learn(x)` where the class's
  `__enter__` and `__exit__` read the clock (Mava's examples), or a `@contextmanager` that reads
  it around its `yield`, of this module or, through the project index, of another; the region
  is the `with` body.

- `timeit.timeit(lambda: ...)` (`timeit_findings`).
- A region counts only when its start's clock value is read after it closes, before the name
  is bound again (`read_before_rebound`), and, when the closing read is bound to a name, that
  name is read with the start (`read_with_start`).

The stdlib-AST screen (`timing_screen.region_screen`) admits the same regions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from codemods.compile_cost.nodes import own_nodes
from codemods.compile_cost.preview import compile_label, flag
from jaxfix.analysis.body_facts import assigned_names
from jaxfix.analysis.names import dotted_name
from jaxfix.analysis.scopes import ScopeIndex, names_read
from jaxfix.analysis.stubs import is_docstring
from jaxfix.model import Finding, ImportRequest, Safety

Statements = list[cst.BaseStatement]


def timer_with(node: cst.With, is_timer: Callable[[cst.BaseExpression], bool]) -> cst.Call | None:
    """The `Timer(...)` item of `with Timer(...):` when `Timer` is a timer (`jaxfix.analysis.timers`)."""
    for item in node.items:
        call = item.item
        if isinstance(call, cst.Call) and is_timer(call.func):
            return call
    return None


def carried_region(
    stmts: Statements,
    i: int,
    start: str,
    clock_in: Callable[[cst.BaseStatement], cst.Call | None],
) -> Statements | None:
    """A loop body's region from the start at `i` round to the first clock read of the next trip,
    laid out as one block (`stmts[i:] + stmts[:first + 1]`), when the trip uses `start` between
    that read and `i` (`delta = now() - last`, or `t = now()` then `log(t - last)`)."""
    first = next((j for j in range(i) if clock_in(stmts[j]) is not None), None)
    if first is None or not any(start in names_read(s) for s in stmts[first:i]):
        return None
    return stmts[i:] + stmts[: first + 1]


def alias_start(stmts: Statements, i: int, start_clock: Callable[[cst.BaseStatement], str | None]) -> str | None:
    """`last = new_time` where `new_time = now()` earlier in the block: the next trip's start
    (maxdiffusion's trainers: `new_time - last_step_completion`, then `last_step_completion = new_time`)."""
    stmt = stmts[i]
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if not (
        isinstance(small, cst.Assign)
        and len(small.targets) == 1
        and isinstance(small.targets[0].target, cst.Name)
        and isinstance(small.value, cst.Name)
    ):
        return None
    if any(start_clock(s) == small.value.value for s in stmts[:i]):
        return small.targets[0].target.value
    return None


def statement_loads(stmt: cst.BaseStatement) -> set[str]:
    """The names `stmt` reads (an assignment's value, not its targets; any mention in a compound
    statement)."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return names_read(stmt)
    return set().union(
        *(
            names_read(x.value) if isinstance(x, (cst.Assign, cst.AnnAssign)) and x.value is not None else names_read(x)
            for x in stmt.body
        )
    )


def read_before_rebound(stmts: list[cst.BaseStatement], start: str) -> bool:
    """The start's clock value is read at or after the closing clock read, before `start` is
    bound again. A clock read whose name is rebound first times nothing: in `end = time()` ...
    `start = time()` ... `end = time()`; `print(end - start)` the first `end` only closed an
    earlier region (ericmjl/dl-workshop@6ef9b7fe:notebooks/03-stax/01-linear.ipynb, cells 41-50)."""
    return next(readers_before_rebound(stmts, start), None) is not None


def readers_before_rebound(stmts: list[cst.BaseStatement], name: str) -> Iterator[int]:
    """Indices of the statements of `stmts` that read `name`, in order, until one binds it again
    (a statement that reads and rebinds it, `t = now() - t`, still reads it)."""
    for k, stmt in enumerate(stmts):
        if name in statement_loads(stmt):
            yield k
        if name in assigned_names(cst.IndentedBlock(body=[stmt])):
            return


def read_with_start(stmts: list[cst.BaseStatement], starts: set[str], end: str) -> bool:
    """A closing read bound to a name (`end = now()`, the first of `stmts`) ends a window over the
    region only when a later statement reads it with a clock value taken at or before the region's
    start (`starts`: the start, earlier clock reads of the block and their aliases; `end - start`),
    before `end` is bound again. One only ever read with later clocks (`now() - end`, `later - end`)
    starts the next window instead: the work before it is timed by no window ending there
    (nyx-ai/stylegan2-flax-tpu@b4b448f training.py:358, `time_d_start = timer()` inside the step
    whose `iteration_start_time` is read at line 419). stanford-crfm/levanter@9263f81
    src/levanter/inference/engine.py:1126: `submit_done` ends `submit_start = iter_start`'s window,
    an earlier start than the region's own (`fake_submit_done`)."""
    for stmt in stmts[1:]:
        loads = statement_loads(stmt)
        if end in loads and starts & loads:
            return True
        if end in assigned_names(cst.IndentedBlock(body=[stmt])):
            return False
    return False


def name_binding(stmt: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    """(name, value) when `stmt` is a line of one plain `name = value`, else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        return small.targets[0].target.value, small.value
    return None


def clock_names(
    stmts: list[cst.BaseStatement], start_clock: Callable[[cst.BaseStatement], str | None], before: set[str] = frozenset()
) -> set[str]:
    """Names `stmts` bind to a clock read (`t = now()`) or to one of those (`submit_start = iter_start`);
    `before`: those of the statements before `stmts` (the names they give go on from there)."""
    out: set[str] = set(before)
    for stmt in stmts:
        name = start_clock(stmt)
        if name is not None:
            out.add(name)
            continue
        bound = name_binding(stmt)
        if bound is not None and isinstance(bound[1], cst.Name) and bound[1].value in out:
            out.add(bound[0])
    return out


def tail_after_last_call(
    stmt: cst.BaseStatement, has_jax_call: Callable[[cst.CSTNode], bool]
) -> tuple[list[cst.BaseSmallStatement], list[cst.BaseExpression]] | None:
    """What runs in the compound `stmt` after its last small statement with JAX work: the later
    small statements and the tests of later `if`/`while`s, in source order. A wait before the
    last JAX call in the same `with`/`if` block (`load_next_batch(it, batch)` ahead of the train
    step) does not wait for that call. None where the last call is inside a loop of `stmt`
    (what precedes it runs again after it on the next trip) or `stmt` is a simple line."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return None
    seq: list[tuple[cst.CSTNode, bool]] = []  # small statements and If/While tests, in order
    depth = [0]

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is not stmt and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(n, (cst.For, cst.While)):
                depth[0] += 1
            if isinstance(n, (cst.If, cst.While)):
                seq.append((n.test, depth[0] > 0))
            elif isinstance(n, cst.BaseSmallStatement):
                seq.append((n, depth[0] > 0))
                return False
            return True

        def on_leave(self, n: cst.CSTNode) -> None:
            if isinstance(n, (cst.For, cst.While)):
                depth[0] -= 1

    stmt.visit(V())
    last = next(
        (
            k
            for k in reversed(range(len(seq)))
            if isinstance(seq[k][0], cst.BaseSmallStatement) and has_jax_call(seq[k][0])
        ),
        None,
    )
    if last is None or seq[last][1]:
        return None
    rest = seq[last:]
    return (
        [n for n, _ in rest if isinstance(n, cst.BaseSmallStatement)],
        [n for n, _ in rest if not isinstance(n, cst.BaseSmallStatement)],
    )


def _one_return_of(checker, name: cst.Name) -> cst.BaseExpression | None:
    """The value of the one statement, a `return`, of the undecorated def `name` is bound to once in
    its scope: a lambda written as a def (timoklein/rejax@<heldout29> train.py:52, `def time_fn():
    return vmap_train(algo, keys)` then `timeit.timeit(time_fn, number=3)`, a recall entry)."""
    idx = checker.ctx.fact(ScopeIndex, ScopeIndex.of)
    scope = idx.resolve(name.value, name)
    bindings = idx.scope_info(scope).bindings.get(name.value, []) if scope is not None else []
    if len(bindings) != 1 or not isinstance(bindings[0], cst.FunctionDef):
        return None
    fn = bindings[0]
    if fn.decorators or fn.asynchronous is not None or not isinstance(fn.body, cst.IndentedBlock):
        return None
    body = list(fn.body.body)
    if body and is_docstring(body[0]) and len(body) > 1:
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return None
    ret = body[0].body[0]
    return ret.value if isinstance(ret, cst.Return) else None


def timeit_findings(checker) -> list[Finding]:
    """`timeit.timeit(lambda: f(x))` (also `repeat`, `Timer`) timing a lambda that returns before its
    JAX work is done: wrap the lambda's body in `jax.block_until_ready`."""
    out = []
    for call in checker.timeit_calls:
        q = checker.names.qualify(call.func)
        stmt = next((a.value for a in call.args if a.keyword is None), None)
        kw = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "stmt"), None)
        stmt = kw if kw is not None else stmt
        if isinstance(stmt, (cst.Name, cst.Attribute)) and dotted_name(stmt) in checker.jitted:
            out.append(_timed_jitted_function(checker, call, q, stmt))  # `timeit(step, number=n)`
            continue
        if isinstance(stmt, cst.Lambda):
            body, timed = stmt.body, "a lambda that"
        elif isinstance(stmt, cst.Name) and (body := _one_return_of(checker, stmt)) is not None:
            body, timed = body, f"`{stmt.value}`, which"
        else:
            continue
        calls = [body] if isinstance(body, cst.Call) else []
        calls += own_nodes(body, cst.Call)
        if not any(checker.is_jax_call(c) for c in calls) or any(checker.is_blocking(c, set()) for c in calls):
            continue
        imports: list[ImportRequest] = []
        block, reqs = checker.ctx.reference_at("jax.block_until_ready", checker.ctx.position(body).start.line)
        imports.extend(reqs)
        new_body = cst.Call(func=cst.parse_expression(block), args=[cst.Arg(body.with_changes(lpar=[], rpar=[]))])
        whose = "the lambda's" if isinstance(stmt, cst.Lambda) else f"`{stmt.value}`'s"
        fix = checker.ctx.rewrite(
            f"wrap {whose} result in `{block}(...)`", Safety.SAFE, replace={body: new_body}, imports=imports
        )
        out.append(
            flag(
                checker.ctx.finding(
                    checker.rule,
                    "JAX501",
                    call,
                    f"`{q.rsplit('.', 1)[-1]}` times {timed} returns before its JAX work is done "
                    f"(asynchronous dispatch); {fix.title}",
                    fix,
                ),
                "compile-label" if compile_label(_line_of(checker.ctx, call)) else "timeit",
            )
        )
    return out


def _timed_jitted_function(checker, call: cst.Call, q: str, function: cst.BaseExpression) -> Finding:
    """`timeit(f, number=n)` of a jitted `f` (hyungkwonko/jax-tutorial@dffae70 e4_vmap.py:24, a recall
    entry): timeit calls it with no arguments and each call returns at dispatch; time
    `lambda: jax.block_until_ready(f())` instead (unsafe where `f` is jitted only by a convention)."""
    line = checker.ctx.position(function).start.line
    block, imports = checker.ctx.reference_at("jax.block_until_ready", line)
    spelled = cst.Module(body=[]).code_for_node(function)
    new = cst.parse_expression(f"lambda: {block}({spelled}())")
    why = checker.convention.get(dotted_name(function))
    safety = Safety.UNSAFE if why else Safety.SAFE
    title = f"time `lambda: {block}({spelled}())` instead" + (f" (unsafe: {why})" if why else "")
    fix = checker.ctx.rewrite(title, safety, replace={function: new}, imports=list(imports))
    message = (
        f"`{q.rsplit('.', 1)[-1]}` times the jitted `{spelled}`, which returns before its JAX work is done "
        f"(asynchronous dispatch); {fix.title}"
    )
    path = "compile-label" if compile_label(_line_of(checker.ctx, call)) else "timeit"
    return flag(checker.ctx.finding(checker.rule, "JAX501", call, message, fix), path)


def _line_of(ctx, node: cst.CSTNode) -> cst.CSTNode | None:
    """The simple statement line holding `node` (`compile_time = timeit(...)`), or None."""
    while node is not None and not isinstance(node, cst.SimpleStatementLine):
        node = ctx.parent(node)
    return node
