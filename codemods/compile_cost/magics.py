"""IPython's timing magics as the compile-cost rules read them (JAX504, JAX505): `%timeit` /
`%time` lines and `%%timeit` / `%%time` cells, commented out as jupytext writes them in a `.py`
notebook (`# %timeit f(x)`, cells starting at `# %%` lines), the form `jaxfix.engine.notebook`
hands a notebook's cells to the rules in; and which timed calls are JAX work, and which wait.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from codemods.compile_cost.timing_screen import CREATION, NOT_COMPUTE
from jaxfix.analysis.bound_jits import (
    factory_bound_names,
    factory_bound_parts,
    is_jit_expr,
    jit_of,
    returned_jitted_parts,
)
from jaxfix.analysis.bound_jits import jitted_names as shared_jitted_names
from jaxfix.analysis.host_callbacks import host_callers
from jaxfix.analysis.host_sync import BLOCKING_METHODS, waits_by_name
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.project_lookups import jit_factories, project_jitted_among
from jaxfix.analysis.pytrees import dotted
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.static_values import is_static_attr
from jaxfix.analysis.transforms import BLOCKING_CALLS, BLOCKING_JITS, EAGER_TRANSFORMS
from jaxfix.model import Finding, Fix

# `# %timeit [options] stmt` / `# %time stmt` (a line magic), `# %%timeit [options]` (a cell's header)
_LINE_MAGIC = re.compile(r"^# %(timeit|time)(?=\s|$)")
_CELL_MAGIC = re.compile(r"^# %%(timeit|time)(?=\s|$)")
_CELL_START = re.compile(r"^# %%(\s|$)")  # jupytext's cell marker
# `%timeit`'s options before the statement (`-n 10 -r 3 -o`), as IPython's `parse_options` takes them
_TIMEIT_OPTIONS = re.compile(r"(\s+-(?:[nrp]\s*\S+|[tcqo]+))*\s*")


@dataclass
class Timed:
    """One timed piece of code: a line magic's statement, or a cell magic's body."""

    magic: str  # "timeit" | "time"
    line: int  # the magic's line (1-based)
    column: int  # where the statement starts on it (0-based, characters); the header's 2 for a cell
    statements: list[ast.stmt]
    offset: int  # of the statement text in the source (a line magic), else 0
    stmt_source: str | None = None  # a line magic's statement text


@dataclass
class Magics:
    """What both rules read of one text: its timed code, jitted names and helpers that wait."""

    lines: list[str]
    starts: list[int]  # offset of each line
    names: ImportMap
    jitted: set[str]
    waiting: set[str]
    timed: list[Timed]
    bindings: dict[str, list[tuple[int, bool]]]  # top-level name -> (line, binds a jitted function)
    reading: dict[str, tuple[list[str], set[str]]]  # helper -> (its positional parameters, those it reads)
    wrappers: dict[str, set[int]]  # top-level function -> lines of its defs that return pending JAX work
    loops: dict[str, set[int]]  # top-level function -> lines of its defs whose own body runs a Python loop
    wrapping: frozenset[str] = field(default_factory=frozenset)  # `wrappers` bound at the timed code (`at`)
    looping: frozenset[str] = field(default_factory=frozenset)  # of `wrapping`, those whose def runs a loop

    @classmethod
    def of(
        cls,
        source: str,
        tree: ast.Module,
        imported_jitted: Callable[[str], bool] | None = None,
        imported_factory: Callable[[str], bool] | None = None,
    ) -> Magics:
        """`imported_jitted`: whether a name imported from another module of the checked project is
        jitted there (`project_lookups.project_jitted`, as JAX501 reads it): a notebook's `%timeit
        flatten_pairs(L)` of its package's `@jax.jit def flatten_pairs` (IonMich/jax-gw@<heldout27>
        orbits.ipynb cell 15, a recall miss). `imported_factory`: whether such a name returns a
        jitted function (`project_lookups.project_jit_factory`): `hf = make_solver(...)` binds one."""
        lines = source.splitlines(keepends=True)
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        names = ImportMap.from_ast(tree)
        jitted = jitted_names(tree, names)
        timed = list(timed_code(tree, lines, starts))
        if imported_jitted is not None:
            callees = (dotted(c.func) for item in timed for stmt in item.statements for c in calls(stmt))
            jitted |= project_jitted_among(imported_jitted, callees, jitted)
        top = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        defs = [n for n in top if isinstance(n, ast.FunctionDef)]
        factories = jit_factories(
            defs,
            tree,
            names.qualify_ast,
            imported_factory,
            {n.name for n in top},
        )
        jitted |= factory_bound_names(tree, factories) | transformed_names(tree, names)
        # `train_step, eval_step = make_fns(cfg)`: the jitted positions of a factory's returned tuple
        parts = {n.name: p for n in defs if (p := returned_jitted_parts(n, names.qualify_ast))}
        jitted |= factory_bound_parts(tree, parts)[0] if parts else set()
        return cls(
            lines,
            starts,
            names,
            jitted,
            # a function of the text that waits for itself, jitted by a jit that does (`eqx.filter_jit`), or
            # whose program calls back to the host (`host_callbacks.host_callers`: ready when it returns)
            waiting_helpers(tree)
            | shared_jitted_names(ast.walk(tree), names.qualify_ast, waiting=True)
            | host_callers(tree, names.qualify_ast),
            timed,
            top_bindings(tree, names, factories),
            reading_helpers(tree, names),
            wrapper_defs(tree, names, jitted),
            looping_defs(tree),
        )

    def at(self, item: Timed) -> Magics:
        """The facts as the timed code sees them: a name whose last top-level binding before the end
        of the timed code is not a jitted function is not jitted there, whatever a later cell binds
        to it (probml/probml-notebooks@4c0da5e9 notebooks/jax_intro.ipynb: `%timeit f()` of the NumPy
        `def f` of cell 12, which cell 129 rebinds to a `@jit def f`)."""
        end = (
            item.line
            if item.stmt_source is not None
            else max([item.line, *(s.end_lineno or 0 for s in item.statements)])
        )
        jitted = set(self.jitted)
        wrapping, looping = set(), set()
        for name, events in self.bindings.items():
            before = [(line, jit) for line, jit in events if line <= end]
            if before and not before[-1][1]:
                jitted.discard(name)
            if before and before[-1][0] in self.wrappers.get(name, ()):
                wrapping.add(name)
                if before[-1][0] in self.loops.get(name, ()):
                    looping.add(name)
        return replace(self, jitted=jitted, wrapping=frozenset(wrapping), looping=frozenset(looping))

    def jax_calls(self, item: Timed) -> list[ast.Call]:
        return [c for s in item.statements for c in calls(s) if is_jax_call(c, self.names, self.jitted)]

    def finding(self, item: Timed, *, code: str, name: str, path: str, message: str, fix: Fix | None = None) -> Finding:
        """A finding on the magic's line, from its `%` to the line's end (JAX504 and JAX505)."""
        return Finding(
            code=code,
            name=name,
            path=path,
            line=item.line,
            column=item.column + 1,
            end_line=item.line,
            end_column=len(self.lines[item.line - 1].rstrip("\r\n")) + 1,
            message=message,
            fix=fix,
        )


def chars(line: str, byte_col: int) -> int:
    """A stdlib-AST column (UTF-8 bytes) as characters."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def timed_code(tree: ast.Module, lines: list[str], starts: list[int]) -> Iterator[Timed]:
    """The line magics and cell magics of the text, with their statements."""
    for n, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        cell = _CELL_MAGIC.match(line)
        if cell is not None:
            end = next((k for k in range(n, len(lines)) if _CELL_START.match(lines[k])), len(lines))
            body = [s for s in tree.body if n < s.lineno <= end]
            yield Timed(cell.group(1), n, 2, body, 0)
            continue
        magic = _LINE_MAGIC.match(line)
        if magic is None:
            continue
        rest = line[magic.end() :]
        skip = _TIMEIT_OPTIONS.match(rest).end() if magic.group(1) == "timeit" else len(rest) - len(rest.lstrip())
        stmt = rest[skip:]
        try:
            parsed = ast.parse(stmt)
        except (SyntaxError, ValueError):
            continue
        if len(parsed.body) != 1:
            continue
        column = magic.end() + skip
        yield Timed(magic.group(1), n, column, parsed.body, starts[n - 1] + column, stmt)


def _jit_expr(e: ast.AST, names: ImportMap) -> bool:
    """`jax.jit`, `jax.jit(...)` (options), `partial(jax.jit, ...)`: a decorator or wrapper that jits."""
    return is_jit_expr(e, names.qualify_ast)


def jitted_names(tree: ast.Module, names: ImportMap) -> set[str]:
    """Names bound to jitted functions anywhere in the notebook (`jaxfix.analysis.bound_jits`)."""
    return shared_jitted_names(ast.walk(tree), names.qualify_ast)


def transformed_names(tree: ast.Module, names: ImportMap) -> set[str]:
    """Names the notebook binds to a JAX transform of a function (`batched = vmap(step)`, `dloss =
    jax.grad(loss)`; `transforms.EAGER_TRANSFORMS`): calling one runs JAX work, dispatched
    asynchronously as a jitted call is (Orcuslc/Seismic_wave_inversion_PINN@<heldout29>
    11_test_jax/jax_gradient_profiling.ipynb: `%timeit batched_first_order_grad_k(params, x)` of a
    `vmap` of a jitted gradient, a recall entry; JAX501's `JaxWork` reads them the same way)."""
    return {
        t.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and names.qualify_ast(node.value.func) in EAGER_TRANSFORMS
        for t in node.targets
        if isinstance(t, ast.Name)
    }


def _called(value: ast.AST) -> str | None:
    """The dotted callee of `value` when it is a call (`make_solver` of `make_solver(...)`)."""
    return dotted(value.func) if isinstance(value, ast.Call) else None


def top_bindings(
    tree: ast.Module, names: ImportMap, factories: set[str] = frozenset()
) -> dict[str, list[tuple[int, bool]]]:
    """The notebook's top-level bindings of each name in order: (line, whether it binds a jitted
    function: a def decorated with a jit, `f = jax.jit(...)`, a call of one of `factories`, or an
    alias of such a name)."""
    out: dict[str, list[tuple[int, bool]]] = {}
    jit_now: set[str] = set()
    for stmt in tree.body:
        bound: list[tuple[str, bool]] = []
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            bound.append((stmt.name, any(_jit_expr(d, names) for d in stmt.decorator_list)))
        elif isinstance(stmt, ast.ClassDef):
            bound.append((stmt.name, False))
        elif isinstance(stmt, ast.Assign):
            value = stmt.value
            jit = (
                (isinstance(value, ast.Call) and _jit_expr(value.func, names))
                or (isinstance(value, ast.Call) and names.qualify_ast(value.func) in EAGER_TRANSFORMS)
                or (_called(value) in factories and bool(factory_bound_names(stmt, factories)))
                or (isinstance(value, ast.Name) and value.id in jit_now)
            )
            bound.extend((t.id, jit) for t in stmt.targets if isinstance(t, ast.Name))
        for name, jit in bound:
            out.setdefault(name, []).append((stmt.lineno, jit))
            (jit_now.add if jit else jit_now.discard)(name)
    return out


def wrapper_defs(tree: ast.Module, names: ImportMap, jitted: set[str]) -> dict[str, set[int]]:
    """Top-level functions of the notebook that return JAX work still pending: a return value
    holds a JAX call that computes (not only `CREATION`) outside any call that waits for it
    (`def complex_fun(x): return jnp.sin(x) @ jnp.cos(x).T`, or a call of another such function).
    Calling one is JAX work as much as a jitted call is (ucl-bug/jwave@9d114ac docs/notebooks/
    prerequisites.ipynb cell 11: `%timeit complex_fun(x)` of eager `jnp` on a 10000x10000 array;
    JAX501 reads a plain wrapper of this file the same way). A returned name the body bound to
    such work counts as well, and so does arithmetic on one (`m = jnp.where(mask, m**2, jnp.sqrt(m))`
    then `return m @ m`; `next_v = np.where(...)` then `return next_v, next_tr, spikes` with `np` for
    `jax.numpy`: IanQS/numpy_to_jax@<heldout28> solutions/exe_02_jit.ipynb cell 9,
    romilly/spiking-jax@<heldout28> notebooks/lif-jax.ipynb cell 3, recall entries), unless the body
    waits on one of those names itself (`float(loss)`, `loss.block_until_ready()`)."""
    defs = [s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name not in jitted]
    out: dict[str, set[int]] = {}

    def pending(expr: ast.AST, local: set[str] = frozenset()) -> bool:
        """`expr` holds JAX work not waited for, or reads a name of `local` outside the arguments
        of a call that is not JAX work (`plot(x)` may read `x` back on the host)."""
        stack: list[tuple[ast.AST, bool]] = [(expr, False)]
        while stack:
            n, opaque = stack.pop()
            if isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(n, ast.Attribute) and is_static_attr(n.attr):
                continue  # `m.shape`: static, no value read
            if isinstance(n, ast.Name) and n.id in local and not opaque:
                return True
            if isinstance(n, ast.Call):
                func = n.func
                if isinstance(func, ast.Attribute) and func.attr in BLOCKING_METHODS:
                    continue
                q = names.qualify_ast(func)
                if waits_by_name(q):
                    continue
                if isinstance(func, ast.Name) and func.id in out:
                    return True
                if is_jax_call(n, names, jitted) and q not in CREATION:
                    return True
                own_method = isinstance(func, ast.Attribute) and _read_names(func.value) & local  # `x.sum()`
                stack.append((func, opaque))
                stack.extend((a, opaque or not own_method) for a in (*n.args, *(k.value for k in n.keywords)))
                continue
            stack.extend((c, opaque) for c in ast.iter_child_nodes(n))
        return False

    grew = True
    while grew:
        grew = False
        for fn in defs:
            if fn.lineno in out.get(fn.name, ()) or isinstance(fn, ast.AsyncFunctionDef):
                continue
            own = _own_statements(fn)
            local = _bound_to_pending(own, pending, names)
            returns = [n.value for n in own if isinstance(n, ast.Return) and n.value is not None]
            if any(pending(r, local) for r in returns):
                out.setdefault(fn.name, set()).add(fn.lineno)
                grew = True
    return out


def looping_defs(tree: ast.Module) -> dict[str, set[int]]:
    """Top-level functions of the notebook whose own body runs a Python `for`/`while` loop: a timed
    call of one that returns JAX work times a loop of steps, as a `%%time` cell with a loop does
    (`magic_path`; probml/probml-notebooks@4c0da5e9 Practical_JAX_Tips.ipynb cell 24
    `training_loop`, jax_intro.ipynb cell 166 `sum_slow`: dispatch-bound loops of tiny steps)."""
    out: dict[str, set[int]] = {}
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and any(isinstance(n, (ast.For, ast.While)) for n in _own_statements(fn)):
            out.setdefault(fn.name, set()).add(fn.lineno)
    return out


def _bound_to_pending(own: list[ast.AST], pending: Callable[[ast.AST, set[str]], bool], names: ImportMap) -> set[str]:
    """The local names that a function's own statements (`own`, in source order) bind last to pending
    JAX work, or to arithmetic on such a name; empty when the body waits on one of them (a call
    that waits by name or a blocking method reads it, or a test of its value), which finishes the work."""
    local: set[str] = set()
    for node in own:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = {name for target in targets for name in _plain_names(target)}
            if pending(node.value, local) or (isinstance(node, ast.AugAssign) and bound & local):
                local |= bound
            else:
                local -= bound
    if local and any(_waits_on(node, local, names) for node in own):
        return set()
    return local


def _plain_names(target: ast.AST) -> list[str]:
    """The names an assignment target binds itself (`a`, `a, (b, *c)`), not the container an item
    or attribute target stores into: `gram[i, j] = kij` into a NumPy array copies `kij` to the host
    (pierreglaser/jax-tutorial@<heldout11> tutorial.ipynb cell 31)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _plain_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _plain_names(element)]
    return []


def _waits_on(node: ast.AST, local: set[str], names: ImportMap) -> bool:
    """`node` waits for one of `local`'s values (`_awaited`)."""
    awaited = _awaited(node, names)
    return awaited is not None and any(_read_names(e) & local for e in awaited)


def _awaited(node: ast.AST, names: ImportMap) -> list[ast.AST] | None:
    """The expressions whose values `node` waits for on the host, or None when it waits for none:
    a blocking method's object (`x.block_until_ready()`, `loss.item()`), the arguments of a call
    that waits by name (`float(x)`, `np.asarray(x)`, `print(x)`), a formatted value (`f"{loss:.3f}"`),
    a slice bound (`buf[:n_iter]` makes it a Python int), the test of an `if`/`while`/`assert` or
    conditional expression (not an identity test, `x is None`)."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in BLOCKING_METHODS:
            return [func.value]
        if waits_by_name(names.qualify_ast(func)):
            return [*node.args, *(k.value for k in node.keywords)]
        return None
    if isinstance(node, ast.FormattedValue):
        return [node.value]
    if isinstance(node, ast.Slice):
        return [b for b in (node.lower, node.upper, node.step) if b is not None]
    if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp)) and not _identity_test(node.test):
        return [node.test]
    return None


def _read_names(expr: ast.AST) -> set[str]:
    """Names whose value `expr` reads (not only their `.shape`, `.dtype`, `len(...)`)."""
    out: set[str] = set()
    stack: list[tuple[ast.AST, ast.AST | None]] = [(expr, None)]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, ast.Name) and not (isinstance(parent, ast.Attribute) and is_static_attr(parent.attr)):
            out.add(node.id)
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("len", "type", "isinstance")
        ):
            continue
        stack.extend((child, node) for child in ast.iter_child_nodes(node))
    return out


def _identity_test(test: ast.expr) -> bool:
    """`x is None`, `x is not y`: compares identities, reads no array's value."""
    return isinstance(test, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops)


def inline_jit(call: ast.Call, names: ImportMap) -> bool:
    """`jax.jit(f)(x)`: a call of a function jitted in the same expression. Under `%time` (one run)
    the jit's trace and compile are what the line measures (che-shr-cat/JAX-in-Action@34381536
    Chapter-5/JAX_in_Action_Chapter_5_JIT.ipynb cells 128 and 134 time `jax.jit(cumulative_sum)(x)`
    to show the compile cost of an unrolled loop against `lax.scan`)."""
    return isinstance(call.func, ast.Call) and _jit_expr(call.func.func, names)


def _own_statements(fn: ast.AST) -> list[ast.AST]:
    """The nodes of `fn`'s body in source order, not inside nested defs, lambdas or classes."""
    out, stack = [], list(reversed(fn.body))
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        out.append(n)
        stack.extend(reversed(list(ast.iter_child_nodes(n))))
    return out


def reading_helpers(tree: ast.Module, names: ImportMap) -> dict[str, tuple[list[str], set[str]]]:
    """Top-level functions of the notebook that read on the host a value computed from one of their
    parameters: they pass it to a call that waits (`jax.device_get`, `float`, `print`, NumPy), call
    `.item()`/`.block_until_ready()` on it, format it in an f-string, test it in an `if`, or hand it
    to another such helper, or slice with it (`buffer[:n_iter]` converts the bound to a Python
    int: probml-notebooks smc_tempered_1d_bimodal.ipynb cell 21 returns the lambdas of a
    `lax.while_loop` up to its trip count). Also when the read is conditional (`if step % print_every == 0:`): the
    analysis cannot tell which run takes it. A call of one with JAX work in a read parameter waits
    for that work (probml/probml-notebooks@4c0da5e9 notebooks/bnn_mnist_sgld_jaxbayes.ipynb: the
    `%%time` training loop's `callback(step, params, ...)` formats the accuracy of the last params)."""
    defs = {
        s.name: s
        for s in tree.body
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
        and not any(_jit_expr(d, names) for d in s.decorator_list)
    }  # a jitted body is traced: its prints and formats run at trace time, they wait for nothing
    params: dict[str, list[str]] = {}
    for name, fn in defs.items():
        a = fn.args
        params[name] = [p.arg for p in (*a.posonlyargs, *a.args)]
    out: dict[str, tuple[list[str], set[str]]] = {}
    grew = True
    while grew:
        grew = False
        for name, fn in defs.items():
            a = fn.args
            every = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
            origin: dict[str, set[str]] = {p: {p} for p in every}

            def from_(expr: ast.AST) -> set[str]:
                return set().union(*(origin.get(n, set()) for n in _read_names(expr)))

            nodes = _own_statements(fn)
            for _ in range(2):  # a loop's later statement may feed an earlier one
                for n in nodes:
                    if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and n.value is not None:
                        src = from_(n.value)
                        targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                        for t in targets:
                            for leaf in ast.walk(t):
                                if isinstance(leaf, ast.Name):
                                    origin[leaf.id] = origin.get(leaf.id, set()) | src
                    elif isinstance(n, (ast.For, ast.AsyncFor)):
                        src = from_(n.iter)
                        for leaf in ast.walk(n.target):
                            if isinstance(leaf, ast.Name):
                                origin[leaf.id] = origin.get(leaf.id, set()) | src
            read: set[str] = set()
            for n in nodes:
                awaited = _awaited(n, names)
                if awaited is not None:
                    read |= set().union(*(from_(e) for e in awaited))
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in out:
                    positional, waited = out[n.func.id]
                    for k, arg in enumerate(n.args):
                        if k < len(positional) and positional[k] in waited:
                            read |= from_(arg)
                    for kw in n.keywords:
                        if kw.arg in waited:
                            read |= from_(kw.value)
            if read and (name not in out or out[name][1] != read):
                out[name] = (params[name], read)
                grew = True
    return out


def calls(node: ast.AST) -> list[ast.Call]:
    """Calls under `node` that run when it runs (not inside nested defs or lambdas). A `def`
    statement runs its decorators and default values, not its body (heldout26, after its
    measurement: rbig_jax's `%%time` cells that only build `jax.jit(jax.vmap(...))` wrappers and a
    `def f_2d` calling them were taken for timed JAX work)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        start = [*getattr(node, "decorator_list", []), *args.defaults, *(d for d in args.kw_defaults if d)]
    else:
        start = [node]
    out, stack = [], start
    while stack:
        n = stack.pop()
        if n not in start and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Call):
            out.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return out


def callee(call: ast.Call, names: ImportMap) -> str | None:
    return dotted(call.func)


def is_jax_call(call: ast.Call, names: ImportMap, jitted: set[str]) -> bool:
    func = call.func
    if isinstance(func, ast.Call):  # `jax.jit(f)(x)`, `jax.grad(f)(x)`
        return (names.qualify_ast(func.func) or "").startswith("jax.")
    if dotted(func) in jitted:
        return True
    q = names.qualify_ast(func)
    return (
        q is not None
        and q not in NOT_COMPUTE
        and is_staged_call_name(q)
        and not q.startswith(("jax.experimental.", "jax._src."))
    )


def waiting_helpers(tree: ast.Module) -> set[str]:
    """Functions of the text that call `block_until_ready` themselves (a `block_all(xs)` that maps
    it over a pytree, as Flax's guides time their steps): a call of one waits for its arguments."""
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(isinstance(n, ast.Attribute) and n.attr == "block_until_ready" for n in ast.walk(node))
    }


def plot_objects(statements: list[ast.stmt], names: ImportMap) -> set[str]:
    """Names the statements bind to matplotlib objects: the result of a `matplotlib` call (`fig, axs
    = plt.subplots(2, 3)`), of a method of one (`ax = fig.add_subplot()`, `axs.ravel()`), and a
    loop's targets over one (`for task, ax in enumerate(axs.ravel()):`). Their methods draw, and
    drawing converts the data to NumPy (probml/rebayes@3b88072 demos/basics/lofi-diagonal.ipynb
    cell 20: `ax.fill_between(x, yhat_lb, yhat_ub)` of the quantiles the `%%time` cell computed)."""
    found: set[str] = set()

    def made(expr: ast.AST) -> bool:
        for node in ast.walk(expr):
            if isinstance(node, ast.Call):
                func = node.func
                if (names.qualify_ast(func) or "").startswith("matplotlib."):
                    return True
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in found:
                    return True
        return False

    def bind(target: ast.AST) -> None:
        found.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))

    for stmt in statements:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assign) and made(node.value):
                for target in node.targets:
                    bind(target)
            elif isinstance(node, (ast.For, ast.comprehension)):
                if made(node.iter) or _read_names(node.iter) & found:
                    bind(node.target)
    return found


def waits_for_inputs_only(statements: list[ast.stmt], names: ImportMap, jitted: set[str]) -> set[int]:
    """The ids of the calls nested in the arguments of a JAX call of `statements`: a wait there
    waits for an input of that call, not for its result (IPL-UV/rbig_jax
    `1.3_iterative_gaussianization.ipynb` cell 30, heldout26 recall: `%timeit f(X.block_until_ready())`
    times the dispatch of `f`)."""
    out: set[int] = set()
    for stmt in statements:
        for call in calls(stmt):
            if is_jax_call(call, names, jitted):
                for arg in (*call.args, *(k.value for k in call.keywords)):
                    out.update(id(c) for c in calls(arg))
    return out


def blocks(
    call: ast.Call,
    names: ImportMap,
    jitted: set[str],
    waiting: set[str] = frozenset(),
    produced: set[str] = frozenset(),
    reading: dict[str, tuple[list[str], set[str]]] | None = None,
    plotting: set[str] = frozenset(),
) -> bool:
    """Whether `call` waits for a JAX value: `.block_until_ready()`, `jax.block_until_ready`, a
    function of the text that blocks itself (`waiting`), or a read of the value (`float`, NumPy,
    matplotlib, a method of a matplotlib object (`plotting`: `ax.plot(y)`), `print`, `.item()`)
    of an argument that is JAX work or a name the timed code bound to JAX work (`produced`:
    `samples = sampler(...)` then `plt.plot(samples[:, 0])`)."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in plotting:
        args = (*call.args, *(k.value for k in call.keywords))
        if any(reads_value(a, produced) or any(is_jax_call(c, names, jitted) for c in calls(a)) for a in args):
            return True
    if dotted(func) in waiting:
        return True
    if any(formats_value(a, produced) for a in (*call.args, *(k.value for k in call.keywords))):
        return True  # `pbar.set_description(f"{loss=:0.4e}")`: formatting converts on the host
    if reading and isinstance(func, ast.Name) and func.id in reading:
        positional, read = reading[func.id]
        args = [a for k, a in enumerate(call.args) if k < len(positional) and positional[k] in read]
        args += [kw.value for kw in call.keywords if kw.arg in read]
        if any(reads_value(a, produced) or any(is_jax_call(c, names, jitted) for c in calls(a)) for a in args):
            return True
    if isinstance(func, ast.Attribute) and func.attr in BLOCKING_METHODS:
        return (
            func.attr == "block_until_ready"
            or any(is_jax_call(c, names, jitted) for c in calls(func.value))
            or reads_value(func.value, produced)
        )
    q = names.qualify_ast(func)
    if q == "jax.block_until_ready" or q in BLOCKING_CALLS:
        return True  # `lx.linear_solve(...)`: an `eqx.filter_jit` entry, which waits before it returns
    if isinstance(func, ast.Call) and jit_of(func.func, names.qualify_ast) in BLOCKING_JITS:
        return True  # `eqx.filter_jit(f)(x)`
    if waits_by_name(q):
        args = (*call.args, *(k.value for k in call.keywords))  # `solve_ivp(f, span, y0, t_eval=ts)`
        return any(is_jax_call(c, names, jitted) for a in args for c in calls(a)) or any(
            reads_value(a, produced) for a in args
        )
    return False


def formats_value(expr: ast.AST, produced: set[str]) -> bool:
    """`expr` is or holds an f-string that formats the value of a name in `produced` (a JAX array's
    `__format__` reads it back to the host; `{x.shape}` does not)."""
    return any(
        isinstance(node, ast.FormattedValue) and reads_value(node.value, produced)
        for node in ast.walk(expr)
        if isinstance(node, ast.FormattedValue)
    )


def reads_value(expr: ast.AST, produced: set[str]) -> bool:
    """`expr` reads the value of a name in `produced` (not only its `.shape`, `.dtype`, ...)."""
    return bool(produced) and not _read_names(expr).isdisjoint(produced)


def produced_names(statements: list[ast.stmt], work: list[int]) -> set[str]:
    """Names the statements at `work` (those with JAX work) bind by assignment, also inside their
    `with`/`for`/`if` blocks (`with reuse(fig): ... G = jnp.log10(P)` then `float(G)` in it)."""
    out: set[str] = set()
    stack: list[ast.AST] = [statements[i] for i in work]
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        targets = (
            stmt.targets
            if isinstance(stmt, ast.Assign)
            else [stmt.target]
            if isinstance(stmt, (ast.AnnAssign, ast.AugAssign))
            else []
        )
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    out.add(node.id)
        stack.extend(n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.stmt))
    return out


def flowed_names(statements: list[ast.stmt], first: int, produced: set[str]) -> set[str]:
    """`produced` and the names the statements from `first` on bind from a value that reads one
    of them, in order (`hmc_samples = inference_loop(key, kernel, initial_state, n)` after
    `initial_state = hmc_state(...)`): data that depends on the JAX work, so reading it on the host
    waits for that work (probml/probml-notebooks@4c0da5e9: smc_tempered_1d_bimodal.ipynb cell 11
    plots `hmc_samples` in the `%%time` cell). Also inside the loops and blocks of those statements,
    and a list a result is appended to (`samples.append(get_params(state))` in the sampling loop,
    then `np.array(samples)`: jeremiecoullon/SGMCMCJax@cb90097 docs/nbs/kernel.ipynb cell 7)."""
    out = set(produced)
    stack: list[ast.AST] = list(reversed(statements[first:]))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, ast.Assign) and reads_value(stmt.value, out):
            out |= {n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and reads_value(stmt.value, out):
            out |= {n.id for n in ast.walk(stmt.target) if isinstance(n, ast.Name)}
        elif (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr in _COLLECTING
            and isinstance(stmt.value.func.value, ast.Name)
            and any(reads_value(a, out) for a in stmt.value.args)
        ):
            out.add(stmt.value.func.value.id)
        stack.extend(reversed([n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.stmt)]))
    return out


# list/set methods that put a value into the container they are called on
_COLLECTING = frozenset({"append", "extend", "insert", "add"})


def computes(stmt: ast.stmt, names: ImportMap, jitted: set[str]) -> bool:
    """Whether `stmt` has JAX work that computes: a JAX call that is not only making an array
    (`CREATION`), or an array made and handed straight to a helper (`render(jnp.ones(n))`)."""
    for call in calls(stmt):
        if is_jax_call(call, names, jitted):
            if names.qualify_ast(call.func) not in CREATION:
                return True
        elif any(is_jax_call(c, names, jitted) for a in (*call.args, *call.keywords) for c in calls(a)):
            return True
    return False


def called_before(call: ast.Call, item: Timed, tree: ast.Module, timed: list[Timed], names: ImportMap) -> bool:
    """Whether the function `call` calls was called earlier in the text (code or a timing magic)."""
    target = ast.dump(call.func)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and node is not call
            and node.lineno < item.line
            and ast.dump(node.func) == target
        ):
            return True
    for other in timed:
        if other.line < item.line and any(ast.dump(c.func) == target for s in other.statements for c in calls(s)):
            return True
    return False


def in_loop(call: ast.Call, item: Timed) -> bool:
    """Whether `call` sits in a `for`/`while` loop (or a comprehension) of the timed code."""

    def walk(node: ast.AST, looped: bool) -> bool:
        if node is call:
            return looped
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False
        inner = looped or isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.comprehension))
        return any(walk(child, inner) for child in ast.iter_child_nodes(node))

    return any(walk(s, False) for s in item.statements)


def read_after(call: ast.Call, item: Timed, tree: ast.Module) -> bool:
    """Whether a name the statement holding `call` binds is read after the timed code (a later
    cell uses what the timed run produced)."""
    holder = next((s for s in item.statements if any(c is call for c in calls(s))), None)
    if not isinstance(holder, (ast.Assign, ast.AnnAssign)):
        return False
    targets = holder.targets if isinstance(holder, ast.Assign) else [holder.target]
    bound = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    end = (
        max(item.line, *(s.end_lineno or s.lineno for s in item.statements)) if item.stmt_source is None else item.line
    )
    return any(
        isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in bound and n.lineno > end
        for n in ast.walk(tree)
    )
