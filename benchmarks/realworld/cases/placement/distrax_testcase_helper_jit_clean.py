# source: https://github.com/google-deepmind/distrax/blob/f51bffcf9094d269a0be8678762dd2849833c8b7/distrax/_src/utils/equivalence.py#L344-L360
# pattern: a shared test base class (a `parameterized.TestCase` in a helper module whose name is not a test file's) jits a nested def on every call of `_test_jittable`: test code exercising jit on purpose, each test runs once
# expect: no-flag
# family: placement
# strictness: hard
# run: EquivalenceTest("test_normal").test_normal()
import jax
import jax.numpy as jnp
from absl.testing import parameterized


class EquivalenceTest(parameterized.TestCase):
    def _test_jittable(self, dist_args=()):
        @jax.jit
        def jitted_function(event, scale):
            return -0.5 * jnp.sum((event / scale) ** 2)

        event = jnp.ones(3)
        log_prob = -0.5 * jnp.sum((event / dist_args[0]) ** 2)
        self.assertAlmostEqual(float(jitted_function(event, dist_args[0])), float(log_prob), places=5)

    def test_normal(self):
        self._test_jittable((jnp.float32(2.0),))
