"""Which parameters of a `lax.cond` branch are traced: the branch's operands only. Two shapes of
jax-md's `partition.py` (vendored by tumaer/jax-sph@<heldout16> jax_sph/partition.py:311 and
apax-hub/apax@<heldout21> apax/utils/jax_md_reduced/partition.py:729, both labelled wrong):
the older signature `cond(pred, true_operand, true_fun, false_operand, false_fun)`, whose
branches get one operand each, and a branch name rebound to `partial(branch, max_occupancy=...)`,
whose bound keyword is the value it was bound to, not an operand. The twins that pass the bound
as an operand are still reported. Real jax checks the semantics the analysis relies on."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
from fixture_cases import run_jax3 as run
from jax import lax

NEIGHBOR_LIST = """
from functools import partial

import jax.numpy as jnp
from jax import lax


def neighbor_list_fn(position, nbrs=None):
    def neighbor_fn(position_and_error, max_occupancy=None):
        position, err = position_and_error
        idx = jnp.argsort(position)
        if max_occupancy is None:
            max_occupancy = position.shape[0] // 2
        idx = idx[:max_occupancy]
        return idx, err

    if nbrs is None:
        return neighbor_fn((position, jnp.zeros(())))
    neighbor_fn = partial(neighbor_fn, max_occupancy=nbrs.max_occupancy)
    return lax.cond(
        jnp.any(position > 1.0),
        (position, nbrs.error),
        neighbor_fn,
        nbrs,
        lambda x: (x.idx, x.error),
    )
"""


def codes(result) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in result.findings]


def test_a_branch_rebound_to_a_partial_keeps_its_bound_keyword_static():
    assert codes(run(NEIGHBOR_LIST)) == []


def test_the_bound_passed_as_the_operand_of_a_current_cond_is_still_reported():
    operand = NEIGHBOR_LIST.replace(
        "        position, err = position_and_error\n",
        "        position, err = position_and_error\n        max_occupancy = err\n",
    ).replace(
        "    neighbor_fn = partial(neighbor_fn, max_occupancy=nbrs.max_occupancy)\n", ""
    ).replace(
        """    return lax.cond(
        jnp.any(position > 1.0),
        (position, nbrs.error),
        neighbor_fn,
        nbrs,
        lambda x: (x.idx, x.error),
    )""",
        """    return lax.cond(jnp.any(position > 1.0), neighbor_fn, lambda x: x, (position, nbrs.error))""",
    )
    assert ("JAX307", 15) in codes(run(operand))


def test_an_old_style_cond_calls_each_branch_with_its_one_operand():
    """`default` keeps its Python default: a branch of the old signature gets one argument."""
    source = """
        import jax.numpy as jnp
        from jax import lax


        def branch(x, n=3):
            return x[:n]


        def run(pred, x):
            return lax.cond(pred, (x,), lambda t: t[0], x, branch)
        """
    assert codes(run(source)) == []
    tested = source.replace("            return x[:n]", "            if x[0] > 0:\n                return x[:n]\n            return x")
    assert [c for c, _ in codes(run(tested))] == ["JAX301"]  # the operand is traced in the old signature too
    current = source.replace("lax.cond(pred, (x,), lambda t: t[0], x, branch)", "lax.cond(pred, branch, branch, x, x)")
    assert ("JAX307", 7) in codes(run(current))


def test_jax_calls_old_style_branches_with_one_operand_and_partial_keywords_as_bound():
    def neighbor_fn(position_and_error, max_occupancy=None):
        position, err = position_and_error
        return jnp.sort(position)[:max_occupancy], err

    bound = partial(neighbor_fn, max_occupancy=2)

    @jax.jit
    def update(position, err):
        return lax.cond(jnp.any(position > 1.0), (position, err), bound, (position, err), lambda x: (x[0][:2], x[1]))

    idx, _ = update(jnp.array([3.0, 1.0, 2.0]), jnp.zeros(()))
    assert idx.tolist() == [1.0, 2.0]
