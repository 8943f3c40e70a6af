import jax.numpy as jnp


class PerfectlyMatchedLayer:
    def __init__(self, thickness):
        self.thickness = thickness

    def place_on_grid(self, resolution):
        sigma_end_calculated = -jnp.log(1e-8) / (2 * self.thickness * resolution)
        self.sigma_end = float(sigma_end_calculated)
        return self
