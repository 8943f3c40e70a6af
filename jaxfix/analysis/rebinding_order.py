"""Which module globals can be rebound *after* a trace: the order fact behind JAX404's reads.

A jitted function reads a module global once, when it is traced; a rebinding matters only when it
can run after some call that traces and before a later call of the compiled function. Import-time
setup (`TABLE = np.array(...)` then `TABLE = jnp.asarray(TABLE)`, `setColors()` called once at
module level, `f = jax.jit(f)`) runs before any trace and is harmless.

Read on the stdlib AST in execution order:
- a statement sequence: a rebinding after a statement that may trace (in a notebook, and before
  a later statement that may trace again: its last cells may rebind freely; a module's importers
  may call its compiled functions after its last line);
- a loop whose body (or header) both may trace and rebinds: iteration k's rebinding precedes
  iteration k+1's call (in a notebook the stale read is in what the loop's compiled calls run). A call of a function the loop body itself defines or jits is a fresh
  function each iteration (a new trace), and does not count;
- a function of the module: its own body read the same way (a global it writes after a trace,
  `global nbr` in a driver loop); a call of it carries its writes and traces to the caller.

A call "may trace" (and keep that trace for later calls) when it calls a compiling transform's
result: a name bound to `jax.jit(...)` (`transforms.JIT_NAMES`: jit, pmap, pjit, filter_jit), a
def decorated with one, `jax.jit(f)(x)` of a named `f`, a lax body taker given a named function;
or a module function whose body does. Measured with jax 0.10.2: an eager `lax.scan(body, ...)`
keeps `body`'s trace across calls (a global rebound between two scans is not seen), while an
eager `jax.vmap(f)(x)` or `jax.grad(f)(x)` traces again at every call and sees the new value. A global written only by a function the module
never calls is left out (the order is unknown: precision first).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from jaxfix.analysis import astscan
from jaxfix.analysis.transforms import GRAD_NAMES, JIT_NAMES, LAX_BODIES, VMAP_NAMES

# the transforms whose result keeps its trace for later calls (vmap and grad trace at every call)
TRACING = JIT_NAMES
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass
class _Effects:
    """What running some code does, as far as order goes."""

    traces: bool = False
    writes: dict[str, int] = field(default_factory=dict)  # candidate globals it rebinds -> a line
    late: dict[str, int] = field(default_factory=dict)  # of those, rebound after a trace -> a line
    last_late: dict[str, int] = field(default_factory=dict)  # the same -> the last such line

    def add(self, other: _Effects) -> None:
        self.traces |= other.traces
        _merge(self.writes, other.writes)
        self.add_late(other.late)
        self.add_late(other.last_late)

    def after_trace(self, writes: dict[str, int]) -> None:
        """`writes` run after this code traced (if it did)."""
        if self.traces:
            self.add_late(writes)

    def add_late(self, lines: dict[str, int]) -> None:
        _merge(self.late, lines)
        for name, line in lines.items():
            self.last_late[name] = max(line, self.last_late.get(name, line))


def _merge(into: dict[str, int], other: dict[str, int]) -> None:
    for name, line in other.items():
        into.setdefault(name, line)


@dataclass(frozen=True)
class Late:
    """A global some rebinding of which can run after a trace."""

    line: int  # the line of one such rebinding (or of the call that makes it)
    # the last module-level line at which one runs (a statement, or a call of a function that
    # makes one); None when a function's own order makes one, whenever that function is called
    last: int | None

    # in a notebook: the module functions a compiled function called after the rebinding (with a
    # trace kept from before it) runs, so the only ones whose reads can be stale; None: any
    readers: frozenset[str] | None = None

    def read_by(self, function: str | None) -> bool:
        """A read of the global in the module-level def `function` (None: elsewhere) can be stale."""
        return self.readers is None or function is None or function in self.readers

    def after(self, line: int) -> bool:
        """Such a rebinding can run after `line` (a traced function defined there can read a value
        its trace did not see). One that only runs before the function exists is harmless."""
        return self.last is None or self.last > line


def late_rebound(
    tree: ast.Module, candidates: Iterable[str], qualify: Callable[[ast.AST], str | None], notebook: bool = False
) -> dict[str, Late]:
    """The `candidates` (module globals bound more than once) that some rebinding can execute
    after a call that may trace: a module-level rebinding after one, in a module-level loop with
    one, or a `global` write in a function of the module whose own order (or whose callers') puts
    it after one. `qualify` names a call's function through the module's imports. Name -> where
    such rebindings run (`Late`). In a `notebook` nothing runs after its last cell (no importer
    calls the compiled functions later): a rebinding cell counts only before a later call."""
    names = set(candidates)
    if not names:
        return {}
    return _Order(tree, names, qualify, notebook).late()


class _Order:
    def __init__(self, tree: ast.Module, names: set[str], qualify, notebook: bool = False) -> None:
        self.tree = tree
        self.notebook = notebook
        self.names = names
        self.qualify = qualify
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.jitted: set[str] = set()  # module names bound to a transform's result
        for stmt in astscan.module_level(tree.body):
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[stmt.name] = stmt
                if any(self._is_transform(d) for d in stmt.decorator_list):
                    self.jitted.add(stmt.name)
        # a name bound to a transform's result -> the module functions its argument names (left
        # out when it is bound so more than once: which one a call runs depends on the order)
        wrapped: dict[str, set[str] | None] = {}
        for stmt in astscan.statements(tree):
            if isinstance(stmt, ast.Assign) and self._transform_call(stmt.value):
                self.jitted.update(_dotted(t) for t in stmt.targets if _dotted(t))
                named = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
                for t in stmt.targets:
                    target = _dotted(t)
                    if target is not None:
                        wrapped[target] = named if target not in wrapped else None
        self._wrapped = {k: v for k, v in wrapped.items() if v is not None}
        self._summaries: dict[str, _Effects] = {}

    def late(self) -> dict[str, Late]:
        readers: dict[str, frozenset[str] | None] = {}
        if self.notebook:
            module = self._notebook_body(readers)
        else:
            module = self._block(self.tree.body, self.names, frozenset())
        found = {name: Late(line, module.last_late[name], readers.get(name)) for name, line in module.late.items()}
        for fn in self.functions:  # a function's own order counts, whoever calls it
            for name, line in self._summary(fn).late.items():
                if name not in found:
                    found[name] = Late(line, None)
                elif found[name].last is not None:
                    found[name] = Late(found[name].line, None)
        return {name: late for name, late in found.items() if name in self.names}

    def _notebook_body(self, readers: dict[str, frozenset[str] | None]) -> _Effects:
        """A notebook's statements in order, where a rebinding after a trace counts only once a
        later statement calls a compiled function again: a notebook that rebinds `model` in a cell
        after its last jitted call has nothing left to read the stale value (vision_transformer's
        vit_jax.ipynb, scenic's OWL-ViT notebook). Loops and functions keep their own order. `readers` gets, per global found late, the module
        functions the stale calls run (`_reach`): a read elsewhere (a jitted def redefined, and so
        replaced, in the rebinding's cell: google-research/self-organising-systems' diffLogic_CA.ipynb)
        sees no stale value."""
        out = _Effects()
        pending: dict[str, int] = {}
        newest: dict[str, int] = {}  # rebound name -> the line of its last rebinding so far
        fresh = _Fresh(self)
        for stmt in self.tree.body:
            effects = self._statement(stmt, self.names, frozenset())
            called = self._compiled_calls(stmt) if effects.traces else None
            if effects.traces:
                fresh.traced_at(stmt, called)
                for name in [*pending, *(n for n in readers if n not in pending)]:
                    if name in readers and readers[name] is None:
                        continue  # any reader already
                    old = None if called is None else {c for c in called if fresh.since.get(c, 0) <= newest[name]}
                    if old is None or old:
                        reach = None if old is None else self._reach(old)
                        known = readers.get(name, frozenset())
                        readers[name] = None if reach is None or known is None else known | reach
            if effects.traces and pending:
                stale = {
                    name: line
                    for name, line in pending.items()
                    if called is None or any(fresh.since.get(c, 0) <= newest[name] for c in called)
                }
                out.add_late(stale)
                pending = {name: line for name, line in pending.items() if name not in stale}
            if out.traces:
                for name, line in effects.writes.items():
                    pending.setdefault(name, line)
                    newest[name] = max(line, newest.get(name, line))
            out.add(effects)
            for name in effects.late:
                # late within the statement (a loop that calls and rebinds): what its compiled calls run
                reach = None if called is None else self._reach(called)
                known = readers.get(name, frozenset())
                readers[name] = None if reach is None or known is None else known | reach
                line = effects.last_late.get(name, effects.late[name])
                newest[name] = max(line, newest.get(name, line))
            fresh.note(stmt)
        return out

    def _reach(self, compiled: set[str]) -> frozenset[str] | None:
        """The module functions the compiled functions `compiled` run: their defs (or what a
        `name = jax.jit(...)` binding wraps) and every module function named in those bodies, on
        and on. None when one is bound some other way (its body is not known)."""
        roots: set[str] = set()
        for name in compiled:
            if name in self.functions:
                roots.add(name)
                continue
            wrapped = self._wrapped.get(name)
            if wrapped is None:
                return None
            roots |= wrapped
        seen: set[str] = set()
        while roots:
            name = roots.pop()
            if name in seen:
                continue
            seen.add(name)
            fn = self.functions.get(name)
            if fn is not None:
                roots |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id in self.functions} - seen
        return frozenset(seen)

    def _compiled_calls(self, stmt: ast.stmt) -> set[str] | None:
        """The compiled functions (`self.jitted` names) whose calls in `stmt` may trace; None when
        something else in it may trace (a module function that does, a lax body, `jax.jit(f)(x)`)."""
        names: set[str] = set()
        for node in astscan.nodes(stmt):
            if isinstance(node, ast.Call) and self._call(node, frozenset()).traces:
                name = _dotted(node.func)
                bodies = self._lax_bodies(node)
                if bodies:
                    names |= bodies
                    continue
                if name is None or name not in self.jitted:
                    return None
                names.add(name)
        return names

    def _lax_bodies(self, call: ast.Call) -> set[str]:
        """The module functions an eager lax call (`lax.while_loop(cond_fun, body_fun, init)`) is
        given as bodies: it keeps their traces, like a compiled function's; empty when one is
        anything else (a lambda or partial is a new function each call, an unknown name)."""
        positions = LAX_BODIES.get(self.qualify(call.func) or "")
        if positions is None:
            return set()
        found: set[str] = set()
        for i in positions:
            for arg in call.args if i == -1 else call.args[i : i + 1]:
                if not (isinstance(arg, ast.Name) and arg.id in self.functions):
                    return set()
                found.add(arg.id)
        return found

    # -- a function's summary ------------------------------------------------------------------
    def _summary(self, name: str) -> _Effects:
        found = self._summaries.get(name)
        if found is not None:
            return found
        self._summaries[name] = _Effects()  # a recursive call adds nothing
        fn = self.functions[name]
        declared = {n for stmt in astscan.nodes(fn) if isinstance(stmt, ast.Global) for n in stmt.names}
        effects = self._block(fn.body, declared & self.names, frozenset())
        if name in self.jitted:
            effects.traces = True  # calling it traces it
        self._summaries[name] = effects
        return effects

    @staticmethod
    def _called(summary: _Effects, line: int) -> _Effects:
        """A call of a function with `summary`, at `line`: what it rebinds is reported there."""
        return _Effects(
            summary.traces,
            dict.fromkeys(summary.writes, line),
            dict.fromkeys(summary.late, line),
            dict.fromkeys(summary.late, line),
        )

    # -- statements ------------------------------------------------------------------------------
    def _block(self, stmts: list[ast.stmt], assignable: set[str], fresh: frozenset[str]) -> _Effects:
        """Effects of running `stmts` in order. `assignable`: the candidates a plain assignment
        here rebinds (all at module level, the declared globals in a function); `fresh`: names
        an enclosing loop body binds (a call of one is a new function each iteration)."""
        out = _Effects()
        for stmt in stmts:
            effects = self._statement(stmt, assignable, fresh)
            out.after_trace(effects.writes)
            out.add(effects)
        return out

    def _statement(self, stmt: ast.stmt, assignable: set[str], fresh: frozenset[str]) -> _Effects:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out = _Effects()
            for dec in stmt.decorator_list:
                out.add(self._expression(dec, fresh))
            if stmt.name in assignable and not isinstance(stmt, ast.ClassDef):
                out.writes.setdefault(stmt.name, stmt.lineno)
            return out
        if isinstance(stmt, _LOOPS):
            inner = fresh | _bound_in(stmt.body, self._transform_call)
            head = self._expression(stmt.iter if not isinstance(stmt, ast.While) else stmt.test, fresh)
            body = self._block(stmt.body, assignable, inner)
            if not isinstance(stmt, ast.While):
                _merge(body.writes, {n: stmt.lineno for n in _targets(stmt.target) & assignable})
            out = _Effects()
            out.add(head)
            out.add(body)
            body.after_trace(body.writes)  # one iteration's rebinding precedes the next one's call
            out.add_late(body.late)
            out.add_late(body.last_late)
            out.add(self._block(stmt.orelse, assignable, fresh))
            return out
        if isinstance(stmt, ast.If):
            out = self._expression(stmt.test, fresh)
            for block in (stmt.body, stmt.orelse):
                branch = self._block(block, assignable, fresh)
                out.after_trace(branch.writes)
                out.add(branch)
            return out
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            out = _Effects()
            for item in stmt.items:
                out.add(self._expression(item.context_expr, fresh))
            return self._then(out, self._block(stmt.body, assignable, fresh))
        if isinstance(stmt, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            out = self._block(stmt.body, assignable, fresh)
            for block in (*(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody):
                out = self._then(out, self._block(block, assignable, fresh))
            return out
        if isinstance(stmt, ast.Match):
            out = self._expression(stmt.subject, fresh)
            for case in stmt.cases:
                out = self._then(out, self._block(case.body, assignable, fresh))
            return out
        # a simple statement: its calls run before its own assignment
        out = self._expression(stmt, fresh)
        own: set[str] = set()
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                own |= _targets(t)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and (not isinstance(stmt, ast.AnnAssign) or stmt.value):
            own |= _targets(stmt.target)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            own |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        own_lines = {name: stmt.lineno for name in own & assignable}
        out.after_trace(own_lines)  # `x = step(x)`: the call runs first
        _merge(out.writes, own_lines)
        return out

    @staticmethod
    def _then(first: _Effects, second: _Effects) -> _Effects:
        first.after_trace(second.writes)
        first.add(second)
        return first

    # -- expressions -----------------------------------------------------------------------------
    def _expression(self, root: ast.AST, fresh: frozenset[str]) -> _Effects:
        """The calls in `root` (not in the lambdas, defs or classes it holds)."""
        out = _Effects()
        stack = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, _DEFS) and node is not root:
                continue
            if isinstance(node, ast.Call):
                out.add(self._call(node, fresh))
            stack.extend(astscan.children(node))
        return out

    def _call(self, call: ast.Call, fresh: frozenset[str]) -> _Effects:
        func = call.func
        name = _dotted(func)
        if name is not None:
            if name.split(".")[0] in fresh:
                return _Effects()
            if name in self.jitted:
                return _Effects(traces=True)
            if name in self.functions:
                return self._called(self._summary(name), call.lineno)
            if (self.qualify(func) or "") in LAX_BODIES:
                return _Effects(traces=_named_function(call.args[:1] or call.args, fresh))
            return _Effects()
        if isinstance(func, ast.Call) and self._transform_call(func):
            # `jax.jit(f)(x)`: jit's cache holds `f`'s compilation across calls; a lambda or
            # partial built here is a new function each time
            return _Effects(traces=_named_function(func.args[:1], fresh))
        return _Effects()

    def _transform_call(self, value: ast.AST) -> bool:
        return isinstance(value, ast.Call) and self._is_transform(value.func)

    def _is_transform(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):  # `@partial(jax.jit, ...)`, `@jax.jit(...)`
            if (self.qualify(node.func) or "") == "functools.partial":
                return bool(node.args) and self._is_transform(node.args[0])
            return self._is_transform(node.func)
        return (self.qualify(node) or "") in TRACING


class _Fresh:
    """In a notebook's order, the compiled functions whose every trace runs after some line: a
    name bound to a new function (`grad_loss = jit(grad(lambda p, x: loss(f(p, x))))`, a
    redefined `@jax.jit def do_rollout`) after a global's rebinding traces with the new value,
    and the old compiled function it replaces can no longer be called (neural-tangents'
    function_space_linearization.ipynb, mujoco_playground's vision.ipynb). A body that calls
    another compiled function, or a lax body defined earlier, is only as fresh as that one (jit
    and lax keep their callee's trace); a call of a module function that traces is not followed.
    jit caches on the function it is given: `jax.jit(update)` of a def traced before keeps that
    trace, while `jax.jit(jax.value_and_grad(loss))` wraps a new function object each time and
    traces again (measured, jax 0.10.2; probml-notebooks' gp_deep_kernel_learning.ipynb)."""

    def __init__(self, order: _Order) -> None:
        self.order = order
        self.since: dict[str, int] = {}  # compiled name -> every trace of it runs after this line
        self.defined: dict[str, int] = {}  # plain module def -> the line of its last definition
        self.assigned: dict[str, int] = {}  # name -> the line of the plain assignment that last bound it
        self.untraced: set[str] = set()  # compiled defs no statement may have traced since their def

    def traced_at(self, stmt: ast.stmt, called: set[str] | None) -> None:
        """`stmt`, which may trace, calls the compiled functions `called` (None: unknown). A jitted
        def is traced first by its first call, so one defined before a global's rebinding and first
        called after it sees the new value (lockwo/distreqx@544d83f1:examples/02_mixture_models.ipynb
        redefines `@eqx.filter_jit def step` in a cell, rebinds `optimizer` below it, then loops
        over `step(...)`). Any other trace may reach a def indirectly: from then on its own line
        counts again."""
        for name in called or ():
            if name in self.untraced:
                self.since[name] = stmt.lineno
        self.untraced.clear()

    def note(self, stmt: ast.stmt) -> None:
        """Record the bindings `stmt` (a top-level statement) makes."""
        order = self.order
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.since.pop(stmt.name, None)
            self.defined.pop(stmt.name, None)
            self.assigned.pop(stmt.name, None)
            self.untraced.discard(stmt.name)
            if any(order._is_transform(d) for d in stmt.decorator_list):
                self.since[stmt.name] = self._body(stmt, stmt.lineno)
                if self.since[stmt.name] == stmt.lineno:  # its body keeps no older trace
                    self.untraced.add(stmt.name)
            elif not stmt.decorator_list:
                self.defined[stmt.name] = stmt.lineno
                # given to an eager lax call (`_Order._lax_bodies`), it is traced first by that call
                self.since[stmt.name] = self._body(stmt, stmt.lineno)
                if self.since[stmt.name] == stmt.lineno:
                    self.untraced.add(stmt.name)
            return
        for node in astscan.nodes(stmt):
            if isinstance(
                node,
                (
                    *_DEFS[:2],
                    ast.ClassDef,
                    ast.Assign,
                    ast.AugAssign,
                    ast.AnnAssign,
                    ast.For,
                    ast.With,
                    ast.Import,
                    ast.ImportFrom,
                ),
            ):
                for name in _bound_names(node):
                    self.untraced.discard(name)
                    self.since.pop(name, None)
                    self.defined.pop(name, None)
                    self.assigned.pop(name, None)
        if isinstance(stmt, ast.Assign) and order._transform_call(stmt.value):
            value: ast.AST = stmt.value
            new_function = False  # `grad(f)`, `vmap(f)`: a new function object, so a new jit cache
            while isinstance(value, ast.Call) and value.args and (order.qualify(value.func) or "") in _WRAPPERS:
                new_function |= (order.qualify(value.func) or "") not in JIT_NAMES
                value = value.args[0]
            if isinstance(value, ast.Lambda):
                line = self._body(value, stmt.lineno)
            elif isinstance(value, ast.Name) and value.id in self.defined:
                fn = order.functions.get(value.id)
                start = stmt.lineno if new_function else self.defined[value.id]
                line = self._body(fn, start) if fn is not None else 0
            elif (
                isinstance(value, ast.Attribute)
                and isinstance(value.value, ast.Name)
                and value.value.id in self.assigned
            ):
                # `jax.jit(env.reset)` of an object made after the rebinding: a new bound method,
                # a new cache entry (its body, in another module, is not followed)
                line = self.assigned[value.value.id]
            else:
                line = 0
            for t in stmt.targets:
                for name in _targets(t):
                    self.since[name] = line
        if isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                for name in _targets(t):
                    self.assigned[name] = stmt.lineno

    def _body(self, fn: ast.AST, line: int) -> int:
        """`line`, or earlier when `fn`'s body calls an older compiled function or lax body."""
        order = self.order
        for node in astscan.nodes(fn):
            if not isinstance(node, ast.Call):
                continue
            name = _dotted(node.func)
            if name in order.jitted:
                line = min(line, self.since.get(name, 0))
            elif name in order.functions and order._summary(name).traces:
                return 0
            positions = LAX_BODIES.get(order.qualify(node.func) or "")
            if positions is not None:
                for i in positions:
                    args = node.args if i == -1 else node.args[i : i + 1]
                    for arg in args:
                        if isinstance(arg, ast.Name):
                            line = min(line, self.defined.get(arg.id, 0))
        return line


# what a compiled function is built from: `jit(grad(lambda ...))`
_WRAPPERS = JIT_NAMES | VMAP_NAMES | GRAD_NAMES


def _bound_names(node: ast.AST) -> set[str]:
    """The names a binding statement binds (a def's or class's own name)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {n for t in node.targets for n in _targets(t)}
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return _targets(node.target)
    if isinstance(node, ast.For):
        return _targets(node.target)
    if isinstance(node, ast.With):
        return {n for item in node.items if item.optional_vars is not None for n in _targets(item.optional_vars)}
    return {(a.asname or a.name).split(".")[0] for a in node.names}


def _named_function(args: list[ast.expr], fresh: frozenset[str]) -> bool:
    return bool(args) and isinstance(args[0], ast.Name) and args[0].id not in fresh


def _dotted(node: ast.AST) -> str | None:
    """`a`, `a.b.c` as text; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _targets(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return {n for el in target.elts for n in _targets(el)}
    if isinstance(target, ast.Starred):
        return _targets(target.value)
    return set()


def _bound_in(stmts: list[ast.stmt], is_transform_call) -> frozenset[str]:
    """Names a loop body binds to a new function each iteration: a def, a lambda, or a
    transform of one (`step = jax.jit(lambda s: ...)`). `jax.jit(update)` of a function made
    outside is not new: jit's cache keeps `update`'s trace across wrappers (measured: research/jax-semantics.md, section 1)."""
    found: set[str] = set()
    assigns: list[ast.Assign] = []
    for stmt in stmts:
        for node in astscan.nodes(stmt):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.add(node.name)
            elif isinstance(node, ast.Assign):
                assigns.append(node)
    for node in assigns:
        value = node.value
        while is_transform_call(value) and value.args:
            value = value.args[0]
        if isinstance(value, (ast.Lambda, ast.Call)) or (isinstance(value, ast.Name) and value.id in found):
            for t in node.targets:
                found |= _targets(t)
    return frozenset(found)
