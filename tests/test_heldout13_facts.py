"""Two facts the blind pool heldout13 showed after its measurement (issue #29), each from the real
code beside its buggy twin, which stays reported."""

import ast
import textwrap

import libcst as cst

from jaxfix.analysis.names import ImportMap
from jaxfix.engine import analyze
from jaxfix.engine.config import Config

# imewei/xpcsjax@b810d8577a8b core/jax_backend.py: a library that runs without JAX binds `jnp` to
# NumPy only in the `except ImportError:` fallback; wherever a trace happens JAX is installed, so
# `jnp.clip` in jitted code is JAX's (19 JAX402 false alarms there, 16 with safe fixes)
FALLBACK = """
try:
    import jax
    import jax.numpy as jnp
except ImportError:
    import numpy as jnp

@jax.jit
def clip(x):
    return jnp.clip(jnp.atleast_1d(x), 0.0, 1.0)
"""
# the buggy twin: NumPy under its own name on the traced value
NUMPY_ON_TRACER = FALLBACK.replace("import numpy as jnp", "import numpy as jnp\nimport numpy as np").replace(
    "return jnp.clip(jnp.atleast_1d(x), 0.0, 1.0)", "return np.clip(x, 0.0, 1.0)"
)


def _codes(source: str, preview: bool = False) -> list[tuple[str, int]]:
    result = analyze(textwrap.dedent(source), "lib.py", Config(select=("ALL",), preview=preview))
    assert result.error is None, result.error
    return [(f.code, f.line) for f in result.findings]


def test_an_import_error_fallback_does_not_rebind_the_jax_import():
    for imports in (ImportMap.from_module(cst.parse_module(FALLBACK)), ImportMap._from_ast(ast.parse(FALLBACK))):
        assert imports.bindings["jnp"] == "jax.numpy"
    assert _codes(FALLBACK, preview=True) == []
    assert _codes(NUMPY_ON_TRACER, preview=True) == [("JAX402", 11)]  # JAX402 is a preview rule


def test_a_fallback_that_binds_a_new_name_is_kept():
    source = "try:\n    import orjson\nexcept ImportError:\n    import json as orjson\n    import pickle\n"
    assert ImportMap.from_module(cst.parse_module(source)).bindings.get("pickle") == "pickle"
    assert ImportMap._from_ast(ast.parse(source)).bindings.get("pickle") == "pickle"


# imewei/xpcsjax@b810d8577a8b core/jax_backend.py:518: an eager-only guard whose `float()` raises
# under a trace and is caught ("self-disables during tracing"): the code handles its own trace,
# shown only in preview mode (traced_control_flow.evidence, path `handled`)
GUARDED = """
import jax
import jax.numpy as jnp

@jax.jit
def integrate(t, dt):
    grid = jnp.arange(100) * dt
    try:
        extent = float(grid[-1])
    except Exception:
        extent = None
    return jnp.sum(grid) if extent is None else jnp.sum(grid) * 0
"""
UNGUARDED = GUARDED.replace("    try:\n        extent = float(grid[-1])\n    except Exception:\n        extent = None\n",
                            "    extent = float(grid[-1])\n")


def test_a_conversion_whose_error_is_handled_is_preview(tmp_path):
    import jax
    import pytest
    from fixture_cases import load_as_module

    guarded = load_as_module(tmp_path / "guarded.py", textwrap.dedent(GUARDED))
    assert float(guarded.integrate(1.0, 0.1)) == pytest.approx(495.0)  # runs under jit: the error is handled
    unguarded = load_as_module(tmp_path / "unguarded.py", textwrap.dedent(UNGUARDED))
    with pytest.raises(jax.errors.ConcretizationTypeError):
        unguarded.integrate(1.0, 0.1)
    assert _codes(GUARDED) == []
    assert [c for c, _ in _codes(GUARDED, preview=True)] == ["JAX304"]
    assert [c for c, _ in _codes(UNGUARDED)] == ["JAX304"]
    # a handler for another error does not catch it
    assert [c for c, _ in _codes(GUARDED.replace("except Exception:", "except KeyError:"))] == ["JAX304"]
