"""A static field declared through a project's own alias of a field function with the mark bound,
`nonpytree_field = functools.partial(flax.struct.field, pytree_node=False)` (issue #29 item 3: the
project's static-field helpers recognised by what they do). The alias is jaxrl_m's; ogbench
(seohongpark/ogbench@1d41409:impls/utils/flax_utils.py:13) imports it into every agent, whose
`@jax.jit update` branches on `self.config[...]`: 22 false JAX301/305 on heldout9 before this.
Each case beside its buggy twin (the same field without the mark), which is still reported."""

from __future__ import annotations

import textwrap
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from fixture_cases import load_as_module
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.project import build_project_index

ALIAS = """
import functools

import flax

nonpytree_field = functools.partial(flax.struct.field, pytree_node=False)
"""

AGENT = """
from typing import Any

import flax
import jax
import jax.numpy as jnp


class Agent(flax.struct.PyTreeNode):
    scale: Any
    config: Any = nonpytree_field()

    @jax.jit
    def update(self, batch):
        if self.config["min_q"]:
            return jnp.min(batch * self.scale)
        return jnp.mean(batch * self.scale)
"""


def _codes(source: str, path: str = "agent.py", project=None) -> list[tuple[str, int]]:
    """With `--preview`: the twins test an item of a field (`self.config["min_q"]`), the truth of a
    value the file does not show to be an array (the `truthiness` path of JAX301)."""
    result = analyze(textwrap.dedent(source), path, Config(select=("ALL",), preview=True), project=project)
    return [(f.code, f.line) for f in result.findings]


def test_an_alias_in_the_same_module_makes_the_field_static():
    source = ALIAS + AGENT
    assert _codes(source) == []
    mod = load_as_module(Path("alias_agent.py"), source)
    agent = mod.Agent(scale=jnp.float32(2.0), config={"min_q": True})
    np.testing.assert_allclose(agent.update(jnp.arange(1.0, 4.0)), 2.0)  # runs under jit as written
    unmarked = source.replace("config: Any = nonpytree_field()", "config: Any = flax.struct.field()")
    assert _codes(unmarked) == [("JAX301", 21)]


def test_an_alias_imported_from_another_module_needs_the_project(tmp_path):
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("")
    (tmp_path / "utils" / "flax_utils.py").write_text(ALIAS)
    agent = tmp_path / "agent.py"
    source = "from utils.flax_utils import nonpytree_field\n" + AGENT
    agent.write_text(source)
    files = [str(agent), str(tmp_path / "utils" / "__init__.py"), str(tmp_path / "utils" / "flax_utils.py")]
    assert _codes(source, str(agent), build_project_index(files)) == []
    # without the index the import is out of sight: the field counts as a leaf, as before
    assert _codes(source, str(agent)) == [("JAX301", 16)]
    # an alias that binds no static mark makes a leaf: still reported with the index
    (tmp_path / "utils" / "flax_utils.py").write_text(ALIAS.replace(", pytree_node=False", ""))
    assert _codes(source, str(agent), build_project_index(files)) == [("JAX301", 16)]
