"""jaxfix: find, fix and verify JAX jit anti-patterns."""

__version__ = "0.1.0"
