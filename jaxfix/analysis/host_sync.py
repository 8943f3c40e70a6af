"""What waits for a JAX value on the host: the facts JAX501 (a timed region is blocked before its
clock read) needs, in one place.

JAX dispatches asynchronously; a value is waited for when the host needs its contents: it is
copied to the host (`np.asarray`, `jax.device_get`, `float`, `.item()`), formatted (`print`, an
f-string, `str.format`), turned into a Python bool (an `if`/`while`/`assert` test), or waited on
(`block_until_ready`, also leaf by leaf through `jax.tree_util.tree_map`), or displayed as a
notebook cell's value (`displayed_statements`). Anything else that jax
itself provides only queues more work. A call into code the file does not show (another module's
helper, a logger) may wait or not: `may_wait` says so, and a rule that must be sure a region is
*not* blocked treats it as waiting.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from jaxfix.analysis.host_waits import (  # noqa: F401 (read through `host_sync` too)
    BLOCKING_CALLS,
    BLOCKING_METHODS,
    BLOCKING_PREFIXES,
    NUMPY_METADATA,
    waits_by_name,
)
from jaxfix.analysis.runs_once import is_notebook_text, starts_cell
from jaxfix.analysis.walk import walk

# `tree_map(f, *trees)`: waits leaf by leaf when `f` waits on its argument
# (`jax.tree_util.tree_map(lambda x: x.block_until_ready(), metrics)`, brax's training loops)
TREE_MAPS = frozenset(
    {"jax.tree_util.tree_map", "jax.tree.map", "jax.tree_map", "jax.tree_util.tree_map_with_path", "jax.tree.map_with_path"}
)
# Calls outside jax that take a JAX value without reading its contents.
NON_WAITING_CALLS = frozenset(
    {
        "len",
        "isinstance",
        "type",
        "id",
        "dict",
        "zip",
        "enumerate",
        "range",
        "getattr",
        "hasattr",
        "setattr",
        "sum",
        "functools.partial",
        "flax.jax_utils.replicate",  # device_put_replicated: queued
        "flax.jax_utils.unreplicate",  # `tree_map(lambda x: x[0], tree)`: queued
    }
)
# Methods of Python containers: storing a JAX value does not read it.
CONTAINER_METHODS = frozenset(
    {"append", "extend", "insert", "update", "setdefault", "add", "pop", "get", "copy", "items", "keys", "values"}
    # `queue.Queue`: the reference is stored; a consumer thread reads it, after this clock
    | {"put", "put_nowait"}
)

# Methods of a pytree dataclass that build a new node from the old one's leaves without reading
# them (`flax.struct.PyTreeNode.replace`, chex's and `dataclasses.replace`'s spelling).
PYTREE_NODE_METHODS = frozenset({"replace"})


def unconverted_calls(
    node: cst.CSTNode,
    qualify: Callable[[cst.BaseExpression], str | None],
    converts: Callable[[cst.Call], bool] = lambda call: False,
) -> list[cst.Call]:
    """The calls in `node` (a returned expression) whose value may still be pending when it is
    evaluated: those not inside a call that waits for its argument (`float(jnp.mean(accs))`,
    `np.asarray(out)`, `loss.item()`, `out.block_until_ready()`) nor inside one `converts` says
    returns host values. A function whose JAX work in its returns is all converted has finished
    that work when it returns (kmheckel/spyx's evaluate helpers)."""
    out: list[cst.Call] = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(n, cst.Call):
                f = n.func
                if isinstance(f, cst.Attribute) and f.attr.value in BLOCKING_METHODS:
                    return False
                q = None if isinstance(f, cst.Call) else qualify(f)
                if waits_by_name(q) and q not in ("list", "tuple"):  # `list(outs)` keeps pending arrays
                    return False
                if converts(n):
                    return False
                out.append(n)
            return True

    walk(node, V())
    return out


# Methods that store their argument in the object they are called on (a list, set, dict): the
# object then holds the value, and a later read of the object (`f"{hist[-1]:.4f}"`) reads it.
STORING_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault"})


def displayed_statements(module: cst.Module, source: str) -> list[cst.SimpleStatementLine]:
    """In a notebook (`source` read as one module, cells joined at `# %%` markers), the statements
    IPython displays: each cell's last statement when it is a bare expression not ended by `;`.
    The display is the value's repr, which reads (waits for) a JAX array
    (ericmjl/dl-workshop@6ef9b7fe:notebooks/03-stax/01-linear.ipynb, `get_params(final_state)`)."""
    if not is_notebook_text(source):
        return []
    out = []
    body = list(module.body)
    for k, stmt in enumerate(body):
        if (
            (k + 1 == len(body) or starts_cell(body[k + 1]))
            and isinstance(stmt, cst.SimpleStatementLine)
            and isinstance(stmt.body[-1], cst.Expr)
            and not isinstance(stmt.body[-1].semicolon, cst.Semicolon)
        ):
            out.append(stmt)
    return out


def is_jax_library(qualname: str | None) -> bool:
    """A function of jax (or equinox/flax's array helpers) that queues work without waiting."""
    q = qualname or ""
    return (q.startswith(("jax.", "equinox.", "optax.")) and not waits_by_name(q)) or q in NON_WAITING_CALLS


def bool_tests(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The expressions `node` (a statement) turns into a Python bool by itself: the test of an
    `if`/`while`/`assert`, of a conditional expression, the operands of `and`/`or`/`not`."""
    tests: list[cst.BaseExpression] = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is not node and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(n, (cst.If, cst.While, cst.IfExp, cst.Assert)):
                tests.append(n.test)
            elif isinstance(n, cst.BooleanOperation):
                tests.extend((n.left, n.right))
            elif isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not):
                tests.append(n.expression)
            return True

    walk(node, V())
    return tests


def formatted(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """Expressions `node` formats into a string: f-string parts (`f"{loss:.4f}"`)."""
    out: list[cst.BaseExpression] = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is not node and isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return False
            if isinstance(n, cst.FormattedStringExpression):
                out.append(n.expression)
            return True

    walk(node, V())
    return out


def tree_map_waits(call: cst.Call, qualify: Callable[[cst.BaseExpression], str | None]) -> bool:
    """`tree_map(f, *trees)` whose `f` waits on its leaf: a lambda whose body calls
    `.block_until_ready()`/`.item()`/... on it or passes it to a waiting call, or a waiting
    function by name (`jax.tree_util.tree_map(np.asarray, out)`)."""
    if qualify(call.func) not in TREE_MAPS or not call.args:
        return False
    fn = call.args[0].value
    if isinstance(fn, cst.Lambda):
        params = {p.name.value for p in fn.params.params}
        body = fn.body
        calls: list[cst.Call] = []

        class V(cst.CSTVisitor):
            def visit_Call(self, n: cst.Call) -> None:
                calls.append(n)

        walk(body, V())
        for c in calls:
            f = c.func
            if isinstance(f, cst.Attribute) and f.attr.value in BLOCKING_METHODS and _reads(f.value, params):
                return True
            if waits_by_name(qualify(f)) and any(_reads(a.value, params) for a in c.args):
                return True
        return False
    return waits_by_name(qualify(fn))


def _reads(node: cst.CSTNode, names: set[str]) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            nonlocal found
            found = found or n.value in names

    walk(node, V())
    return found


def calls_looked_up_blocker(body: cst.CSTNode) -> bool:
    """`body` calls a blocking method it looked up by name: `getattr(leaf, "block_until_ready")()`
    or `ready = getattr(leaf, "block_until_ready", None)` then `ready()`, the duck-typed wait a
    benchmark helper runs over every leaf of its argument (LiquidGunay/nano-vllm-jax@a43ef9f9:
    benchmarks/benchmark_gdn_prefill_kernel.py `_block_until_ready`, whose callers were 16 wrong
    JAX501 findings with safe fixes)."""
    looked_up: set[str] = set()
    called: list[cst.Call] = []

    class V(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            if _is_blocker_lookup(n.value):
                looked_up.update(t.target.value for t in n.targets if isinstance(t.target, cst.Name))

        def visit_Call(self, n: cst.Call) -> None:
            called.append(n)

    walk(body, V())
    return any(
        _is_blocker_lookup(c.func) or (isinstance(c.func, cst.Name) and c.func.value in looked_up) for c in called
    )


def _is_blocker_lookup(node: cst.BaseExpression) -> bool:
    """`getattr(x, "block_until_ready"[, default])`."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "getattr"):
        return False
    if len(node.args) < 2 or not isinstance(node.args[1].value, cst.SimpleString):
        return False
    return node.args[1].value.evaluated_value in BLOCKING_METHODS
