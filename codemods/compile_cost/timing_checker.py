"""The walk of JAX501 `unblocked-timing`: timed regions of one module and the JAX work their clock
does not wait for, with the fix that waits for it."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

import libcst as cst

from codemods.compile_cost.jax_work import LAX_LOOPS, JaxWork, bound_by, own_callee
from codemods.compile_cost.nodes import all_nodes, own_nodes
from codemods.compile_cost.preview import compile_label, flag, setup_label, work_path
from codemods.compile_cost.timed_regions import (
    alias_start,
    carried_region,
    clock_names,
    name_binding,
    read_before_rebound,
    read_with_start,
    readers_before_rebound,
    tail_after_last_call,
    timeit_findings,
)
from codemods.compile_cost.timing_screen import (
    CLOCKS,
    TRANSFERS,
)
from jaxfix.analysis.astscan import loaded_names
from jaxfix.analysis.body_facts import assigned_names
from jaxfix.analysis.cstparse import parsing_config
from jaxfix.analysis.host_sync import (
    CONTAINER_METHODS,
    PYTREE_NODE_METHODS,
    STORING_METHODS,
    displayed_statements,
    is_jax_library,
)
from jaxfix.analysis.jit_contexts import JitContexts, jit_contexts
from jaxfix.analysis.names import dotted_name
from jaxfix.analysis.project_lookups import attribute_read
from jaxfix.analysis.proven_traced import ProvenTraced, proven_traced
from jaxfix.analysis.runs_once import starts_cell
from jaxfix.analysis.scopes import name_counts, name_uses, names_read, param_names
from jaxfix.analysis.walk import walk
from jaxfix.model import Finding, Fix, ImportRequest, Safety
from jaxfix.rulebase import Rule, RuleContext

# a print before a timer's start that announces a compile step, not one reporting a finished one
_ANNOUNCES = re.compile(r"\bcompiling\b(?!.*\b(done|complete|finished|proceed))", re.IGNORECASE)


class TimingChecker(JaxWork):
    """The regions of one module, each timed region read for JAX work the clock does not wait for
    (JAX501's walk; the rule in `unblocked_timing` keeps its docs and screens)."""

    def __init__(self, rule: Rule, ctx: RuleContext) -> None:
        self.rule = rule
        self.ctx = ctx
        self.names = ctx.names
        self.displayed = {id(s) for s in displayed_statements(ctx.module, ctx.source)}
        self._names_in: dict[cst.CSTNode, Counter[str]] = {}  # `names_in`
        self._names_in_block: dict[int, tuple[list, Counter[str]]] = {}  # id of a block -> (it, `names_in` of all)
        self._gathered: dict[tuple, list] = {}  # `gathered_before`
        self._scan()

    def is_clock(self, call: cst.Call) -> bool:
        return self.names.qualify(call.func) in CLOCKS and not call.args

    # the walk ------------------------------------------------------------------------------------------
    def run(self) -> list[Finding]:
        out: list[Finding] = []
        for stmts, looped in self.region_blocks:
            if self.runs_under_trace(stmts[0]):
                continue
            i = 0
            while i < len(stmts):
                start = self.start_clock(stmts[i]) or (alias_start(stmts, i, self.start_clock) if looped else None)
                if start is None:
                    i += 1
                    continue
                end = next((j for j in range(i + 1, len(stmts)) if self.clock_in(stmts[j])), None)
                if end is None:
                    if not looped:
                        break
                    carried = carried_region(stmts, i, start, self.clock_in)
                    if carried is not None:  # `last = now()` closing at the top of the next trip
                        found = self.check_region(carried, 0, len(carried) - 1, shape="lap:")
                        if found is not None:
                            found = self.lap_safety(found, stmts)
                        if found is not None:
                            out.append(found)
                        break
                    i += 1  # a later start (`last = new_time`) may still carry
                    continue
                looped = isinstance(stmts[end], (cst.For, cst.While))  # `for ..: log(time.time() - t0)`
                closing = self.start_clock(stmts[end])  # `t1 = now()`: an end only if read with a start
                starts = self.gathered_before(stmts, end, self._clock_names) if closing is not None else set()
                if (
                    not looped
                    and read_before_rebound(stmts[end:], start)
                    and (closing is None or read_with_start(stmts[end:], starts, closing))
                ):
                    found = self.check_region(stmts, i, end, start)
                    if found is not None:
                        out.append(found)
                i = end
        out.extend(timeit_findings(self))
        for node, call in self.timer_withs:
            found = self.check_timer_with(node, call)
            if found is not None:
                out.append(found)
        return out

    def runs_under_trace(self, stmt: cst.CSTNode) -> bool:
        """`stmt` is in a function this file proves traced (`proven_traced`): its clock reads run
        once, at trace time, around tracing, not around dispatched work (javidanaslanli/jax-dqn's
        `train`, only run as `jax.jit(jax.vmap(make_train(config)))`, timing its `lax.scan`)."""
        node = self.ctx.parent(stmt)
        while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
            node = self.ctx.parent(node)
        if not isinstance(node, cst.FunctionDef):
            return False
        info = self.ctx.fact(JitContexts, jit_contexts).info(node)
        return info is not None and self.ctx.fact(ProvenTraced, proven_traced).facts(info) is not None

    def start_clock(self, stmt: cst.BaseStatement) -> str | None:
        bound = name_binding(stmt)
        if bound is not None and isinstance(bound[1], cst.Call) and self.is_clock(bound[1]):
            return bound[0]
        return None

    def clock_in(self, stmt: cst.BaseStatement) -> cst.Call | None:
        """The first clock read that runs when `stmt` runs (a def statement only defines its body)."""
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return None
        return next((c for c in own_nodes(stmt, cst.Call) if self.is_clock(c)), None)

    def closing_clock(self, stmt: cst.BaseStatement, start: str | None) -> cst.Call | None:
        """The clock read of `stmt` that measures the region, `now() - start`, where `stmt` reads the
        clock more than once (novastar53/jaxpt@9105e9f notebooks/train_rope_gpt.ipynb cell 16: an
        `if start is None: start = time.time()` branch that never runs, then `iter_time =
        time.time() - start`); None when no read subtracts `start`."""
        if start is None or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return None
        for op in own_nodes(stmt, cst.BinaryOperation):
            if (
                isinstance(op.operator, cst.Subtract)
                and isinstance(op.left, cst.Call)
                and self.is_clock(op.left)
                and start in names_read(op.right)
            ):
                return op.left
        return None

    def waits_before_clock(self, stmt: cst.BaseStatement, clock: cst.Call, results: set[str]) -> bool:
        """The closing statement waits for a result before its clock read runs: a call or an
        f-string part evaluated earlier, left to right (`print(f"{float(loss):.3f} {time.time() - t0}")`,
        issue #33); `print(out, time.time() - t0)` calls `print` after the clock read."""
        around: set[int] = set()
        node: cst.CSTNode | None = clock
        while node is not None:
            around.add(id(node))
            if isinstance(node, (cst.If, cst.While)) and id(node.test) not in around:
                if self.reads(node.test, results):
                    # read in the body of an `if` whose test is a truth value of the results
                    # (`if self._did_overflow(state):`): the test waits first
                    # (instadeepai/mlip@e2f1e73 jax_md_simulation_engine.py:265, heldout18 wrong)
                    return True
            if node is stmt:
                break
            node = self.ctx.parent(node)
        around.discard(id(stmt))
        earlier: list[cst.CSTNode] = []

        class V(cst.CSTVisitor):
            done = False

            def on_visit(self, n: cst.CSTNode) -> bool:
                if self.done or isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                    return False
                if n is clock:
                    self.done = True
                    return False
                if id(n) not in around and isinstance(n, (cst.Call, cst.FormattedStringExpression)):
                    earlier.append(n)
                return True

        walk(stmt, V())
        for n in earlier:
            if isinstance(n, cst.Call) and self.is_blocking(n, results):
                return True
            if isinstance(n, cst.FormattedStringExpression) and self.reads(n.expression, results):
                return True
        return False

    def check_region(self, stmts, i: int, end: int, start: str | None = None, shape: str = "") -> Finding | None:
        region = stmts[i + 1 : end]
        unblocked = self.unblocked(region)
        if unblocked is None:
            return None
        last, results = unblocked
        clock = self.closing_clock(stmts[end], start) or self.clock_in(stmts[end])
        if self.waits_before_clock(stmts[end], clock, results):
            return None
        if start is not None and self.unread_measurement(stmts, end, start):
            return None
        fix = self.fix(stmts, region[last], before=stmts[end])
        found = self.ctx.finding(
            self.rule, "JAX501", clock, f"the clock is read {self.before_ready(region[last], fix)}", fix
        )
        after = self.label_after(stmts[end], stmts[end + 1] if end + 1 < len(stmts) else None)
        # `t1 = now()` then `print("compile took", t1 - t0)`; a log in the region that announces
        # what is timed (`logging.info("Testing and compiling eval_step...")`: phlippe/jax_trainer,
        # NX-AI/xlstm-jax `verify_eval_step`, heldout10/heldout11 0/0/2), or right before its start
        # (`print("compiling jacrev...")`, `t0 = time.time()`, the call, `print(f"done ...")`:
        # gerkone/gyaradax@<heldout31> notebooks/sensitivity_analysis.ipynb cells 8 and 15, 0/2/0)
        before = self.announcements(stmts[i - 1 : i] if i > 0 else [])
        # there only a plain string that announces ("compiling ..."): a previous region's report
        # (`print(f"took {t1 - t0}")`, "Compilation completed. Proceeding to run an epoch...":
        # MatiasCovarrubias/jaxecon@<heldout30> APG/OLD/apg_modular.ipynb cell 8, a real finding) does not
        announced = self.announcements(region) + [
            c for c in before if isinstance(c.args[0].value, cst.SimpleString) and _ANNOUNCES.search(c.args[0].value.value)
        ]
        if compile_label(stmts[end], after, *announced):
            return flag(found, "compile-label")
        path = work_path(self, region[last])
        if self.host_work(path, region[last]) and setup_label(stmts[end], after):
            return flag(found, "setup-label")
        if (
            (path == "eager" and self.waits_before(region[:last], results))
            or (self.host_work(path, region[last]) and any(self.host_synchronous(s) for s in region[: last + 1]))
            or (path == "helper" and self.waits_then_returns_eager(self.last_outer_call(region[last])))
        ):
            return flag(found, "eager-after-wait")
        if self.holder_called_after(region, last):
            return flag(found, "holder-call")
        return flag(found, shape + path)

    def holder_called_after(self, region: list[cst.BaseStatement], last: int) -> bool:
        """After the region's last JAX work, a method of an object whose arrays that work read is
        called (`divergences = jnp.sum(mcmc.get_extra_fields()["diverging"])`, then
        `mcmc.print_summary()`): a method of another library on the object holding the arrays
        may read them back to the host, and the file does not show whether it does
        (guglielmopadula/bayesian_naval_hull_numpyro@<heldout21>, eleven copies: wrong)."""
        holders: set[str] = set()
        for call in self.jax_calls(region[last]):
            for arg in call.args:
                for node in all_nodes(arg.value, cst.Attribute):
                    root = dotted_name(node.value)
                    if root is not None and "." not in root and root != "self":
                        holders.add(root)
        if not holders:
            return False
        tail = region[last + 1 :]
        for stmt in tail:
            for call in own_nodes(stmt, cst.Call):
                func = call.func
                if (
                    isinstance(func, cst.Attribute)
                    and dotted_name(func.value) in holders
                    and func.attr.value not in CONTAINER_METHODS | PYTREE_NODE_METHODS
                    and not self.is_jax_call(call)
                ):
                    return True
        return False

    def host_synchronous(self, stmt: cst.BaseStatement) -> bool:
        """`stmt` calls a function of this file, not JAX work, whose body hands what it is given to a
        call that waits (`obtain_root(theta)`, whose `scipy.optimize.root` converts on the host: Ceyron/
        machine-learning-and-simulation@b8ee2b1 adjoint_non_linear_system_jax_jacobians.py:157,
        heldout22, wrong): the region's time goes to host work that waits, and what is left in
        flight is the eager tail."""
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return False
        for call in own_nodes(stmt, cst.Call):
            func = call.func
            if isinstance(func, cst.Name) and call.args and not self.is_jax_call(call):
                defs = self.functions.get(func.value, ())
                params = set(param_names(defs[0].params)) if len(defs) == 1 else set()
                if params and any(self.is_blocking(c, params) for c in own_nodes(defs[0].body, cst.Call)):
                    return True
        return False

    def waits_before(self, head: list[cst.BaseStatement], results: set[str]) -> bool:
        """A statement of the region before its last JAX work certainly waits on a result of the
        region (`state.block_until_ready()` at the end of each epoch, `if not v` on a metric): the
        step work was waited for, and what is left in flight is the eager work after it (a
        `jnp.mean`/`jnp.stack` of metrics that are ready). A def statement only defines its body."""
        return any(
            not isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and self._certainly_waits(stmt, results) for stmt in head
        )

    def label_after(self, closing: cst.BaseStatement, following: cst.BaseStatement | None) -> cst.BaseStatement | None:
        """The statement after the closing clock read when it says what was timed: after `t1 = now()`
        (the measurement is made there), or one that reads the name the closing read binds
        (`jit_time = time.time() - t0`, then `print(f"JIT compilation done in {jit_time:.1f}s")`:
        bradknox/distillation-jax@<heldout20> examples/setpoint_tracking.py:88, wrong), a simple
        statement: a compound one holds more than the label (sgl-project/sglang-jax@<heldout12>
        weight_utils.py:1871, whose `if _callback_times:` block logs several timers under "MoE tensor
        load": real, and its words are not this timer's)."""
        if following is None:
            return None
        if self.start_clock(closing):
            return following
        bound = name_binding(closing)
        if bound is not None and isinstance(following, cst.SimpleStatementLine) and bound[0] in names_read(following):
            return following
        return None

    def unread_measurement(self, stmts: list[cst.BaseStatement], end: int, start: str) -> bool:
        """What the clocks measure is only stored where nothing reads it: the start's value (and
        the closing read's, `t1 = now()`) is read only in this block, from the closing read until
        the name is bound again, each time by a plain assignment (`self.t_hmf = t1 - t0`,
        `time_fast_jax = time.time() - t0`) to a name the module never reads or an attribute the
        project never reads. A figure nobody sees cannot mislead (inigozubeldia/cosmocnc_jax@dc8850c
        cosmocnc_jax/cnc.py:1475, micropilot/myosuite-mjx notebooks/quat_math.ipynb: heldout18,
        debatable, 0/0/3). Without a project index every attribute may be read."""
        scope = self.ctx.parent(stmts[end])
        while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Module)):
            scope = self.ctx.parent(scope)
        if scope is None:
            return False
        watched = {start: next((k for k in range(end - 1, -1, -1) if self.start_clock(stmts[k]) == start), None)}
        closing = self.start_clock(stmts[end])
        if closing is not None:
            watched[closing] = end
        consumers: dict[int, cst.BaseStatement] = {}
        for name, bound_at in watched.items():
            if bound_at is None or self.names_in_block(stmts)[name] != self.names_in(scope)[name]:
                return False  # used outside this block too
            for offset in readers_before_rebound(stmts[bound_at + 1 :], name):
                k = bound_at + 1 + offset
                if k < end:
                    return False  # read inside the region
                consumers[k] = stmts[k]
        if not consumers:
            return False
        module_reads = self.__dict__.get("_module_reads")
        if module_reads is None:
            module_reads = self._module_reads = loaded_names(self.ctx.tree)
        for k, stmt in consumers.items():
            if k == end and closing is not None:
                continue  # `t1 = now()`: its readers are the consumers after it
            if not all(self._stored_unread(stmt, name, module_reads) for name in watched):
                return False
        return True

    def gathered_before(self, stmts: list[cst.BaseStatement], end: int, gather) -> set[str]:
        """What `gather(found, part)` adds to `found` over `stmts[:end]`, a block of `region_blocks`
        (never changed), gathered once per block: its timed regions are asked about in order, each
        going on from where the last one stopped instead of from the block's start (quadratic in
        a script of many regions). A copy, which the caller may change."""
        key = (gather.__name__, id(stmts))
        kept = self._gathered.get(key)
        if kept is None or kept[0] is not stmts or kept[1] > end:
            kept = self._gathered[key] = [stmts, 0, set()]
        gather(kept[2], stmts[kept[1] : end])
        kept[1] = end
        return set(kept[2])

    def _clock_names(self, found: set[str], part: list[cst.BaseStatement]) -> None:
        found |= clock_names(part, self.start_clock, found)

    @staticmethod
    def _assigned(found: set[str], part: list[cst.BaseStatement]) -> None:
        found |= assigned_names(cst.IndentedBlock(body=part))

    def names_in(self, node: cst.CSTNode) -> Counter[str]:
        """`name_counts(node)`, counted once per node: every timed region of a block asks about its
        block and its scope (a script of a thousand timed regions walked its module a thousand
        times: 80 s for 5,000 lines)."""
        found = self._names_in.get(node)
        if found is None:
            found = self._names_in[node] = name_counts(node)
        return found

    def names_in_block(self, stmts: list[cst.BaseStatement]) -> Counter[str]:
        """`names_in` summed over the statements of a block (a list `region_blocks` holds, never
        changed), once per block."""
        kept = self._names_in_block.get(id(stmts))
        if kept is None or kept[0] is not stmts:
            total: Counter[str] = Counter()
            for stmt in stmts:
                total.update(self.names_in(stmt))
            kept = self._names_in_block[id(stmts)] = (stmts, total)
        return kept[1]

    def _stored_unread(self, stmt: cst.BaseStatement, name: str, module_reads: set[str]) -> bool:
        """Every read of `name` in `stmt` is a plain assignment to a name the module never reads or
        an attribute the project never reads, also inside a block (`if step % 10 == 0: step_time =
        time.time() - step_start` and a print of other figures: SatvikPraveen/JAX-NSL
        21_large_scale_training.ipynb, heldout27, wrong)."""
        lines = [stmt] if isinstance(stmt, cst.SimpleStatementLine) else list(all_nodes(stmt, cst.SimpleStatementLine))
        readers = [line for line in lines if name_uses(line, name)]
        if sum(len(name_uses(line, name)) for line in readers) != len(name_uses(stmt, name)):
            return False  # read in a test or a header (`if t1 - t0 > limit:`)
        for line in readers:
            bound = line.body[0] if len(line.body) == 1 else None
            if not isinstance(bound, cst.Assign) or len(bound.targets) != 1:
                return False
            target = bound.targets[0].target
            if isinstance(target, cst.Name):
                if target.value in module_reads:
                    return False
            elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
                if target.value.value != "self" or attribute_read(self.ctx, target.attr.value):
                    return False
            else:
                return False
        return True

    def announcements(self, region: list[cst.BaseStatement]) -> list[cst.Call]:
        """The region's statements that only log or print words: `logging.info("compiling...")`."""
        out = []
        for stmt in region:
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
                call = stmt.body[0].value
                if isinstance(call, cst.Call) and call.args and isinstance(call.args[0].value, cst.BaseString):
                    out.append(call)
        return out

    def host_work(self, path: str, last_stmt: cst.BaseStatement) -> bool:
        """The region's last JAX work is eager (`work_path` `eager` or `made`) or a helper of this
        file that calls no jitted function: what a set-up timer leaves in flight is array work at
        the end of the set-up, not a compiled computation."""
        if path in ("eager", "made"):
            return True
        func = own_callee(self.last_outer_call(last_stmt).func)  # `self.create_grid_mask(...)`
        if path != "helper" or not isinstance(func, cst.Name):
            return False
        return not any(self._reaches_jitted(fn) for fn in self.functions.get(func.value, ()))

    def lap_safety(self, found: Finding, trip: list[cst.BaseStatement]) -> Finding | None:
        """A lap timer (the clock read once per trip, each lap from the previous read) over a trip
        that waits, or may wait, on a result of its own JAX work anywhere in the trip (a metrics
        writer of another module that converts the previous step's loss: MaxText's double-buffered
        step time) measures a device step per lap in the steady state, a step late. Whether the
        trip waits the file may not show, so the fix is unsafe, with the reason: it is right only
        when nothing waits (held-out2 labels, AI-Hypercomputer/maxdiffusion `trainers/
        stable_diffusion_trainer.py:217`, `flux_trainer.py:441`; its own later fix of the SDXL
        trainer blocks, benchmarks/human_fixes). A trip that certainly waits (`loss.item()`, a
        format or a test of a result: `_certainly_waits`) times one device step per lap: nothing to
        report (minyoungpark1/swin_transformer_v2_jax@<heldout29> core/function.py:161, wrong)."""
        results = self.results(trip)
        first = next((k for k, s in enumerate(trip) if self.clock_in(s) is not None), 0)
        lap = trip[first + 1 :] + trip[: first + 1]  # from the lap's clock read on, as it runs
        waiter = next((s for s in lap if self.clock_in(s) is None and self.waits_in(s, results)), None)
        if waiter is not None and self._certainly_waits(waiter, results):
            return None
        fix = found.fix
        if fix is None or fix.safety is not Safety.SAFE or waiter is None:
            return found
        call = next((c for c in own_nodes(waiter, cst.Call) if self.may_wait(c, results)), None)
        what = f"`{self.ctx.module.code_for_node(call.func).strip()}(...)`" if call is not None else "a test of it"
        why = (
            f"the loop hands a step result to {what}, which may wait on it: then each lap already "
            f"spans a device step (double-buffered timing) and the wait only removes the overlap"
        )
        title = f"{fix.title} (unsafe: {why})"
        return replace(
            found, message=found.message.replace(fix.title, title), fix=replace(fix, safety=Safety.UNSAFE, title=title)
        )

    def unblocked(self, region: list[cst.BaseStatement]) -> tuple[int, set[str]] | None:
        """(index of the region's last statement with JAX work, the region's JAX results) when
        nothing in the region waits for them after that work; None when something waits, when the
        region has no JAX work, or when all of it is host-to-device transfers (`TRANSFERS`: copies
        issued asynchronously on purpose, not device work a timer is meant to wait for)."""
        calls = [self.jax_calls(stmt) for stmt in region]
        waited: set[str] = set()
        work: list[bool] = []
        for stmt, found in zip(region, calls):
            work.append(any(not self.settled(c, waited) for c in found))
            waited |= self.waited_names(stmt)
        last = max((k for k, w in enumerate(work) if w), default=None)
        if last is None or all(self.names.qualify(c.func) in TRANSFERS for found in calls for c in found):
            return None
        results = self.results(region)
        if self.waits_after_last(region, last, results):
            return None
        return last, results

    def waited_names(self, stmt: cst.BaseStatement) -> set[str]:
        """Names `stmt` waits on by name: `x.block_until_ready()`, `jax.block_until_ready(x)`."""
        out: set[str] = set()
        for call in own_nodes(stmt, cst.Call):
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value == "block_until_ready":
                out.add(dotted_name(func.value) or "")
            elif self.names.qualify(func) == "jax.block_until_ready" and call.args:
                out.add(dotted_name(call.args[0].value) or "")
        out.discard("")
        return out

    def settled(self, call: cst.Call, waited: set[str]) -> bool:
        """JAX work left after the region waited for its step (jaxpt's training cells,
        novastar53/jaxpt@9105e9f notebooks/train_nope_gpt.ipynb cell 14: `avg_loss.block_until_ready()`,
        then `jnp.float32(avg_loss[0])` and `lr = warmup_with_cosine_decay_schedule(step)`): an
        eager call, not of a jitted function, whose arguments are only Python loop counters
        (`for step in range(...)`), literals, and values already waited for. Scalar host work,
        not the device work a step timer is meant to wait for."""
        if not waited or not call.args:
            return False
        func = call.func
        if isinstance(func, cst.Call) or dotted_name(func) in self.jitted:
            return False
        if isinstance(func, cst.Name) and func.value in self.functions:
            if any(self._reaches_jitted(fn) for fn in self.functions[func.value]):
                return False
        elif not is_jax_library(self.names.qualify(func)):
            return False
        counters = self.counters(call)
        for arg in call.args:
            for node in all_nodes(arg.value, cst.CSTNode):
                if isinstance(node, cst.Call):
                    return False
                if isinstance(node, cst.Name) and node.value not in waited and node.value not in counters:
                    return False
        return True

    def _reaches_jitted(self, fn: cst.FunctionDef) -> bool:
        """`fn`'s body calls a jitted function of the file, a transform's result or a lax loop."""
        for c in all_nodes(fn.body, cst.Call):
            if isinstance(c.func, cst.Call) or dotted_name(c.func) in self.jitted:
                return True
            q = self.names.qualify(c.func) or ""
            if q.startswith("jax.lax.") and q.rsplit(".", 1)[-1] in LAX_LOOPS:
                return True
        return False

    def counters(self, node: cst.CSTNode) -> frozenset[str]:
        """Names of the scope holding `node` only ever bound there as the target of
        `for name in range(...)`, to an int literal or by adding one (`step = 0` ... `step += 1`):
        Python ints (the scope's parameters are not)."""
        scope = node
        while scope is not None and not isinstance(scope, (cst.FunctionDef, cst.Lambda, cst.Module)):
            scope = self.ctx.parent(scope)
        if scope is None:
            return frozenset()
        cache = self.__dict__.setdefault("_counters", {})
        found = cache.get(id(scope))
        if found is None:
            loops: set[str] = set()
            other: set[str] = set()
            if not isinstance(scope, cst.Module):
                other |= {p.name.value for p in all_nodes(scope.params, cst.Param)}
            for n in own_nodes(scope if isinstance(scope, cst.Module) else scope.body, cst.CSTNode):
                if isinstance(n, cst.For):
                    it = n.iter
                    is_range = isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"
                    (loops if is_range else other).update(bound_by(n.target))
                elif isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                    targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
                    counting = isinstance(n.value, cst.Integer) and all(isinstance(t, cst.Name) for t in targets)
                    for t in targets:
                        (loops if counting else other).update(bound_by(t))  # `step = 0`, `step += 1`
                elif isinstance(n, (cst.FunctionDef, cst.ClassDef)) and n is not scope:
                    other.add(n.name.value)
            found = cache[id(scope)] = frozenset(loops - other)
        return found

    def before_ready(self, last_stmt: cst.BaseStatement, fix: Fix) -> str:
        """The rest of the message: the timed call whose result is not ready, and the fix."""
        what = self.ctx.module.code_for_node(self.last_outer_call(last_stmt).func).strip()
        return (
            f"before the result of `{what}(...)` is ready (JAX dispatches asynchronously, so this times "
            f"the dispatch only); {fix.title}"
        )

    def results(self, region, seed: frozenset[str] = frozenset()) -> set[str]:
        """JAX results of the region (and `seed`), values made from them (`metrics = tree_map(jnp.mean,
        metrics)`), and containers they are stored in (`history.append(loss)`): a later read of the
        container (`f"{history[-1]:.4f}"`) reads the result."""
        results: set[str] = set(seed)
        for stmt in region:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            for small in own_nodes(stmt, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Call)):
                if isinstance(small, cst.Call):  # `hist[tag].append(compute_iou(value))`: hist holds it
                    func = small.func
                    if (
                        isinstance(func, cst.Attribute)
                        and func.attr.value in STORING_METHODS
                        and any(self.reads(a.value, results) for a in small.args)
                    ):
                        results |= bound_by(func.value)
                    continue
                if small.value is not None and self.reads(small.value, results):
                    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                    for t in targets:
                        results |= bound_by(t)
        return results

    def waits_after_last(self, region, last: int, results: set[str]) -> bool:
        """The region waits for a result at or after its last JAX call (`tail_after_last_call`:
        inside a compound statement, only what runs after that call counts). After that statement,
        the arguments of a JAX call whose result is dropped count as results too
        (`dropped_call_arguments`)."""
        tail = tail_after_last_call(region[last], lambda n: bool(self.jax_calls(n)))
        if tail is None:
            head = self.waits_in(region[last], results)
        else:
            smalls, tests = tail
            head = any(self.waits_in(n, results) for n in smalls) or any(self.reads(t, results) for t in tests)
        if head:
            return True
        updated = self.dropped_call_arguments(region[: last + 1])
        later = self.results(region, frozenset(updated)) if updated else results
        return any(self.waits_in(stmt, later) for stmt in region[last + 1 :])

    def dropped_call_arguments(self, statements) -> set[str]:
        """The names passed to a JAX call whose result is dropped (`train_step(model, optimizer,
        metrics, batch)`, an `nnx.jit` step): it updates them in place, so a value read from one of
        them after it (`m = metrics.compute()`, then `f"{m['loss']}"`) waits for it
        (mav3ri3k/jax-models@<heldout15> dit/main.py:63-69, a loss printed before the epoch clock).
        Not in the call's own statement: there they are its inputs (`loss(profile(z_grid), z_grid)`,
        mikelytaev/wave-propagation-experiments@<heldout10> rwp/awpl/utils.py:121, real)."""
        out: set[str] = set()
        for stmt in statements:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                continue
            for small in own_nodes(stmt, cst.Expr):
                call = small.value
                if isinstance(call, cst.Call) and self.is_jax_call(call):
                    out |= {a.value.value for a in call.args if isinstance(a.value, cst.Name)}
        return out

    def check_timer_with(self, node: cst.With, timer: cst.Call) -> Finding | None:
        """`with TimeIt(...): out = step(x)`: the timer reads the clock on exit, after the body."""
        region = list(node.body.body)
        unblocked = self.unblocked(region)
        if unblocked is None:
            return None
        last, _ = unblocked
        fix = self.fix(region, region[last], after=region[-1])
        timer_name = self.ctx.module.code_for_node(timer.func).strip()
        message = f"`{timer_name}` reads the clock on exit, {self.before_ready(region[last], fix)}"
        path = work_path(self, region[last])
        if compile_label(timer):
            path = "compile-label"
        elif self.host_work(path, region[last]) and setup_label(timer):
            path = "setup-label"
        else:
            path = "timer:" + path
        return flag(self.ctx.finding(self.rule, "JAX501", timer, message, fix), path)

    def last_simple(self, stmt: cst.BaseStatement) -> cst.BaseSmallStatement | None:
        """The last small statement in `stmt` (at any depth, not in nested scopes) with a JAX call."""
        smalls = [s for s in own_nodes(stmt, cst.BaseSmallStatement) if self.jax_calls(s)]
        return smalls[-1] if smalls else None

    def fix(self, stmts, last_stmt: cst.BaseStatement, *, before=None, after=None) -> Fix:
        small = self.last_simple(last_stmt)
        fix = self._fix(stmts, last_stmt, small, before=before, after=after)
        calls = self.jax_calls(small if small is not None else last_stmt)
        if fix.safety is Safety.SAFE and calls and self.names.qualify(calls[-1].func) in TRANSFERS:
            why = "the wait lands on a transfer, which pipelines issue asynchronously on purpose"
            return replace(fix, safety=Safety.UNSAFE, title=f"{fix.title} (unsafe: {why})")
        guessed = dotted_name(calls[-1].func) if calls else None
        if fix.safety is Safety.SAFE and guessed in self.convention:
            why = f"`{guessed}` is {self.convention[guessed]}"
            return replace(fix, safety=Safety.UNSAFE, title=f"{fix.title} (unsafe: {why})")
        return fix

    def _fix(self, stmts, last_stmt: cst.BaseStatement, small, *, before=None, after=None) -> Fix:
        """Block on the last JAX call's results (in `small`, `last_simple(last_stmt)`) just before
        `before` (the closing clock read) or just after `after` (the last statement of a timer's
        `with` body)."""
        imports: list[ImportRequest] = []
        block, reqs = self.ctx.reference_at("jax.block_until_ready", self.ctx.position(last_stmt).start.line)
        imports.extend(reqs)
        if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and small.value is not None:
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            target = targets[-1]
            names = names_read(target)
            inside = last_stmt is not small and not isinstance(last_stmt, cst.SimpleStatementLine)
            # read only for a call inside a compound statement (a loop): each timed region asked
            bound = self.bound_before(stmts, stmts.index(last_stmt), small) if inside else set()
            # a wait inserted before a cell's first statement would end the previous cell and
            # change what it displays: wrap the call in place instead (the same value is shown)
            crosses_cell = before is not None and starts_cell(before)
            one_program = isinstance(small.value, cst.Call) and self._compiled_work(small.value)
            if not isinstance(small, cst.AugAssign) and inside and not crosses_cell and not names <= bound and one_program:
                # `model, opt_state, loss = step(...)` of a jitted `step` in the timed loop, `loss`
                # first bound there: the outputs of one compiled program are ready together, so
                # waiting on those bound before the loop (the carried state) waits for the last
                # step, once, after the loop (a Python wrapper may run several programs: not so)
                kept = _names_bound_of(target, small.value, bound)
                if kept:
                    target = kept
                    names = names_read(target)
                elif before is not None and self.read_after_clock(stmts, before, names):
                    # `loss = train_step(model, optimizer, x, y)` in the loop, `loss` printed right
                    # after the clock read: a program that works binds it by then, so it is bound
                    # after the loop too; waiting there waits for the last step once, instead of
                    # serialising every step (NNX steps update the model in place: nothing carried)
                    bound = bound | names
            if not isinstance(small, cst.AugAssign) and (not inside or names <= bound) and not crosses_cell:
                text = self.ctx.module.code_for_node(target).strip()
                if isinstance(target, cst.Tuple) and not target.lpar:
                    text = f"({text})"
                new = cst.parse_statement(f"{block}({text})\n", config=parsing_config(self.ctx.module))
                return self.ctx.rewrite(
                    f"insert `{block}({text})` before reading the clock",
                    Safety.SAFE,
                    insert_before={before: [new]} if before is not None else None,
                    insert_after={after: [new]} if after is not None else None,
                    imports=imports,
                )
            if isinstance(small, cst.Assign):
                value = small.value
                wrapped = cst.Call(
                    func=cst.parse_expression(block), args=[cst.Arg(value.with_changes(lpar=[], rpar=[]))]
                )
                return self.ctx.rewrite(
                    f"wrap the call in `{block}(...)`",
                    Safety.SAFE,
                    replace={value: wrapped},
                    imports=imports,
                )
        # a discarded result (or an augmented assignment): wait on the last JAX call in place, the
        # outer one (`losses.append(agent.train(jnp.ones(...)))` waits on `agent.train`, not its input)
        call = self.last_outer_call(small if small is not None else last_stmt)
        wrapped = cst.Call(func=cst.parse_expression(block), args=[cst.Arg(call)])
        return self.ctx.rewrite(
            f"wrap the call in `{block}(...)`", Safety.SAFE, replace={call: wrapped}, imports=imports
        )

    def read_after_clock(self, stmts, closing: cst.BaseStatement, names: set[str]) -> bool:
        """Every name of `names` is read by the closing clock statement or the simple statement
        right after it, neither binding it first: whenever those run without a NameError, the
        names are bound where the closing statement starts."""
        k = next((i for i, stmt in enumerate(stmts) if stmt is closing), None)
        if not names or not isinstance(closing, cst.SimpleStatementLine) or k is None:
            return False
        reading = [closing] + [s for s in stmts[k + 1 : k + 2] if isinstance(s, cst.SimpleStatementLine)]
        read: set[str] = set()
        for stmt in reading:
            if assigned_names(cst.IndentedBlock(body=[stmt])) & names - read:
                return False  # rebound before it is read
            read |= names_read(stmt) & names
        return names <= read

    def bound_before(self, stmts, index: int, small) -> set[str]:
        """Names surely bound when the loop/branch at `stmts[index]` starts: assigned earlier in the
        block, parameters and module names, and names the assignment itself reads (`s = step(s)`)."""
        return self.gathered_before(stmts, index, self._assigned) | names_read(small.value)


def _names_bound_of(target: cst.BaseExpression, value: cst.BaseExpression, bound: set[str]) -> cst.BaseExpression | None:
    """The names of the tuple `target` that `bound` holds, as a name or a tuple, when `value` is a
    call (of one compiled program, whose outputs are ready together); None when there are none."""
    if not isinstance(target, cst.Tuple) or not isinstance(value, cst.Call):
        return None
    kept = [el.value for el in target.elements if isinstance(el.value, cst.Name) and el.value.value in bound]
    if not kept:
        return None
    if len(kept) == 1:
        return kept[0]
    return cst.Tuple(elements=[cst.Element(n) for n in kept])
