"""Names a function reads only as a callable or an object, never as data (JAX404's stale reads).

A module-level name rebound after a trace is read stale by the compiled function; whether that
changes a result depends on what the name holds. When traced code only calls it (`opt_update(i, g,
s)`, `get_params(s)`) or reads attributes of it (`optimizer.update`, `model.apply`, `env.reset`),
it holds a function or an object: an optimizer, a model, an environment. A notebook or script
that rebinds one of those almost always passes arguments built with it (a new `opt_state`, new
params, a new batch size): a different pytree structure or shape, so jit traces again and reads
the new value, or the new object equals the old one (`adam(lr)` with the same `lr`). On the
twelve spent pools of public code, every stale-read finding on such a name was wrong (lagrangian_nns'
`opt_update`/`get_params`, jaxKAN's `optimizer`, probml's `get_params`/`opt_update`, rebayes'
`model`, neural-tangents' `apply_fn`, learned_optimization's `task`/`opt`), while every real one
read data: a number (`x + g`, `counter`), a loop variable passed on (`update_fun(k, ...)`), an
array (`next_obs`), a PRNG key (`random.split(rng, 2)`). So a stale read is reported only for a
name the function reads as data somewhere.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.static_values import ARRAY_ATTRIBUTES
from jaxfix.analysis.walk import walk


def object_uses(node: cst.CSTNode) -> frozenset[cst.Name]:
    """The `Name` nodes under `node` read as a callable (`f(...)`) or as the object of an attribute
    that is no array attribute (`opt.update`, not `x.shape`/`x.at`)."""
    found: set[cst.Name] = set()

    class V(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            if isinstance(n.func, cst.Name):
                found.add(n.func)

        def visit_Attribute(self, n: cst.Attribute) -> None:
            if isinstance(n.value, cst.Name) and n.attr.value not in ARRAY_ATTRIBUTES:
                found.add(n.value)

    walk(node, V())
    return frozenset(found)


def read_as_data(reads: list[cst.Name], objects: frozenset[cst.Name]) -> bool:
    """Some read among `reads` (the `Name` nodes of one name) uses the value itself: an operand,
    an argument, a subscripted or array-attribute read (not only called or used as an object)."""
    return any(n not in objects for n in reads)
