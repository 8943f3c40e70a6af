"""Node searches the compile-cost rules (JAX501-JAX504) share, and which calls wait for a JAX value: the nodes of a kind in a function's
own body or anywhere under a node, and whether a function binds a name itself."""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.jit_contexts import FuncInfo
from jaxfix.analysis.traced import assigned_names, param_names
from jaxfix.analysis.walk import walk

# Calls that wait for their argument's value (it is copied to the host or printed).
BLOCKING_CALLS = frozenset(
    {
        "jax.block_until_ready",
        "jax.device_get",
        "numpy.asarray",
        "numpy.array",
        "numpy.asanyarray",
        "float",
        "int",
        "bool",
        "complex",
        "print",
        "repr",
        "str",
        "list",
        "tuple",
    }
)
BLOCKING_METHODS = frozenset({"block_until_ready", "item", "tolist", "__array__"})
# any NumPy function converts a JAX argument to a host array, which waits for it (`np.argmax(logits)`
# in vision_transformer's evaluation loop), except those that only read its metadata
BLOCKING_PREFIXES = ("numpy.",)
NUMPY_METADATA = frozenset({"numpy.shape", "numpy.ndim", "numpy.size", "numpy.result_type", "numpy.dtype", "numpy.iinfo", "numpy.finfo"})

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def own_nodes(node: cst.CSTNode, kind) -> list:
    """Nodes of `kind` in `node`, not descending into nested defs, lambdas or classes (the code that
    runs when `node` runs)."""
    return _collect(node, kind, enter_scopes=False)


def all_nodes(node: cst.CSTNode, kind) -> list:
    """Nodes of `kind` anywhere under `node` (itself included), in source order."""
    return _collect(node, kind, enter_scopes=True)


def _collect(node: cst.CSTNode, kind, *, enter_scopes: bool) -> list:
    out = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if not enter_scopes and n is not node and isinstance(n, _SCOPES):
                return False
            if isinstance(n, kind):
                out.append(n)
            return True

    walk(node, V())
    return out


def binds_locally(info: FuncInfo | None, name: str) -> bool:
    """`name` is a parameter or local of `info` or of a function enclosing it (so it is not the
    module-level name spelled the same)."""
    while info is not None:
        if name in param_names(info.node.params) or name in assigned_names(info.node):
            return True
        info = info.parent
    return False
