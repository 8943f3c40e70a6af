"""Compile and run cost: code that works but measures, compiles or embeds far more than it should.

- JAX501 `unblocked-timing` (unblocked_timing.py): a timed region reads the clock before its JAX
  work is done (asynchronous dispatch: it times the dispatch only).
- JAX502 `unrolled-python-loop-in-jit` (unrolled_python_loop_in_jit.py): a Python `for` over a
  large static `range` in traced code is unrolled into that many copies of its body.
- JAX503 `large-captured-constant` (large_captured_constant.py): a jitted function reads a large
  module-level array, embedded in the compiled program as a constant.

`timing_screen.py` is JAX501's stdlib screen with the clock facts it shares with the rule (the
rule module would pass 700 lines); what waits for a value is `jaxfix.analysis.host_sync`.
`nodes.py` holds the node searches the three share; static integers and array sizes come from
`jaxfix.analysis.shapes`.
"""

from __future__ import annotations

from codemods._command import commands_in_modules

# The libcst commands of the single module this package replaces keep their names
# (`python -m libcst.tool codemod compile_cost.UnblockedTimingCommand`).
__getattr__ = commands_in_modules(
    __name__,
    {
        "UnblockedTimingCommand": "unblocked_timing",
        "UnrolledLoopCommand": "unrolled_python_loop_in_jit",
        "LargeConstantCommand": "large_captured_constant",
    },
)
