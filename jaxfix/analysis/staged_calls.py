"""Which jax functions are staged out under a trace whatever their inputs: the one table of them.

Inside `jit` even `jnp.ones(3)` is an operation recorded into the program, so its result is a
tracer although nothing traced went in. That holds for `jax.numpy`, `lax`, `random`, `nn`,
`scipy` and their `jax._src` twins (`STAGED_PREFIXES`) and a few named calls (`STAGED_CALLS`).
Other `jax.*` functions (utilities, dtype helpers, config) return whatever their arguments make
them, and the calls `static_values` lists as static stay static. `traced.FunctionFacts` asks
`is_staged_call_name` about a call with no traced argument; the timing and trace-time rules ask
it whether a call does JAX work at all.
"""

from __future__ import annotations

from jaxfix.analysis.static_values import ARGUMENT_TYPED_CALLS, is_static_call_name

# jax modules whose functions are staged out under a trace even on constant inputs (`jnp.ones(3)`).
# Other `jax.*` names (utilities, dtype helpers, config, `jax._src` internals) return whatever
# their arguments make them: traced only when given a traced argument.
STAGED_PREFIXES = (
    "jax.numpy.",
    "jax.lax.",
    "jax.random.",
    "jax.nn.",
    "jax.scipy.",
    "jax.ops.",
    "jax.image.",
    "jax.experimental.pallas.",
    "jax._src.numpy.",
    "jax._src.lax.",
    "jax._src.random.",
    "jax._src.nn.",
    "jax._src.scipy.",
    "jax._src.pallas.",
)
STAGED_CALLS = frozenset({"jax.device_put", "jax.pure_callback", "jax.make_array_from_callback"})


def is_staged_call_name(qualname: str | None) -> bool:
    """A jax function that stages an operation out under a trace whatever its inputs."""
    if qualname is None or is_static_call_name(qualname) or qualname in ARGUMENT_TYPED_CALLS:
        return False
    return qualname in STAGED_CALLS or qualname.startswith(STAGED_PREFIXES)
