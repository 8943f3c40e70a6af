"""jit placement: a compiling transform (`jax.jit`, `jax.pmap`, `eqx.filter_jit`) made where it
runs repeatedly. JAX201 `jit_in_loop` (a fresh callable in a loop), JAX202 `jit_per_call` (a
callable made in the function body, on every call), JAX203 `jit_rewrap_in_loop` (the same
module function re-wrapped in a loop); `planner` finds the sites and plans the hoists they
share, `screen` is their stdlib-AST screen.
"""

from codemods._command import commands_named
from codemods.jit_placement.jit_in_loop import JitInLoopRule
from codemods.jit_placement.jit_per_call import JitPerCallRule
from codemods.jit_placement.jit_rewrap_in_loop import JitRewrapInLoopRule

# `JitPlacementCommand` (the family's command before the split) runs all three rules:
# `python -m libcst.tool codemod jit_placement.JitPlacementCommand PATH`
__getattr__ = commands_named(__name__, {"JitPlacementCommand": (JitInLoopRule, JitPerCallRule, JitRewrapInLoopRule)})
