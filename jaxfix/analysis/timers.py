"""Which names of a module are timers: `with <timer>(...):` reads the clock on entry and on exit,
so its body is a timed region (JAX501).

One fact, read by JAX501's stdlib screen, by its libcst checker, and by the project index (a
module's timers are in its `pytrees.ModuleSummary`, so a script's `from utils import timeblock`
is seen as one):
- a class whose `__enter__` and `__exit__` (or the async pair) both read a clock (Mava's
  `TimeIt`);
- a `@contextlib.contextmanager` generator that reads a clock before its `yield` and again after
  it (samuela/git-re-basin's `utils.timeblock`: `start = time.time(); try: yield; finally:
  print(time.time() - start)`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from jaxfix.analysis import astscan

CLOCKS = frozenset(
    {
        "time.perf_counter",
        "time.perf_counter_ns",
        "time.time",
        "time.time_ns",
        "time.monotonic",
        "time.monotonic_ns",
        "timeit.default_timer",
        # a wall-clock timestamp: `datetime.now() - t0` is an elapsed time too (MaxText's step
        # time, benchmarks/human_fixes maxtext-step-time-datetime-unblocked)
        "datetime.datetime.now",
        "datetime.datetime.utcnow",
    }
)
CONTEXT_MANAGERS = frozenset({"contextlib.contextmanager", "contextlib.asynccontextmanager"})

Qualify = Callable[[ast.AST], "str | None"]


def is_clock_read(call: ast.Call, qualify: Qualify) -> bool:
    """`time.perf_counter()` and the other clocks, called without arguments."""
    return not call.args and not call.keywords and qualify(call.func) in CLOCKS


def timer_names(tree: ast.Module, qualify: Qualify) -> frozenset[str]:
    """The timer classes (any nesting) and the module-level timer context managers of `tree`."""
    out: set[str] = set()
    for node in astscan.nodes(tree):
        if type(node) is ast.ClassDef and _timer_class(node, qualify):
            out.add(node.name)
    for node in tree.body:
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef) and _timer_generator(node, qualify):
            out.add(node.name)
    return frozenset(out)


def _timer_class(node: ast.ClassDef, qualify: Qualify) -> bool:
    methods = {m.name: m for m in node.body if type(m) in (ast.FunctionDef, ast.AsyncFunctionDef)}
    for enter, exit_ in (("__enter__", "__exit__"), ("__aenter__", "__aexit__")):
        if enter in methods and exit_ in methods:
            if all(
                any(type(c) is ast.Call and is_clock_read(c, qualify) for c in ast.walk(methods[m]))
                for m in (enter, exit_)
            ):
                return True
    return False


def _timer_generator(node: ast.FunctionDef | ast.AsyncFunctionDef, qualify: Qualify) -> bool:
    """A context-manager generator with one `yield` and a clock read on each side of it."""
    if not any(qualify(d) in CONTEXT_MANAGERS for d in node.decorator_list):
        return False
    own = astscan.own_nodes(node)
    yields = [n for n in own if type(n) in (ast.Yield, ast.YieldFrom)]
    if len(yields) != 1:
        return False
    at = (yields[0].lineno, yields[0].col_offset)
    clocks = [(n.lineno, n.col_offset) for n in own if type(n) is ast.Call and is_clock_read(n, qualify)]
    return any(c < at for c in clocks) and any(c > at for c in clocks)
