import jax
import pytest


def _run_inside_jit(fn, *args):
    return jax.jit(lambda *a: fn(*a))(*args)


@pytest.fixture
def run_inside_jit():
    return _run_inside_jit
