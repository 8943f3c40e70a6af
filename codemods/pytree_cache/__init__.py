"""Caches on pytree classes: JAX101 (`functools.cached_property`, `cached_property_on_pytree`)
and JAX102 (`functools.cache` / `lru_cache` on a method, `method_cache_on_pytree`).

Both find their members through `cached_members`; JAX101's class rewrite is `class_fix`. Their
options live in `[tool.jaxfix.pytree-cache]`. `python -m libcst.tool codemod
pytree_cache.PytreeCacheCommand` runs both, as before the split.
"""

from codemods._command import commands_named
from codemods.pytree_cache.cached_property_on_pytree import CachedPropertyOnPytreeRule
from codemods.pytree_cache.method_cache_on_pytree import MethodCacheOnPytreeRule

__getattr__ = commands_named(__name__, {"PytreeCacheCommand": (CachedPropertyOnPytreeRule, MethodCacheOnPytreeRule)})
