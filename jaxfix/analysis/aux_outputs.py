"""What `jax.value_and_grad(f, has_aux=True)(...)` hands back: `f`'s own auxiliary output.

The aux output of `value_and_grad`/`grad` with `has_aux=True` is exactly the second element `f`
returned, pytree structure included: a Python tuple `f` built stays a tuple, whose truth value
is its length, known at trace time (ACEsuit/mace-jax@9fe59d9 mace_jax/tools/train.py:859: `(loss,
(batch_metrics, head_metrics)), grad = jax.value_and_grad(_loss_fn, has_aux=True)(params)`, then
`if head_metrics:` on the per-head tuple `_loss_fn` returns). `returned_elements` maps a name
bound by destructuring such a call to the expressions `f`'s returns put at that place.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.transforms import AUX_RESULT_PREFIX
from jaxfix.analysis.walk import walk


def _has_aux(call: cst.Call) -> bool:
    return any(
        a.keyword is not None
        and a.keyword.value == "has_aux"
        and isinstance(a.value, cst.Name)
        and a.value.value == "True"
        for a in call.args
    )


def _paths(target: cst.BaseExpression, prefix: tuple[int, ...] = ()) -> dict[str, tuple[int, ...]]:
    if isinstance(target, cst.Name):
        return {target.value: prefix}
    if isinstance(target, (cst.Tuple, cst.List)) and not any(
        isinstance(el, cst.StarredElement) for el in target.elements
    ):
        out: dict[str, tuple[int, ...]] = {}
        for i, el in enumerate(target.elements):
            out.update(_paths(el.value, (*prefix, i)))
        return out
    return {}


def _at(e: cst.BaseExpression, path: tuple[int, ...]) -> cst.BaseExpression | None:
    for i in path:
        if not isinstance(e, (cst.Tuple, cst.List)) or i >= len(e.elements):
            return None
        el = e.elements[i]
        if isinstance(el, cst.StarredElement):
            return None
        e = el.value
    return e


def _returns(fn: cst.FunctionDef) -> list[cst.Return]:
    found: list[cst.Return] = []

    class R(cst.CSTVisitor):
        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return n is fn

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

        def visit_Return(self, n: cst.Return) -> None:
            found.append(n)

    walk(fn, R())
    return found


def returned_elements(
    qualify, scope: cst.FunctionDef, target: cst.BaseExpression, value: cst.BaseExpression
) -> dict[str, list[tuple[cst.FunctionDef, cst.BaseExpression]]]:
    """For `target = T(f, has_aux=True)(...)` (`T` value_and_grad or grad, `f` defs of `scope` by
    that name): each target name inside the aux output -> (def, expression) for every `return`
    of every such def; a name no return shows is left out."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Call)):
        return {}
    transform = value.func
    prefix = AUX_RESULT_PREFIX.get(qualify(transform.func) or "")
    if (
        prefix is None
        or not _has_aux(transform)
        or not transform.args
        or not isinstance(transform.args[0].value, cst.Name)
    ):
        return {}
    name = transform.args[0].value.value
    defs = [s for s in walk_defs(scope) if s.name.value == name]
    if not defs:
        return {}
    aux_path = (*prefix, 1)
    out: dict[str, list[tuple[cst.FunctionDef, cst.BaseExpression]]] = {}
    for var, path in _paths(target).items():
        if path[: len(aux_path)] != aux_path:
            continue
        inner = (1, *path[len(aux_path) :])
        found = []
        for d in defs:
            returns = _returns(d)
            for r in returns:
                e = _at(r.value, inner) if r.value is not None else None
                if e is None:
                    found = None
                    break
                found.append((d, e))
            if found is None or not returns:
                found = None
                break
        if found:
            out[var] = found
    return out


def walk_defs(scope: cst.FunctionDef) -> list[cst.FunctionDef]:
    """The defs nested directly in `scope`'s body (at any statement depth, not inside other defs)."""
    found: list[cst.FunctionDef] = []

    class D(cst.CSTVisitor):
        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            if n is scope:
                return True
            found.append(n)
            return False

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, n: cst.ClassDef) -> bool:
            return False

    walk(scope, D())
    return found
