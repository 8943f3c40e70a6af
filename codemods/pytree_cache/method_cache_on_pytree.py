"""JAX102 method-cache-on-pytree

## What it does
Finds `@functools.cache` and `@functools.lru_cache` (bare or called, `lru_cache(maxsize=...)`)
on a method of a pytree class, the classes JAX101 looks at: subclasses of
`flax.struct.PyTreeNode` or `equinox.Module` (through bases in this module or, with the project
index, another checked module), classes decorated with `@flax.struct.dataclass`,
`@chex.dataclass`, `@jax.tree_util.register_pytree_node_class` or
`@jax.tree_util.register_dataclass`, and classes passed to a registering function. Static and
class methods are left alone: their cache does not key on an instance.

## Why is this bad?
A method cache keys on its arguments, `self` first. flax, chex and equinox instances holding
arrays are unhashable: the first call raises `TypeError: unhashable type`. A class that hashes
by identity (a `register_pytree_node_class` class defining no `__eq__`) is hashable, and then
worse: the cache keeps every instance alive with its arrays, and a call inside `jit` stores its
traced result; on an instance the jitted function closed over, a later call with the same
arguments returns that leaked tracer. Nor does it save work under jit: each trace builds new
instances from the leaves, so the cache never hits across a jit boundary.

## Known problems
Only decorator uses are found (`scaled = functools.lru_cache()(_scaled)` in a class body is
not). A base class in another module is only seen when the project index was built over it.

## Example
```python
class Layer(eqx.Module):
    w: jax.Array

    @functools.lru_cache(maxsize=None)
    def scaled(self, k):
        return self.w * k
```

## Use instead
```python
class Layer(eqx.Module):
    w: jax.Array

    def scaled(self, k):
        return self.w * k
```
Under jit, XLA removes repeated computation within one trace; to reuse a value across calls,
compute it once and pass it (or store it in a field of the pytree).

## Fix safety
Safe: the fix removes the decorator and nothing else. The method returns the same values and
gradients, and the class's fields, tree structure and checkpoints do not change. Where the
original crashed (unhashable `self`) or leaked a tracer, the rewrite works. Eager code that
called the method repeatedly with equal arguments recomputes each time.

## References
- https://docs.jax.dev/en/latest/custom_pytrees.html
- https://docs.python.org/3/library/functools.html#functools.lru_cache
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codemods._command import commands_for
from codemods.pytree_cache.cached_members import (
    METHOD_CACHES,
    PytreeCacheFamily,
    cached_classes,
    may_hold_cached_pytree,
    may_hold_cached_pytree_in,
)
from jaxfix.analysis import pytrees as pt
from jaxfix.model import Finding, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid


class MethodCacheOnPytreeRule(PytreeCacheFamily, Rule):
    __doc__ = __doc__

    name = "method-cache-on-pytree"
    codes = (
        Code(
            "JAX102",
            "method-cache-on-pytree",
            "`functools.cache`/`lru_cache` on a method of a pytree class: keys on `self`, leaks tracers",
            fix="always",
        ),
    )
    valid = (
        Valid(
            """
            import functools


            class Table:
                def __init__(self, base):
                    self.base = base

                @functools.lru_cache(maxsize=None)
                def row(self, k):
                    return [self.base * i for i in range(k)]
            """
        ),
        Valid(
            """
            import functools

            import equinox as eqx
            import jax


            class Layer(eqx.Module):
                w: jax.Array

                @staticmethod
                @functools.cache
                def sizes(n: int) -> tuple:
                    return tuple(range(n))
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import functools

            import equinox as eqx
            import jax


            class Layer(eqx.Module):
                w: jax.Array

                @functools.lru_cache(maxsize=None)
                def scaled(self, k):
                    return self.w * k
            """,
            fixed="""
            import equinox as eqx
            import jax


            class Layer(eqx.Module):
                w: jax.Array

                def scaled(self, k):
                    return self.w * k
            """,
        ),
        Invalid(
            """
            from functools import cache

            import flax.struct
            import jax


            @flax.struct.dataclass
            class State:
                step: jax.Array

                @cache
                def doubled(self):
                    return self.step * 2
            """,
            fixed="""
            import flax.struct
            import jax


            @flax.struct.dataclass
            class State:
                step: jax.Array

                def doubled(self):
                    return self.step * 2
            """,
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        return may_hold_cached_pytree(tree, METHOD_CACHES)

    def could_match_in(self, ctx: RuleContext) -> bool:
        return may_hold_cached_pytree_in(ctx, METHOD_CACHES)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        for cached in cached_classes(ctx):
            if cached.info.kind == pt.NNX:
                continue  # not measured harmful on an nnx graph object (computed once under nnx.jit)
            for member in cached.methods:
                short = member.qualname.rsplit(".", 1)[-1]
                fix = ctx.rewrite(
                    f"Remove `@{short}` from `{member.name}`",
                    Safety.SAFE,
                    replace={
                        member.func: member.func.with_changes(
                            decorators=[d for d in member.func.decorators if d is not member.decorator]
                        )
                    },
                )
                yield ctx.finding(
                    self,
                    "JAX102",
                    member.decorator,
                    f"`{short}` on method `{member.name}` of pytree class `{cached.classdef.name.value}` "
                    f"({cached.info.via}): it keys on `self` (unhashable, or kept alive with its tracers) "
                    f"and never caches across a jit boundary",
                    fix,
                )


# `<Name>Command` for each rule: libcst codemod commands, made on first access
__getattr__ = commands_for(MethodCacheOnPytreeRule)
