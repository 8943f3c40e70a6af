"""Traced control flow: Python conditions and conversions on values traced under `jax.jit`.

JAX301 traced-if (`traced_if.py`), JAX302 traced-while (`traced_while.py`), JAX303 traced-range
(`traced_range.py`), JAX304 traced-to-python (`traced_to_python.py`), JAX305 traced-bool-op
(`traced_bool_op.py`), JAX307 traced-shape (`traced_shape.py`). They share the walk that finds
their sites (`sites.py`), the `static_argnames` fix (`static_args.py`) and the `jnp.where`
builder (`where.py`); JAX301's `jnp.where`/`lax.cond` rewrites of an `if` are `branch_rewrite.py`;
the loop rewriter is `jaxfix.rewriting.loops` (JAX502 uses it too).

`python -m libcst.tool codemod traced_control_flow.TracedControlFlowCommand` runs all six.
"""

from __future__ import annotations

from codemods._command import commands_named
from codemods.traced_control_flow.traced_bool_op import TracedBoolOpRule
from codemods.traced_control_flow.traced_if import TracedIfRule
from codemods.traced_control_flow.traced_range import TracedRangeRule
from codemods.traced_control_flow.traced_shape import TracedShapeRule
from codemods.traced_control_flow.traced_to_python import TracedToPythonRule
from codemods.traced_control_flow.traced_while import TracedWhileRule

RULES = (TracedIfRule, TracedWhileRule, TracedRangeRule, TracedToPythonRule, TracedBoolOpRule, TracedShapeRule)


# `TracedControlFlowCommand` (the family's command before the split) runs all six rules.
__getattr__ = commands_named(__name__, {"TracedControlFlowCommand": RULES})
