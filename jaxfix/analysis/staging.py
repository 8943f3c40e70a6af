"""Whether traced code is staged into a compiled program, or only runs on tracers op by op.

`jax.jit`, `pmap`, `shard_map` and the `lax` loop and branch bodies stage a function: its Python
runs once and the operations it records are compiled together, so a Python loop there becomes one
copy of its body per trip (JAX502). `jax.vmap` called outside any of those does not stage: the
function's Python runs on batch tracers and each operation is dispatched as it is reached, as in
plain eager code (google/neural-tangents@c17e770b:notebooks/neural_tangents_cookbook.ipynb,
`vmap(train_network)(ensemble_key)` at top level: its 10,000-trip loop compiles nothing).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts
from jaxfix.analysis.names import dotted_name
from jaxfix.analysis.transforms import EAGER_VMAPS


def runs_eagerly(
    jc: JitContexts,
    info: FuncInfo,
    qualify: Callable[[cst.BaseExpression], str | None],
    parent: Callable[[cst.CSTNode], cst.CSTNode | None],
) -> bool:
    """`info` is traced only by an eager `vmap` (`EAGER_VMAPS`): every reason it is traced is such
    a vmap, it is not jitted, nor entered from another module, nor defined in traced code; every
    call of it runs outside traced code; and every `vmap(f)` of it in the module is called on the
    spot (`vmap(f)(x)`: a mapped callable kept under a name might be jitted elsewhere)."""
    if info.jit_sites or info.called_from or not info.reasons:
        return False
    if not all(r.startswith("vectorised (") and r[len("vectorised (") : -1] in EAGER_VMAPS for r in info.reasons):
        return False
    if info.parent is not None and info.parent.in_trace:
        return False
    for site in jc.call_sites_of(info):
        if site.caller is not None and site.caller.in_trace:
            return False
        func = site.call.func
        if isinstance(func, cst.Call) and qualify(func.func) not in EAGER_VMAPS:
            return False
    for site in jc.calls:
        call = site.call
        if qualify(call.func) not in EAGER_VMAPS:
            continue
        first = next((a.value for a in call.args if a.keyword is None), None)
        if first is None or dotted_name(first) != info.name:
            continue
        if site.caller is not None and site.caller.in_trace:
            return False
        up = parent(call)
        if not (isinstance(up, cst.Call) and up.func is call):
            return False
    return True
