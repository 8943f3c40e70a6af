"""Which local names are certainly bound when a statement runs.

A Python `if` reads a name only on the path that takes its branch; the `lax.cond`/`jnp.where`
rewrite passes every name its branches read as an operand (or evaluates both sides), so a name
an earlier `if` binds on some paths only is read on every path after the rewrite. When that
earlier condition is false the rewrite raises `NameError` where the original ran
(google/tunix@c7d8950:tunix/models/qwen3/model.py:997 reads `global_send_sizes`, bound under an
earlier `if num_ep > 1:`). `maybe_unbound_before` names such locals, so a fix can be held back.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.body_facts import assigned_names_in, assigned_names_in_small, assigned_names_in_target


def maybe_unbound_before(func: cst.FunctionDef, stmt: cst.CSTNode) -> set[str]:
    """Locals of `func` (bound somewhere in it, not parameters) that some path reaching `stmt`
    leaves unbound. Empty when `stmt` is not found in `func`'s own body."""
    params = func.params
    given = {
        p.name.value
        for p in (*params.posonly_params, *params.params, *params.kwonly_params)
    }
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            given.add(star.name.value)
    bound = _bound_on_path(list(func.body.body), stmt)
    if bound is None:
        return set()
    return assigned_names_in(list(func.body.body)) - given - bound


def _bound_on_path(block: list[cst.BaseStatement], stmt: cst.CSTNode) -> set[str] | None:
    """Names certainly bound before `stmt` runs, walking down from `block`; None if not inside."""
    bound: set[str] = set()
    for s in block:
        if s is stmt:
            return bound
        inner = _descend(s, stmt)
        if inner is not None:
            return bound | inner
        bound |= _certainly_binds(s)
    return None


def _descend(s: cst.CSTNode, stmt: cst.CSTNode) -> set[str] | None:
    """Certainly-bound names inside compound statement `s` on the way to `stmt`."""
    if isinstance(s, cst.If):
        found = _bound_on_path(list(s.body.body), stmt)
        if found is not None:
            return found
        orelse = s.orelse
        if isinstance(orelse, cst.If):
            return _descend(orelse, stmt) if orelse is not stmt else set()
        if isinstance(orelse, cst.Else):
            return _bound_on_path(list(orelse.body.body), stmt)
        return None
    if isinstance(s, cst.For):
        found = _bound_on_path(list(s.body.body), stmt)
        return None if found is None else found | assigned_names_in_target(s.target)
    if isinstance(s, cst.With):
        found = _bound_on_path(list(s.body.body), stmt)
        if found is None:
            return None
        return found | {n for item in s.items if item.asname for n in assigned_names_in_target(item.asname.name)}
    if isinstance(s, (cst.While, cst.Try)):
        found = _bound_on_path(list(s.body.body), stmt)
        if found is not None:
            return found
        if isinstance(s, cst.Try):
            for handler in s.handlers:
                found = _bound_on_path(list(handler.body.body), stmt)
                if found is not None:
                    return found
        return None
    return None


def _certainly_binds(s: cst.BaseStatement) -> set[str]:
    """Names statement `s` binds on every path through it that continues to the next statement."""
    if isinstance(s, cst.SimpleStatementLine):
        out: set[str] = set()
        for small in s.body:
            if isinstance(small, cst.AnnAssign) and small.value is None:
                continue  # `x: int` binds nothing
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    name = alias.asname.name if alias.asname else alias.name
                    if isinstance(name, cst.Name):
                        out.add(name.value)
                    elif isinstance(name, cst.Attribute):  # `import a.b` binds `a`
                        base = name
                        while isinstance(base, cst.Attribute):
                            base = base.value
                        if isinstance(base, cst.Name):
                            out.add(base.value)
                continue
            out |= assigned_names_in_small(small)
        return out
    if isinstance(s, (cst.FunctionDef, cst.ClassDef)):
        return {s.name.value}
    if isinstance(s, cst.With):
        out = {n for item in s.items if item.asname for n in assigned_names_in_target(item.asname.name)}
        for inner in s.body.body:
            out |= _certainly_binds(inner)
        return out
    if isinstance(s, cst.If) and s.orelse is not None:
        body = set().union(*(_certainly_binds(x) for x in s.body.body)) if s.body.body else set()
        orelse = s.orelse
        other = _certainly_binds(orelse) if isinstance(orelse, cst.If) else (
            set().union(*(_certainly_binds(x) for x in orelse.body.body)) if orelse.body.body else set()
        )
        return body & other
    return set()
