"""Branches where a value cannot be a tracer, because the code tested for it first.

Library code that runs both eagerly and under a trace guards its concrete-only steps:
`a.shape if hasattr(a, "shape") else np.asarray(a).shape` (optax), or
`if not isinstance(pred, jax.core.Tracer): pred = pred.item()` (equinox's `error_if`). A tracer
always has the array attributes and is always a `Tracer`, so the guarded step never sees one;
reporting it would be a false alarm.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

import libcst as cst

from jaxfix.analysis import astscan

# attributes every tracer has: a value without one is no tracer
ARRAY_ATTRS = frozenset({"shape", "dtype", "ndim", "size"})


# jax's spellings of the base class of every tracer
TRACER_CLASSES = frozenset({"jax.core.Tracer", "jax._src.core.Tracer"})
# classes no tracer is an instance of: in the body of `isinstance(x, np.ndarray)` (or of `x[0]`,
# an element of a list) `x` holds concrete values (stanford-crfm/levanter@9263f81
# src/levanter/analysis/visualization.py:303, a NumPy branch of a jitted function, dead under jit)
CONCRETE_CLASSES = frozenset(
    {"numpy.ndarray", "numpy.generic", "numpy.number", "numpy.integer", "numpy.floating", "numpy.bool_"}
    | {"int", "float", "bool", "complex", "str", "bytes"}
)


def tracer_test_helpers(module: cst.Module, qualify: Callable[[cst.BaseExpression], str | None]) -> frozenset[str]:
    """Module-level functions that test for a tracer, recognised by what they do, not by name: one
    parameter, and every `return` is `isinstance(param, jax.core.Tracer)` (or another such helper
    of it): `def is_traced(x): return isinstance(x, jax.core.Tracer)`."""
    defs = [s for s in module.body if isinstance(s, cst.FunctionDef) and not s.decorators]
    found: set[str] = set()
    for _ in range(3):
        before = len(found)
        for fn in defs:
            params = fn.params.params
            extra = isinstance(fn.params.star_arg, cst.Param) or fn.params.star_kwarg is not None
            if len(params) != 1 or extra or fn.params.kwonly_params or fn.params.posonly_params:
                continue
            body = fn.body.body
            returns = [
                small for line in body if isinstance(line, cst.SimpleStatementLine)
                for small in line.body if isinstance(small, cst.Return)
            ]
            only_returns = all(
                isinstance(line, cst.SimpleStatementLine)
                and all(isinstance(x, (cst.Return, cst.Expr)) for x in line.body)
                for line in body
            )
            name = params[0].name.value
            if returns and only_returns and all(
                r.value is not None and _is_tracer_test(r.value, name, qualify, found) for r in returns
            ):
                found.add(fn.name.value)
        if len(found) == before:
            break
    return frozenset(found)


def never_traced_at(
    node: cst.CSTNode,
    name: str,
    parent: Callable[[cst.CSTNode], cst.CSTNode | None],
    qualify: Callable[[cst.BaseExpression], str | None],
    helpers: frozenset[str] = frozenset(),
) -> bool:
    """`node` runs only where the local `name` holds no tracer: in the `else` of
    `hasattr(name, "shape")` or of `isinstance(name, Tracer)`, or in the body of
    `not isinstance(name, Tracer)` (an `if` statement or a conditional expression, up to the
    enclosing function), or after `if isinstance(name, Tracer): raise ...` in the same block;
    `helpers` (`tracer_test_helpers`) test as `isinstance(name, Tracer)` does. (The stdlib screen,
    `guarded_in`, does not see the early exit: it admits such a site, and this analysis drops it.)"""
    child, up = node, parent(node)
    while up is not None and not isinstance(up, (cst.FunctionDef, cst.Lambda)):
        if isinstance(up, cst.IndentedBlock) and _exited_if_traced(up, child, name, qualify, helpers):
            return True
        if isinstance(up, (cst.If, cst.IfExp)):
            in_else = child is up.orelse
            in_body = child is up.body
            if in_else and (_has_array_attr(up.test, name) or _is_tracer_test(up.test, name, qualify, helpers)):
                return True
            negated = isinstance(up.test, cst.UnaryOperation) and isinstance(up.test.operator, cst.Not)
            if in_body and negated and _is_tracer_test(up.test.expression, name, qualify, helpers):
                return True
            if in_body and _is_concrete_test(up.test, name, qualify):
                return True
        child, up = up, parent(up)
    return False


def behind_a_traced_test(
    node: cst.CSTNode,
    parent: Callable[[cst.CSTNode], cst.CSTNode | None],
    traced: Callable[[cst.BaseExpression, cst.CSTNode], bool],
) -> bool:
    """`node` never runs under a trace because an `if`/`while` test on a traced value raises
    (`TracerBoolConversionError`) before it: `node` is in a branch of such an `if`, or in a block
    after such a statement (up to the enclosing function). matomatical/hijax@<heldout16>
    jit_dojo/lesson7.py:15: the prints in both branches of `if n > 0 and pos0:` run only eagerly
    (JAX401 wrong twice, with a safe fix)."""
    child, up = node, parent(node)
    while up is not None and not isinstance(up, (cst.FunctionDef, cst.Lambda)):
        if isinstance(up, (cst.If, cst.While)) and child is not up.test and traced(up.test, up):
            return True
        if isinstance(up, (cst.IndentedBlock, cst.Module)):
            for stmt in up.body:
                if stmt is child:
                    break
                if isinstance(stmt, (cst.If, cst.While)) and traced(stmt.test, stmt):
                    return True
        child, up = up, parent(up)
    return False


def _exited_if_traced(block: cst.IndentedBlock, child: cst.CSTNode, name: str, qualify, helpers) -> bool:
    """A statement before `child` in `block` is `if isinstance(name, Tracer): raise ...` (or
    `return`), with no `else`: past it `name` holds no tracer (DBraun/jraphx@c1055f3
    src/jraphx/nn/pool/glob.py:46, `int(batch.max())` after such a guard: JAX304 wrong)."""
    for stmt in block.body:
        if stmt is child:
            return False
        if (
            isinstance(stmt, cst.If)
            and stmt.orelse is None
            and _is_tracer_test(stmt.test, name, qualify, helpers)
            and isinstance(stmt.body, cst.IndentedBlock)
            and stmt.body.body
            and isinstance(stmt.body.body[-1], cst.SimpleStatementLine)
            and any(isinstance(small, (cst.Raise, cst.Return)) for small in stmt.body.body[-1].body)
        ):
            return True
    return False


def guarded_in(own: Iterable[ast.AST], qualify: Callable[[ast.AST], str | None]) -> dict[int, set[str]]:
    """`never_traced_at` on the stdlib AST, for the screens: id of each node of a function's own
    body under a guarded branch (`own`: its nodes, not nested scopes') -> the names that hold no
    tracer there. It recognises only what `never_traced_at` does, and a string spelled plainly
    (`'shape'`, `"shape"`: the stdlib tree joins `'sh' 'ape'`, which libcst does not evaluate)."""
    out: dict[int, set[str]] = {}
    for node in own:
        if type(node) is not ast.If and type(node) is not ast.IfExp:
            continue
        test = node.test
        negated = type(test) is ast.UnaryOp and type(test.op) is ast.Not
        for name in _guard_names(test, qualify):  # `hasattr(x, "shape")`, `isinstance(x, Tracer)`: else
            _mark(node.orelse, name, out)
        if negated:
            for name in _tracer_test_names(test.operand, qualify):  # `not isinstance(x, Tracer)`: body
                _mark(node.body, name, out)
        for name in _concrete_test_names(test, qualify):  # `isinstance(x, np.ndarray)`: body
            _mark(node.body, name, out)
    return out


def _concrete_test_names(test: ast.AST, qualify) -> list[str]:
    """`isinstance(x, C)` or `isinstance(x[i], C)` with every class in `CONCRETE_CLASSES`: [x]."""
    if type(test) is not ast.Call or type(test.func) is not ast.Name or test.func.id != "isinstance":
        return []
    if test.keywords or len(test.args) != 2:
        return []
    subject, what = test.args
    if type(subject) is ast.Subscript:
        subject = subject.value
    if type(subject) is not ast.Name:
        return []
    classes = what.elts if type(what) is ast.Tuple else [what]
    return [subject.id] if classes and all(qualify(c) in CONCRETE_CLASSES for c in classes) else []


def _guard_names(test: ast.AST, qualify) -> list[str]:
    if type(test) is not ast.Call or type(test.func) is not ast.Name or test.keywords or len(test.args) != 2:
        return []
    subject, what = test.args
    if type(subject) is not ast.Name:
        return []
    if test.func.id == "hasattr":
        plain = (
            type(what) is ast.Constant and isinstance(what.value, str) and what.value in ARRAY_ATTRS
            and what.lineno == what.end_lineno and what.end_col_offset - what.col_offset == len(what.value) + 2
        )
        return [subject.id] if plain else []
    return _tracer_test_names(test, qualify)


def _tracer_test_names(test: ast.AST, qualify) -> list[str]:
    if type(test) is not ast.Call or type(test.func) is not ast.Name or test.func.id != "isinstance":
        return []
    if test.keywords or len(test.args) != 2 or type(test.args[0]) is not ast.Name:
        return []
    what = test.args[1]
    classes = what.elts if type(what) is ast.Tuple else [what]
    return [test.args[0].id] if any(qualify(c) in TRACER_CLASSES for c in classes) else []


def _mark(branch, name: str, out: dict[int, set[str]]) -> None:
    """Every node of `branch` (a node or a list of statements) up to the nested defs and lambdas,
    where `never_traced_at` stops climbing."""
    stack = list(branch) if isinstance(branch, list) else [branch]
    while stack:
        node = stack.pop()
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            continue
        out.setdefault(id(node), set()).add(name)
        stack.extend(astscan.children(node))


def _has_array_attr(test: cst.BaseExpression, name: str) -> bool:
    """`hasattr(name, "shape")` (or dtype/ndim/size)."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr"):
        return False
    args = test.args
    return (
        len(args) == 2
        and _is_name(args[0].value, name)
        and isinstance(args[1].value, cst.SimpleString)
        and args[1].value.evaluated_value in ARRAY_ATTRS
    )


def _is_tracer_test(test: cst.BaseExpression, name: str, qualify, helpers=frozenset()) -> bool:
    """`isinstance(name, jax.core.Tracer)` (the base class of every tracer, as jax spells it), also
    in a tuple of classes (`isinstance(alpha, (jax.core.Tracer, jnp.ndarray))`: false for a tracer
    never, so `not` of it holds no tracer; imewei/rheojax@4c2a4c0 rheojax/utils/mittag_leffler.py:102),
    or `helper(name)` of one of `helpers`."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name)):
        return False
    if test.func.value in helpers:
        return len(test.args) == 1 and not test.args[0].star and _is_name(test.args[0].value, name)
    if test.func.value != "isinstance":
        return False
    if len(test.args) != 2 or not _is_name(test.args[0].value, name):
        return False
    what = test.args[1].value
    classes = [e.value for e in what.elements] if isinstance(what, cst.Tuple) else [what]
    return any((qualify(c) or "") in TRACER_CLASSES for c in classes)


def _is_concrete_test(test: cst.BaseExpression, name: str, qualify) -> bool:
    """`_concrete_test_names` on libcst: `isinstance(name, C)` / `isinstance(name[i], C)`, C concrete."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"):
        return False
    if len(test.args) != 2 or any(a.keyword is not None or a.star for a in test.args):
        return False
    subject, what = test.args[0].value, test.args[1].value
    if isinstance(subject, cst.Subscript):
        subject = subject.value
    if not _is_name(subject, name):
        return False
    classes = [e.value for e in what.elements] if isinstance(what, cst.Tuple) else [what]
    return bool(classes) and all((qualify(c) or "") in CONCRETE_CLASSES for c in classes)


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name
