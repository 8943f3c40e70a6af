"""Selecting between branch values with `jnp.where`, the fix JAX301 prefers for cheap branches.

`jnp.where(c, a, b)` evaluates both sides, so it is chosen only when every side is cheap and
pure (names, arithmetic, elementwise `jax.numpy` functions, `CHEAP_JNP`). A side that is NaN or
infinite where it is not taken (`sqrt`, `log`, a division or a power of a traced value:
`UNSAFE_OPS`) would poison gradients through the untaken branch; its argument is replaced by a
safe value there (the double-where form).
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis import render
from jaxfix.analysis.body_facts import number_literal
from jaxfix.analysis.walk import walk
from jaxfix.rewriting.functions import FunctionRewrite

# elementwise jax.numpy functions that are cheap and pure enough to evaluate on both sides
CHEAP_JNP = frozenset(
    """abs absolute negative positive sign square sqrt cbrt exp exp2 expm1 log log1p log2 log10
    sin cos tan sinh cosh tanh arcsin arccos arctan arctan2 arcsinh arccosh arctanh maximum minimum
    clip where add subtract multiply divide true_divide floor_divide power float_power mod remainder
    floor ceil round rint trunc reciprocal logical_and logical_or logical_not isnan isinf isfinite
    asarray astype zeros_like ones_like full_like real imag conj hypot sinc""".split()
)
# ops whose untaken side can be NaN/inf (value or gradient): arg position -> safe stand-in
UNSAFE_OPS = {
    "sqrt": "1.0",
    "log": "1.0",
    "log2": "1.0",
    "log10": "1.0",
    "log1p": "0.0",
    "reciprocal": "1.0",
    "arcsin": "0.0",
    "arccos": "0.0",
    "arctanh": "0.0",
    "rsqrt": "1.0",
    "power": None,  # base only
    "float_power": None,
}


class WhereBuilder:
    """`jnp.where` chains inside the traced function of `fn`."""

    def __init__(self, fn: FunctionRewrite) -> None:
        self.fn = fn

    def where_chain(self, values, last, imports, hazards) -> str | None:
        """`jnp.where(c1, v1, jnp.where(c2, v2, last))` for `values` [(c1, v1), (c2, v2)]; None when a
        side is not cheap or is a tuple, list or dict. A promoted number literal goes to `hazards`."""
        exprs = [v for _, v in values] + [last]
        if not all(self.is_cheap(e) for e in exprs):
            return None
        if any(isinstance(e, (cst.Tuple, cst.List, cst.Dict)) for e in exprs):
            return None
        if literal_mismatch(exprs):
            hazards.append("a branch is a Python number and another an array: `jnp.where` promotes the number")
        where = self.fn.ref("jax.numpy.where", imports)
        text = self.fn.code_of(last)
        for test, value in reversed(values):
            pred_node = self.fn.predicate(test, imports)
            pred = render.code_of(self.fn.ctx.module, pred_node)
            taken = self.double_where(value, pred, True, imports)
            not_taken = self._not_taken(text, last if text == self.fn.code_of(last) else None, pred, imports)
            text = f"{where}({pred}, {taken}, {not_taken})"
        return text

    def _not_taken(self, text, node, pred, imports) -> str:
        """The false side: `node` double-where guarded, or the already nested chain `text`."""
        if node is None:
            return text
        return self.double_where(node, pred, False, imports)

    def double_where(self, e: cst.BaseExpression, pred: str, taken_when_true: bool, imports) -> str:
        """`e` with the arguments of NaN-prone ops replaced by a safe value where `e` is not taken."""
        where = self.fn.ref("jax.numpy.where", imports)
        fn = self.fn
        replacements: dict[cst.CSTNode, cst.BaseExpression] = {}

        def guard(arg: cst.BaseExpression, safe: str) -> cst.BaseExpression:
            a = fn.code_of(arg)
            text = f"{where}({pred}, {a}, {safe})" if taken_when_true else f"{where}({pred}, {safe}, {a})"
            return fn.parse_expr(text)

        walk(e, _NanProneArguments(fn, replacements, guard))
        if not replacements:
            return self.fn.code_of(e)
        return render.code_of(self.fn.ctx.module, e.visit(_Replace(replacements)))

    def is_cheap(self, e: cst.BaseExpression) -> bool:
        """Cheap and pure enough to evaluate when not taken: names, arithmetic, `CHEAP_JNP` calls."""
        if isinstance(e, (cst.Name, cst.Integer, cst.Float, cst.Imaginary)):
            return True
        if isinstance(e, cst.Attribute):
            return self.is_cheap(e.value)
        if isinstance(e, cst.Subscript):
            return self.is_cheap(e.value) and all(
                isinstance(s.slice, cst.Index) and self.is_cheap(s.slice.value) for s in e.slice
            )
        if isinstance(e, cst.BinaryOperation):
            return self.is_cheap(e.left) and self.is_cheap(e.right) and not isinstance(e.operator, cst.MatrixMultiply)
        if isinstance(e, cst.UnaryOperation):
            return not isinstance(e.operator, cst.Not) and self.is_cheap(e.expression)
        if isinstance(e, cst.Comparison):
            return self.is_cheap(e.left) and all(self.is_cheap(c.comparator) for c in e.comparisons)
        if isinstance(e, cst.Call):
            q = self.fn.names.qualify(e.func) or ""
            if q.startswith("jax.numpy.") and q.split(".")[-1] in CHEAP_JNP:
                return all(self.is_cheap(a.value) and not a.star for a in e.args)
            return False
        return False


class _NanProneArguments(cst.CSTVisitor):
    """Maps each traced argument of a NaN-prone op in an expression to its guarded form
    (`WhereBuilder.double_where`; one class, not one per call)."""

    def __init__(self, fn, replacements: dict, guard) -> None:
        super().__init__()
        self.fn, self.replacements, self.guard = fn, replacements, guard

    def visit_Call(self, c: cst.Call) -> None:
        q = self.fn.names.qualify(c.func) or ""
        name = q.rsplit(".", 1)[-1]
        if q.startswith("jax.numpy.") and name in UNSAFE_OPS and c.args:
            a0 = c.args[0].value
            if self.fn.traced(a0, None):
                safe = UNSAFE_OPS[name] or "1.0"
                self.replacements[a0] = self.guard(a0, safe)

    def visit_BinaryOperation(self, b: cst.BinaryOperation) -> None:
        if isinstance(b.operator, (cst.Divide, cst.FloorDivide, cst.Modulo)) and self.fn.traced(b.right, None):
            if not isinstance(b.right, (cst.Integer, cst.Float)):
                self.replacements[b.right] = self.guard(b.right, "1")
        if isinstance(b.operator, cst.Power) and self.fn.traced(b.left, None):
            if not (isinstance(b.right, cst.Integer) and int(b.right.value, 0) >= 0):
                self.replacements[b.left] = self.guard(b.left, "1.0")


class _Replace(cst.CSTTransformer):
    """Replaces the nodes of `replacements` keeping their parentheses."""

    def __init__(self, replacements: dict) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original, updated):
        if original in self.replacements:
            rep = self.replacements[original]
            if isinstance(original, cst.BaseExpression) and original.lpar:
                rep = rep.with_changes(lpar=original.lpar, rpar=original.rpar)
            return rep
        return updated


def literal_mismatch(exprs) -> bool:
    """Some of `exprs` are Python number literals of a kind that an array or another literal would
    promote (an int next to an array, a bool next to a float): the selected dtype may differ."""
    kinds = set()
    for e in exprs:
        if e is None:
            continue
        lit = number_literal(e)
        kinds.add(lit if lit is not None else "array")
    return len(kinds) > 1 and kinds != {"float", "array"}

