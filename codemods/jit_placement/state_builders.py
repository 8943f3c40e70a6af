"""Jits of an initialiser: a transform of a framework's `init` (`transforms.INITIALISER_METHODS`).

`jax.jit(tx.init, backend="cpu")(params)`, `jax.jit(model.init)(rng, x)`, a nested
`def init_fn(rng): return model.init(rng, x)` pjitted with `out_shardings`: a fresh jit like these
inside a function compiles once per call of a setup function (create the train state, restore a
checkpoint, shard a model when it is loaded), which runs once per model, not once per step. On
the spent blind pools, 9 JAX202 findings jitted an initialiser and none was real (scenic's
`init_state`/`restore_train_state`, JAXSeq's `shard_*_from_config`, neuralgcm); without a caller in the module that runs the function repeatedly, JAX202 leaves
them alone. A placement option alone (`out_shardings=`) is no such mark: paxml's per-call
`pjit(_identity, out_shardings=...)` and maxtext's per-request `init_decode_state` were real.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.transforms import INITIALISER_METHODS, PARTIAL_NAMES


def jits_an_initialiser(target: cst.CSTNode | None, qualify) -> bool:
    """`target` (the transformed callable, or the nested def) is `tx.init`, `partial(model.init,
    ...)`, or a nested def whose body calls `<obj>.init(...)`."""
    while isinstance(target, cst.Call) and qualify(target.func) in PARTIAL_NAMES and target.args:
        target = target.args[0].value
    if isinstance(target, cst.Attribute):
        return target.attr.value in INITIALISER_METHODS
    if isinstance(target, cst.FunctionDef):
        found = False

        class _V(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                nonlocal found
                if isinstance(node.func, cst.Attribute) and node.func.attr.value in INITIALISER_METHODS:
                    found = True

        target.body.visit(_V())
        return found
    return False
