"""`could_match` of the traced-control-flow rule: cheap, and never rejects a file the analysis would
find a traced function in (checked against the analysis itself on every fixture and test case)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from codemods.traced_control_flow import TracedControlFlowRule
from jaxfix.analysis.jit_contexts import JitContexts
from jaxfix.analysis.names import ImportMap

RULE = TracedControlFlowRule()
ROOT = Path(__file__).resolve().parent.parent


def has_traced_function(source: str) -> bool:
    module = cst.parse_module(source)
    return any(True for _ in JitContexts(module, ImportMap.from_module(module)).traced_functions())


ACCEPTED = [
    "import jax\n@jax.jit\ndef f(x):\n    return x if x else x\n",
    "from jax import jit as J\n@J\ndef f(x):\n    return x if x else x\n",
    "import jax, functools\n@functools.partial(jax.jit, static_argnums=1)\ndef f(x, n):\n    return x if n else x\n",
    "import jax\ndef f(x):\n    return x if x else x\ng = jax.jit(jax.grad(f))\n",
    "import jax\nfrom functools import partial\ndef f(x, n):\n    return x if n else x\ng = jax.jit(partial(f, n=2))\n",
    "from jax import lax\ndef body(i, c):\n    return c if i else c\nlax.fori_loop(0, 3, body, 0.0)\n",
    "from jax import lax\ndef a(x):\n    return x\ndef b(x):\n    return -x if x else x\nlax.switch(0, [a, b], 1.0)\n",
    "from jax.lax import map\ndef f(x):\n    return x if x else x\nmap(f, xs)\n",
    "import jax\nh = jax.vmap(lambda x: x if x else x)\n",
]

REJECTED = [
    # no transform reaches a function of the module
    "import jax\ndef f(x):\n    return x if x else x\ny = list(map(f, [1, 2]))\n",
    "import jax\ndef make(n):\n    return n\ndef g(reducer):\n    return jax.vmap(reducer)\n",
    "import jax\ndef f(x):\n    return x + 1\n",
]


@pytest.mark.parametrize("source", ACCEPTED)
def test_accepts_every_trace_entry_shape(source):
    assert RULE.could_match(ast.parse(source))
    assert has_traced_function(source)


@pytest.mark.parametrize("source", REJECTED)
def test_rejects_files_without_an_entry(source):
    assert not RULE.could_match(ast.parse(source))
    assert not has_traced_function(source)


def test_never_rejects_a_fixture_with_traced_functions():
    checked = 0
    for path in sorted((ROOT / "fixtures").glob("*/*.py")):
        source = path.read_text()
        if RULE.could_match(ast.parse(source)):
            continue
        checked += 1
        assert not has_traced_function(source), path
    assert checked > 0  # some fixtures (other families) are rejected, and rightly


def test_builtin_map_is_not_a_transform():
    source = textwrap.dedent("""
        def f(x):
            return x if x else x
        out = map(f, range(3))
        """)
    assert not RULE.could_match(ast.parse(source))
