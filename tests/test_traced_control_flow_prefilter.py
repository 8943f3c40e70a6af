"""`could_match` of the traced-control-flow rules: the stdlib-AST trace screen admits every entry
shape the analysis follows when a reportable site is reached, and rejects correct traced code
(static arguments, shapes, `is None`, jax-internal imports) before any libcst parse. The
generic soundness check over every fixture is tests/test_screens.py."""

from __future__ import annotations

import ast
import textwrap

import pytest

from codemods.traced_control_flow import RULES
from jaxfix.engine import analyze
from jaxfix.engine.config import Config


class _Family:
    """The screens of the family's rules together (one rule per code since the split)."""

    rules = [rule() for rule in RULES]

    def could_match(self, tree: ast.Module) -> bool:
        return any(rule.could_match(tree) for rule in self.rules)


RULE = _Family()


def jax3_findings(source: str) -> list[str]:
    result = analyze(source, "m.py", Config(select=("JAX3",)))
    assert result.error is None
    return [f.code for f in result.findings]


ACCEPTED = [
    "import jax\n@jax.jit\ndef f(x):\n    return x if x else x\n",
    "from jax import jit as J\n@J\ndef f(x):\n    return x if x else x\n",
    "import jax, functools\n@functools.partial(jax.jit, static_argnums=1)\ndef f(x, n):\n    return n if x else x\n",
    "import jax\ndef f(x):\n    return x if x else x\ng = jax.jit(jax.grad(f))\n",
    "import jax\nfrom functools import partial\ndef f(x, n):\n    return x if x > n else x\ng = jax.jit(partial(f, n=2))\n",
    "from jax import lax\ndef body(i, c):\n    return c if i else c\nlax.fori_loop(0, 3, body, 0.0)\n",
    "from jax import lax\ndef a(x):\n    return x\ndef b(x):\n    return -x if x else x\nlax.switch(0, [a, b], 1.0)\n",
    "from jax.lax import map\ndef f(x):\n    return x if x else x\nmap(f, xs)\n",
    "import jax\nh = jax.vmap(lambda x: x if x else x)\n",
    # propagation: a helper called with a traced argument, a method, a nested function
    "import jax\ndef helper(v):\n    while v > 0:\n        v = v - 1\n    return v\n@jax.jit\ndef f(x):\n    return helper(x)\n",
    "import jax\nclass M:\n    def step(self, v):\n        return int(v)\n@jax.jit\ndef f(m, x):\n    return m.step(x)\n",
    "import jax\n@jax.jit\ndef f(x):\n    def inner():\n        return x[: x.sum()]\n    return inner()\n",
    "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    n = jnp.sum(x)\n    for i in range(n):\n        x = x + i\n    return x\n",
]

REJECTED = [
    # no transform reaches a function of the module
    "import jax\ndef f(x):\n    return x if x else x\ny = list(map(f, [1, 2]))\n",
    "import jax\ndef make(n):\n    return n\ndef g(reducer):\n    return jax.vmap(reducer)\n",
    "import jax\ndef f(x):\n    return x + 1\n",
    # traced functions whose control flow is static
    "import jax, functools\n@functools.partial(jax.jit, static_argnums=1)\ndef f(x, n):\n    return x if n else x\n",
    "import jax\n@jax.jit\ndef f(x, axis=None):\n    if axis is None:\n        return x\n    return x\n",
    "import jax\n@jax.jit\ndef f(x):\n    if x.ndim > 1 and x.shape[0]:\n        return x[: x.shape[0] // 2]\n    return x\n",
    "import jax\n@jax.jit\ndef f(*xs):\n    if not xs:\n        return 0\n    for i, x in enumerate(xs):\n        if i == 0:\n            pass\n    return xs[0]\n",
    # jax's own code: an internal or relative import of jit is not `jax.jit` for the rules
    "from jax._src.api import jit\n@jit\ndef f(x):\n    return x if x else x\n",
    "from .api import jit\n@jit\ndef f(x):\n    return x if x else x\n",
]


@pytest.mark.parametrize("source", ACCEPTED)
def test_admits_files_with_a_traced_site(source):
    assert RULE.could_match(ast.parse(source))
    assert jax3_findings(source)


@pytest.mark.parametrize("source", REJECTED)
def test_rejects_correct_or_untraced_code(source):
    assert not RULE.could_match(ast.parse(source))
    assert not jax3_findings(source)


def test_builtin_map_is_not_a_transform():
    source = textwrap.dedent("""
        def f(x):
            return x if x else x
        out = map(f, range(3))
        """)
    assert not RULE.could_match(ast.parse(source))
