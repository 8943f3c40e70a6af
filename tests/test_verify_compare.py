"""The comparator: structure by key paths, leaves by shape/dtype, values by tolerance or ULPs."""

from __future__ import annotations

import dataclasses
import functools
import pickle

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from jaxfix.verify.compare import compare, flatten, identical, ulp_distance


def test_identical_trees_are_equal():
    tree = {"a": jnp.arange(3.0), "b": (jnp.int32(2), None)}
    assert compare(tree, tree) is None


def test_one_ulp_is_equal_but_1e3_is_not():
    x = np.float32(1.2345)
    up = np.nextafter(x, np.float32(2))
    assert compare({"v": jnp.asarray(x)}, {"v": jnp.asarray(up)}) is None
    diff = compare({"v": jnp.asarray([x, x])}, {"v": jnp.asarray([x, x + np.float32(1e-3)])})
    assert diff is not None and diff.reason == "value"
    assert diff.path == "['v']" and diff.index == (1,)
    assert diff.max_abs_diff == pytest.approx(1e-3, rel=1e-2)
    assert "values differ at ['v'][1]" in diff.message


def test_ulp_distance_crosses_zero():
    a = np.array([-0.0, 1.0], np.float32)
    b = np.array([0.0, np.nextafter(np.float32(1), np.float32(0))], np.float32)
    assert ulp_distance(a, b).tolist() == [0, 1]


def test_nan_pattern_must_match():
    assert compare(jnp.array([1.0, jnp.nan]), jnp.array([1.0, jnp.nan])) is None
    diff = compare(jnp.array([1.0, jnp.nan]), jnp.array([1.0, 2.0]))
    assert diff.reason == "nan" and diff.index == (1,)


def test_infinities_equal_only_themselves():
    assert compare(jnp.array([jnp.inf]), jnp.array([jnp.inf])) is None
    assert compare(jnp.array([jnp.inf]), jnp.array([-jnp.inf])).reason == "value"


def test_python_scalar_is_a_weak_0d_array():
    assert compare(3, jnp.int32(3)) is None
    assert compare(2.5, jnp.asarray(2.5, jnp.float32)) is None
    assert compare(2.5, jnp.asarray(2.5, jnp.float16)) is None
    diff = compare(3, jnp.float32(3.0))
    assert diff.reason == "dtype" and diff.expected == "int32" and diff.got == "float32"


def test_weak_type_only_when_strict():
    weak, strong = jnp.asarray(1.0), jnp.float32(1.0)
    assert compare(weak, strong) is None
    assert compare(weak, strong, strict_weak=True).reason == "weak_type"


def test_tuple_vs_list_is_a_structure_difference():
    diff = compare((jnp.ones(2),), [jnp.ones(2)])
    assert diff.reason == "structure"


def test_shape_and_dtype_are_exact():
    assert compare(jnp.ones(1000), jnp.ones((1, 1000))).reason in ("shape", "structure")
    assert compare(jnp.ones(3, jnp.int32), jnp.ones(3, jnp.float32)).reason == "dtype"


def test_bfloat16_uses_its_own_tolerance():
    a = jnp.asarray([1.0, 2.0], jnp.bfloat16)
    b = jnp.asarray(np.asarray([1.0, 2.0078125], ml_dtypes.bfloat16))
    assert compare(a, b) is None
    tree = flatten(a)
    assert compare(pickle.loads(pickle.dumps(tree)), tree) is None  # travels between processes


def test_prng_keys_compare_by_key_data():
    assert compare(jax.random.key(0), jax.random.key(0)) is None
    diff = compare(jax.random.key(0), jax.random.key(1))
    assert diff is not None and diff.reason == "key"


def test_dicts_with_none_are_equal():
    assert compare({"a": None, "b": jnp.ones(2)}, {"a": None, "b": jnp.ones(2)}) is None


def test_shared_leaves_are_compared_before_a_structure_difference():
    @functools.partial(jax.tree_util.register_dataclass, data_fields=["a"], meta_fields=[])
    @dataclasses.dataclass
    class Before:
        a: jax.Array

    @functools.partial(jax.tree_util.register_dataclass, data_fields=["a", "cache"], meta_fields=[])
    @dataclasses.dataclass
    class After:
        a: jax.Array
        cache: jax.Array

    diff = compare(Before(jnp.array([2.0, 4.0])), After(jnp.zeros(2), jnp.ones(())), prefix="grad")
    assert diff.reason == "value" and diff.path == "grad.a"
    assert "expected [2., 4.]" in diff.message and "got [0., 0.]" in diff.message
    diff = compare(Before(jnp.ones(2)), After(jnp.ones(2), jnp.ones(())))
    assert diff.reason == "structure" and diff.path == ".cache"


def test_objects_that_are_not_arrays_compare_by_equality():
    assert compare({"name": "x"}, {"name": "x"}) is None
    assert compare({"name": "x"}, {"name": "y"}).reason == "value"


def test_identical_means_bit_for_bit():
    a = flatten((jnp.ones(3), {"n": 2, "x": jnp.array([jnp.nan, 1.0])}))
    assert identical(a, flatten((jnp.ones(3), {"n": 2, "x": jnp.array([jnp.nan, 1.0])})))
    assert not identical(a, flatten((jnp.ones(3) + 1e-7, {"n": 2, "x": jnp.array([jnp.nan, 1.0])})))  # 1 ulp: equal, not identical
    assert not identical(a, flatten((jnp.ones(3), {"n": 3, "x": jnp.array([jnp.nan, 1.0])})))
    assert not identical(a, None)


def test_objects_in_static_data_compare_without_their_addresses():
    """A flax TrainState keeps optax's functions in its static data; their `at 0x...` differs in
    every process and must not make two equal states differ."""

    def make():
        def update(g):
            return g

        @jax.tree_util.register_pytree_node_class
        class State:
            def __init__(self, w, fn):
                self.w, self.fn = w, fn

            def tree_flatten(self):
                return (self.w,), self.fn

            @classmethod
            def tree_unflatten(cls, fn, children):
                return cls(children[0], fn)

            def __repr__(self):
                return "State"

        return State(jnp.ones(2), update)

    first, second = flatten(make()), flatten(make())
    assert " at 0x" not in first.treedef and first.treedef == second.treedef


def test_an_object_leaf_with_a_default_repr_compares_without_its_address():
    """`self` of a trainer class among a call's arguments: each process has its own instance."""

    class Trainer:
        pass

    first, second = flatten((Trainer(), jnp.ones(2))), flatten((Trainer(), jnp.ones(2)))
    assert identical(first, second) and " at 0x" not in first.leaves[0].value
