"""Compile and run cost: code that works but measures, compiles or embeds far more than it should.

- JAX501 `unblocked-timing` (unblocked_timing.py): a timed region reads the clock before its JAX
  work is done (asynchronous dispatch: it times the dispatch only).
- JAX502 `unrolled-python-loop-in-jit` (unrolled_python_loop_in_jit.py): a Python `for` over a
  large static `range` in traced code is unrolled into that many copies of its body.
- JAX503 `large-captured-constant` (large_captured_constant.py): a jitted function reads a large
  module-level array, embedded in the compiled program as a constant.
- JAX504 `unblocked-timing-magic` (unblocked_timing_magic.py): IPython's `%timeit`/`%time` timing
  JAX work that nothing waits for.
- JAX505 `timed-first-call` (timed_first_call.py): `%time` of a jitted function's first call, which
  times its compile.

`timing_checker.py` is JAX501's walk (its regions, what waits, the fix), `timing_screen.py` its stdlib
screen with the clock facts it shares with the rules, `timed_regions.py` the region shapes; what waits for a value is `jaxfix.analysis.host_sync`, read by
JAX501 and by `magics.py`, which reads the timing magics (as jupytext writes them, the form
notebooks are analysed in) for JAX504 and JAX505. `nodes.py` holds the node searches the rules
share; static integers and array sizes come from
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
