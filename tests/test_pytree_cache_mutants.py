"""Decision logic of codemods/pytree_cache/ that the fixture tests left unpinned (found by
mutation testing: scripts/mutation.sh). Each case names the branch it pins."""

from __future__ import annotations

import pytest

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

MODEL = """\
import functools

import jax
import jax.numpy as jnp
from flax import struct


class Model(struct.PyTreeNode):
    w: jax.Array

    @functools.cached_property
    def norm(self) -> jax.Array:
        return jnp.sum(jnp.sin(self.w))


def touch(m, v):
    {line}
"""

MANUAL = "assigns or deletes"


def _jax101(line: str):
    result = analyze(MODEL.format(line=line), "m.py", Config(unsafe_fixes=True).with_options("pytree-cache", **{"unproven-pytrees": True}), fix=True)
    assert result.error is None
    (finding,) = [f for f in result.findings if f.code == "JAX101"]
    return finding


@pytest.mark.parametrize(
    "line",
    [
        "m.norm = v",
        "del m.norm",
        "setattr(m, 'norm', v)",
        "delattr(m, 'norm')",
    ],
)
def test_cache_set_or_invalidated_by_hand_is_manual(line):
    finding = _jax101(line)
    assert finding.fix.safety.value == "manual" and MANUAL in finding.fix.title


@pytest.mark.parametrize(
    "line",
    [
        "return m.norm",  # reading is fine
        "setattr(m, 'other', v)",  # another attribute
        "delattr(m, 'other')",
        "getattr(m, 'norm')",  # not a setter
        "setattr(m, v, 'norm')",  # the name is not the second argument
        "m.other = v",
    ],
)
def test_other_uses_keep_the_fix(line):
    finding = _jax101(line)
    assert finding.fix is not None and MANUAL not in finding.fix.title
