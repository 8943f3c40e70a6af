import libcst as cst
import pytest

from jaxfix.analysis.names import ImportMap
from jaxfix.model import ImportRequest


def qualify(source: str, expr: str) -> str | None:
    module = cst.parse_module(source)
    return ImportMap.from_module(module).qualify(cst.parse_expression(expr))


@pytest.mark.parametrize(
    "source, expr, expected",
    [
        ("import jax\n", "jax.jit", "jax.jit"),
        ("import jax as jx\n", "jx.jit", "jax.jit"),
        ("from jax import jit as J\n", "J", "jax.jit"),
        ("import jax.numpy as jnp\n", "jnp.where", "jax.numpy.where"),
        ("from functools import cached_property as cp\n", "cp", "functools.cached_property"),
        ("from flax import struct\n", "struct.PyTreeNode", "flax.struct.PyTreeNode"),
        ("import equinox as eqx\n", "eqx.Module", "equinox.Module"),
        ("x = 1\n", "jit", "jit"),
        ("import jax\n", "f(x).y", None),
    ],
)
def test_qualify(source, expr, expected):
    assert qualify(source, expr) == expected


def test_reference_uses_existing_spelling():
    names = ImportMap.from_module(cst.parse_module("import jax\n"))
    assert names.reference("jax.lax.cond") == ("jax.lax.cond", ())
    names = ImportMap.from_module(cst.parse_module("from jax import lax\n"))
    assert names.reference("jax.lax.cond") == ("lax.cond", ())


def test_reference_asks_for_the_conventional_import():
    names = ImportMap.from_module(cst.parse_module("x = 1\n"))
    assert names.reference("jax.numpy.where") == ("jnp.where", (ImportRequest("jax.numpy", alias="jnp"),))
    assert names.reference("jax.lax.cond") == ("lax.cond", (ImportRequest("jax", name="lax"),))


def test_reference_avoids_a_name_already_taken():
    names = ImportMap.from_module(cst.parse_module("lax = 3\n"))
    text, imports = names.reference("jax.lax.cond")
    assert text == "jax.lax.cond" and imports == (ImportRequest("jax"),)
