"""JAX501's fast screen on the stdlib AST, and the clock facts the screen and the rule share.

`region_screen(tree)` over-approximates the rule's timed regions (`unblocked_timing`): every
region the rule can report, the screen admits, without a libcst parse.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from jaxfix.analysis import astscan
from jaxfix.analysis.eager_arrays import ARRAY_CONSTRUCTORS
from jaxfix.analysis.jit_contexts import JIT_NAMES, PARTIAL_NAMES
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.pytrees import NOT_PROJECT_HEADS, dotted
from jaxfix.analysis.screen_function import body_facts
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.timers import CLOCKS, timer_names
from jaxfix.analysis.transforms import STAGE_METHODS, STEP_ANNOTATIONS

CLOCK_IDENTS = frozenset(q.rsplit(".", 1)[-1] for q in CLOCKS)
TIMEIT_CALLS = {"timeit.timeit": "stmt", "timeit.repeat": "stmt", "timeit.Timer": "stmt"}
# jax calls that do not start device work worth waiting for (or that wait themselves).
NOT_COMPUTE = frozenset(
    {
        "jax.random.PRNGKey",
        "jax.random.key",
        "jax.random.split",  # key bookkeeping: a few bytes, never what a region times
        "jax.random.fold_in",
        "jax.random.key_data",
        "jax.random.wrap_key_data",
        "jax.numpy.shape",
        "jax.numpy.ndim",
        "jax.numpy.size",
    }
)

# Identities outside a transform: `jax.lax.stop_gradient(x)` returns `x`'s value; a helper that
# returns it returns what it was given.
IDENTITY_OPS = frozenset({"jax.lax.stop_gradient"})

# Host-to-device transfers: a region whose only JAX work is one of these is not reported. A
# transfer is issued asynchronously on purpose to overlap with a running step (held-out labels,
# erfanzar/EasyDeL@090a03b `esurge/runners/executors/batch_preparer.py:1121`, a prefetch stored in
# `self._pending_transfer`; `model_runner.py:2261`, a host bookkeeping timer around a conditional
# `device_put`); blocking there would serialise the pipeline the timer was written to measure.
TRANSFERS = frozenset(
    {"jax.device_put", "jax.device_put_replicated", "jax.device_put_sharded", "jax.make_array_from_callback"}
)

# Arrays made, not computed: transfers and `jax.numpy` constructors (`jnp.array(host_data)`,
# `jnp.linspace`, `jnp.zeros`). A `%%time` cell whose only JAX work is these times its host code
# (a data loader, a plot): held-out labels, probml/rebayes@3b88072 `demos/misc/l-rvga-flax.ipynb`
# cell 11 (`load_rotated_mnist` then `jnp.array(X)[:100]`), `bnn-incremental-hmc.ipynb` cell 13
# (an animation saved around one `jnp.linspace`).
CREATION = TRANSFERS | ARRAY_CONSTRUCTORS


def region_screen(
    tree: ast.Module,
    jitted_elsewhere: Callable[[str], bool] | None = None,
    method_elsewhere: Callable[[str, str], bool] | None = None,
) -> bool:
    """`timing_checker.TimingChecker.run`'s regions on the stdlib AST: whether some block (a module, def, class
    or compound statement body) has a start `t0 = <clock>()` followed, before the next statement
    of the block with a clock read, by a call that may be JAX work (`TimingChecker.is_jax_call`,
    over-approximated). A clock read is recognised exactly as the checker does (the same import
    map, the same own-nodes walk), so each start's region here holds the checker's region (the
    stdlib AST splits `a; b` into two statements: a start there is a start here, a region here
    may be longer); every start is tried, as a start the checker passes over may be one here.

    `jitted_elsewhere`: whether a name as written here is a jitted function of another module of
    the project (`project_lookups.project_jitted`, which the checker asks); without it, any name
    imported from outside the standard library and JAX may be one (`imported_names`).
    `method_elsewhere(cls, m)`: whether `m` of a class imported from another module returns
    compiled work in flight (`project_lookups.project_async_returner`), for `obj.m(...)` where
    some `obj = cls(...)` (the checker's `_imported_instance_class`); without it, any may."""
    names = ImportMap.from_ast(tree)

    def is_clock(call: ast.Call) -> bool:
        return not call.args and not call.keywords and names.qualify_ast(call.func) in CLOCKS

    jitted: set[str | None] = set()
    instances: dict[str, set[str]] = {}  # `obj = Cls(...)`: obj -> the classes, as written
    aliases: list[ast.Assign] = []
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}  # the checker's `functions`
    for node in astscan.nodes(tree):
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            defs.setdefault(node.name, []).append(node)
            if any(_applies_jit(d, names.qualify_ast) for d in node.decorator_list):
                jitted.add(node.name)
        elif kind is ast.Assign and type(node.value) is ast.Call:
            jitted.update(dotted(t) for t in node.targets)  # `f = jax.jit(g)`, `step = make_step()`
            jitted.update(dotted(e) for t in node.targets if type(t) is ast.Tuple for e in t.elts)  # `a, b = make()`
            if len(node.targets) == 1 and type(node.targets[0]) is ast.Name and (cls := dotted(node.value.func)):
                instances.setdefault(node.targets[0].id, set()).add(cls)
        elif kind is ast.Assign and isinstance(node.value, (ast.Name, ast.Attribute)):
            aliases.append(node)  # `self.step = step`: jitted if `step` is
        elif kind is ast.Call and type(node.func) is ast.Attribute and node.func.attr in STAGE_METHODS:
            jitted.add(dotted(node.func.value))  # `func.cost_analysis()`: a compiled function
        elif kind is ast.With and any(
            type(item.context_expr) is ast.Call and names.qualify_ast(item.context_expr.func) in STEP_ANNOTATIONS
            for item in node.items
        ):
            # the checker's `_annotated_steps`: callees assigned in a profiler step's body
            jitted.update(
                dotted(s.value.func) for s in node.body if type(s) is ast.Assign and type(s.value) is ast.Call
            )

    imported = imported_names(tree)
    if jitted_elsewhere is None:

        def jitted_elsewhere(written: str) -> bool:
            return written.split(".", 1)[0] in imported  # maybe: the text alone cannot tell

    if method_elsewhere is None:

        def method_elsewhere(cls: str, method: str) -> bool:
            return cls.split(".", 1)[0] in imported
    grew = True
    while grew:  # the checker's aliases of jitted names, to a fixpoint
        grew = False
        for node in aliases:
            source = dotted(node.value)
            if source is not None and (source in jitted or jitted_elsewhere(source)):
                for t in node.targets:
                    if (name := dotted(t)) is not None and name not in jitted:
                        jitted.add(name)
                        grew = True

    wrapping: dict[tuple[int, int], bool] = {}

    def may_be_jax_call(call: ast.Call, depth: int = 0) -> bool:
        """`JaxWork.is_jax_call`, loosened: every def of a name is looked into where the checker
        looks into the one def, and every assignment may bind a jitted name."""
        func = call.func
        written = dotted(func)
        if isinstance(func, ast.Call) or written in jitted:
            return True
        if type(func) is ast.Subscript and dotted(func.value) in jitted:
            return True  # `stuff["step"](...)` of `stuff = make_stuff(model)` (`JaxWork._jitted_item`)
        if written is not None and jitted_elsewhere(written):
            return True  # a jitted function of another module of the project (its summary's `jitted`)
        own = None  # `own_callee`: `m` for `self.m`; also `agent.m` (`JaxWork._method_of_local_object`)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id == "self" and func.attr in jitted:
                return True  # `self.step(x)` of a jitted method
            if any(method_elsewhere(cls, func.attr) for cls in instances.get(func.value.id, ())):
                return True  # `specter.spectralEMD(...)` of an imported class (`_imported_instance_class`)
            own = func.attr
        elif type(func) is ast.Name:
            own = func.id
        if own is not None and any(wraps_jax_work(fn, depth) for fn in defs.get(own, ())):
            return True  # a plain wrapper of JAX work (`def run(x): return step_jit(x)`)
        q = names.qualify_ast(func)
        return q not in NOT_COMPUTE and is_staged_call_name(q) and not q.startswith(("jax.experimental.", "jax._src."))

    def wraps_jax_work(fn: ast.FunctionDef | ast.AsyncFunctionDef, depth: int) -> bool:
        """`JaxWork._wraps_jax_work`, loosened: a def (not async, at most three calls deep) with a
        `return` of a value whose calls may be JAX work, or of a name while some assignment of the
        def calls what may be compiled work. `jax/_src/compiler.py` times
        `backend_compile_and_load`, a def of its own that returns `backend.compile_and_load(...)`:
        taking every def for JAX work admitted it and two more files to the libcst check for
        nothing (issue #33 item 7)."""
        if depth > 2 or type(fn) is ast.AsyncFunctionDef:
            return False
        key = (id(fn), depth)
        found = wrapping.get(key)
        if found is None:
            wrapping[key] = False  # a def reached again through its own calls adds nothing
            own = body_facts(fn).own
            found = False
            for ret in own:
                if type(ret) is not ast.Return or ret.value is None:
                    continue
                value = ret.value
                if any(may_be_jax_call(c, depth + 1) for c in ast.walk(value) if type(c) is ast.Call):
                    found = True
                    break
                if type(value) is ast.Call and names.qualify_ast(value.func) in IDENTITY_OPS and len(value.args) == 1:
                    value = value.args[0]  # `return jax.lax.stop_gradient(s)`: returns `s`
                if _returns_names(value) and any(
                    may_be_jax_call(c, 3) or (names.qualify_ast(c.func) or "").startswith("jax.lax.")
                    for a in own
                    if type(a) is ast.Assign
                    for c in ast.walk(a.value)
                    if type(c) is ast.Call
                ):
                    found = True  # `res = peval(x)` ... `return res` (the checker's `_compiled_work`)
                    break
            wrapping[key] = found
        return found

    timers = timer_names(tree, names.qualify_ast)
    if timers or imported:  # `with Timer(): ...`: a timer of this module, or maybe one of the project
        for node in astscan.nodes(tree):
            if (
                type(node) in (ast.With, ast.AsyncWith)
                and any(
                    type(item.context_expr) is ast.Call and dotted(item.context_expr.func) in timers | imported
                    for item in node.items
                )
                and any(may_be_jax_call(n) for s in node.body for n in astscan.nodes(s) if type(n) is ast.Call)
            ):
                return True
    for block, looped in _blocks(tree):
        starts = [
            i
            for i, stmt in enumerate(block)
            if type(stmt) is ast.Assign
            and len(stmt.targets) == 1
            and type(stmt.targets[0]) is ast.Name
            and type(stmt.value) is ast.Call
            and is_clock(stmt.value)
        ]
        if looped and starts:  # `last = new_time` of a clock value: the next trip's start (the checker's `alias_start`)
            clocked = {block[i].targets[0].id for i in starts}
            starts = sorted(
                {*starts}
                | {
                    i
                    for i, stmt in enumerate(block)
                    if type(stmt) is ast.Assign
                    and len(stmt.targets) == 1
                    and type(stmt.targets[0]) is ast.Name
                    and type(stmt.value) is ast.Name
                    and stmt.value.id in clocked
                }
            )
        if not starts:
            continue  # (the clock reads of a block are looked for only where a region may start)
        clocks = [any(is_clock(c) for c in _own_calls(stmt)) for stmt in block]
        for i in starts:
            end = next((j for j in range(i + 1, len(block)) if clocks[j]), None)
            region = block[i + 1 : end]
            if end is None:
                if not looped:
                    break  # as the checker: no later start of the block has an end either
                # as the checker: a loop body's start may close at the top of the next trip
                first = next((j for j in range(i) if clocks[j]), None)
                if first is None:
                    continue
                region = block[i + 1 :] + block[:first]
            if any(may_be_jax_call(n) for s in region for n in astscan.nodes(s) if type(n) is ast.Call):
                return True
    return False


def _returns_names(value: ast.expr) -> bool:
    """`return res`, `return self.state`, `return state, rng, metrics` (`jax_work._returned_names`)."""
    if type(value) is ast.Tuple:
        return any(_returns_names(e) for e in value.elts)
    return type(value) in (ast.Name, ast.Attribute)


def _applies_jit(expr: ast.AST, qualify) -> bool:
    """`JaxWork._jit_of` on the stdlib AST: `jax.jit`, `jax.jit(...)`, `partial(jax.jit, ...)`."""
    if qualify(expr) in JIT_NAMES:
        return True
    if type(expr) is ast.Call:
        q = qualify(expr.func)
        return q in JIT_NAMES or (q in PARTIAL_NAMES and bool(expr.args) and qualify(expr.args[0]) in JIT_NAMES)
    return False


# The heads of the modules whose names are never a timer of the project (`imported_names`).
_NOT_TIMER_HEADS = NOT_PROJECT_HEADS | {"jax", "flax", "optax", "equinox", "numpy"}


def imported_names(tree: ast.Module) -> set[str]:
    """Names a module imports from modules outside the standard library and JAX's own packages,
    and the names it binds to such modules (`import pkg.math_jax as mj`): each may be a timer or a
    jitted function of the project (`from utils import timeblock`, `mj.calc_covx_jax`), which only
    the project index can tell (`timers.timer_names`, `jitted` in its module summary)."""
    out: set[str] = set()
    for node in astscan.statements(tree):
        if type(node) is ast.Import:  # `import pkg.math_jax as mj`, then `mj.calc_covx_jax(x)`
            for a in node.names:
                head = a.name.split(".", 1)[0]
                if head not in _NOT_TIMER_HEADS:
                    out.add(a.asname or head)
            continue
        if type(node) is ast.ImportFrom and node.level == 0 and node.module:
            head = node.module.split(".", 1)[0]
            if head in _NOT_TIMER_HEADS:
                continue
        elif type(node) is not ast.ImportFrom:
            continue
        out.update(a.asname or a.name for a in node.names if a.name != "*")
    return out


def _blocks(tree: ast.Module) -> Iterator[tuple[list[ast.stmt], bool]]:
    """The module's body and every statement list nested in it (the checker's `IndentedBlock`s),
    each with whether it is the body of a `for`/`while` loop."""
    yield tree.body, False
    for stmt in astscan.statements(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(stmt, name, None)
            if type(block) is list and block and isinstance(block[0], ast.stmt):
                yield block, name == "body" and type(stmt) in (ast.For, ast.AsyncFor, ast.While)
        for part in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())):
            yield part.body, False


_AST_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _own_calls(root: ast.AST) -> Iterator[ast.Call]:
    """`TimingChecker.runs(root)` on the stdlib AST: calls that run when the statement `root` runs,
    not inside defs, classes or lambdas (a def statement in a region only defines its body)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, _AST_SCOPES):
            continue
        if type(node) is ast.Call:
            yield node
        stack.extend(astscan.children(node))


# Each text test below searches for its word first (a pattern that starts with a literal is
# searched for as fast as `in`; one anchored at a line start tries every character) and then
# looks at what precedes it on its line.
_WITH_STATEMENT = re.compile(r"\n[ \t\f]*(?:with|async)\b")
_FROM_IMPORT = re.compile(r"from\b(?:[ \t\f]|\\(?:\r\n|\r|\n))*(\.|[^\W\d]\w*)")
_TIME_WORD = re.compile(r"time\b")


def _starts_statement(source: str, at: int) -> bool:
    """Whether only spaces separate `source[at:]` from the start of a line, a `;` or a block's `:`
    before it (where a simple statement may start; a text that merely reads so is admitted too)."""
    at -= 1
    while at >= 0 and source[at] in " \t\f":
        at -= 1
    return at < 0 or source[at] in "\n\r;:"


def may_use_imported_timer(source: str) -> bool:
    """The text test of `with timeblock("epoch"):` where `timeblock` is a name `imported_names`
    lists: a `with` statement (a compound one: the first word of its line), and a `from` import of
    a module outside the standard library and JAX's own packages, or a relative one. (Nearly
    every module reads "with" somewhere; modules of JAX's own packages import only from those:
    on the jax/flax/optax corpus this test admits a tenth of the files, the word half.)"""
    lines = "\n" + (source.replace("\r", "\n") if "\r" in source else source)
    if _WITH_STATEMENT.search(lines) is None:
        return False
    for m in _FROM_IMPORT.finditer(lines):
        head = m.group(1)
        at = m.start()
        if (head == "." or head not in _NOT_TIMER_HEADS) and _starts_statement(lines, at):
            return True
    return False


def imports_time_module(source: str) -> bool:
    """The text test of an import that names a module `time` (`import os, time as clock`), whose
    clock reads may spell no clock's name: a line that holds the word and an import."""
    for m in _TIME_WORD.finditer(source):
        at = m.start()
        if at and (source[at - 1].isalnum() or source[at - 1] == "_"):
            continue
        start = max(source.rfind("\n", 0, at), source.rfind("\r", 0, at)) + 1
        end = len(source) if (cut := source.find("\n", at)) < 0 else cut
        line = source[start:end]
        if "import" in line or "from" in line:
            return True
    return False
