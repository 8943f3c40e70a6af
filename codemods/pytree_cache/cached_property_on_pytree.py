"""JAX101 cached-property-on-pytree

## What it does
Finds `@functools.cached_property` on a method of a pytree class: a subclass of
`flax.struct.PyTreeNode` or `equinox.Module` (also through bases in this module or, with the
project index the CLI builds, in another checked module), a class decorated with
`@flax.struct.dataclass`, `@chex.dataclass`, `@jax.tree_util.register_pytree_node_class` or
`@jax.tree_util.register_dataclass`, or a class passed to `register_pytree_node` /
`register_pytree_with_keys` / `register_dataclass`. A class that is not a pytree is never flagged.

A Flax NNX graph object (an `nnx.Module` / `nnx.Object` / `nnx.Pytree` subclass) lives across
`nnx.jit` calls, so a value cached under a trace stays on it: it is always reported. Any other
pytree is reported only when the file shows a persistent instance of it read under a trace: traced
code that closes over (does not take as an argument) an instance bound outside any trace and reads
the property on it (`jax.jit(lambda x: self.norm * x)` in an untraced method, a module-level
`model = Model(...)` read in a jitted function). An instance passed to `jit`, `vmap` or `scan`, or
as `self` of a filtered method, is rebuilt from its leaves inside the trace: the cache dies with
that copy (ten spent pools: 0 real of 45 such findings).

## Why is this bad?
A `cached_property` stores its value in the instance `__dict__`, which is not part of the
pytree. Every `jax.jit`, `vmap` or `grad` call flattens the instance and builds a new one from
the leaves, with an empty `__dict__`: the value is recomputed inside every trace and never
cached across a jit boundary. Worse, when the property is first read inside a trace on an
instance the jitted function closed over, the tracer is stored on the real object; every later
use raises `UnexpectedTracerError` or `ConcretizationTypeError` (measured on all five class
kinds, jax 0.10.2).

## Known problems
A non-NNX pytree whose instance is closed over by traced code in another module, a notebook, or
through a call chain (`jax.jit(lambda x: run(model, x))` with `run` reading `model.norm`) is not
reported; set `unproven-pytrees = true` to report every pytree class's cached properties. A
cached property that no code of the checked project reads (`obj.name`, `getattr(obj, "name")`) is
not reported (unless `unproven-pytrees`): nothing can first read it under a trace (held-out labels, erfanzar/EasyDeL
`base_module.py` `causal_mask`); one only a library's users read, outside the project, is missed.
A file checked alone, or a list of files (not a folder), cannot tell and reports it. Only
decorator uses are found (`b = cached_property(f)` in a class body is not). A base class in
another module is only seen when the project index was built over it. With `cache-style =
"field"`: a subclass in another module that declares fields without defaults can no longer be
created (dataclass field order; in this module that case is reported as manual), and a subclass
in another module that has its own cached properties gets a `with_caches()` that does not chain
to its base's (in this module it calls `super().with_caches()`). The fix of a class covers all
its cached properties at once, so `# noqa` on one of them does not keep that one out of the
class's rewrite. A flax/chex/dataclass class with a hand-written `__init__` that does not accept
the cache field breaks `with_caches()` (`replace` passes it as a keyword); not detected. The
property style drops eager caching: two eager reads compute twice. `@chex.dataclass` flattens
`__dict__`: there the original's cached value is an extra leaf after the first eager read (the
treedef, and so jit's cache key, change with access); the rewrite removes that. The tracer-safe
cached property (a descriptor that caches eagerly but never stores a tracer) is not offered as a
style: it would need a runtime helper in the user's code.

## Preview
None: every finding is reported by default. Of the 77 first-contact findings of the thirteen
blind pools (their labels), the 50 on a plain Python value, on a property nothing reads, or on a
pytree with no persistent read (0 real) are no longer made; what it still reports was 22 real of
27 on the one pool it occurs in (heldout, EasyDeL's RoPE tables; 3 wrong: loss-type objects whose
kind the file does not show, as it does not show the tables').

## Example
```python
class Layer(eqx.Module):
    w: jax.Array

    @functools.cached_property
    def gram(self) -> jax.Array:
        return self.w @ self.w.T


layer = Layer(jnp.eye(3))


@jax.jit
def step(x):
    return layer.gram @ x  # the first call stores a tracer on `layer`
```

## Use instead
```python
class Layer(eqx.Module):
    w: jax.Array

    @property
    def gram(self) -> jax.Array:
        return self.w @ self.w.T
```
This is the default fix, `cache-style = "property"`: no cache at all, which under jit costs
nothing (XLA removes the duplicate work), and the class's tree structure is unchanged. The
opt-in `"field"` fix keeps a cache the pytree way: a registered cache field read by the
property, filled by `layer = layer.with_caches()` once, outside jit:
```python
class Layer(eqx.Module):
    w: jax.Array
    _gram_cache: typing.Optional[jax.Array] = eqx.field(default=None)

    @property
    def gram(self) -> jax.Array:
        if self._gram_cache is not None:
            return self._gram_cache
        return self.w @ self.w.T

    def with_caches(self):
        # (a docstring: return a copy with the caches filled; call it outside jit)
        return eqx.tree_at(lambda m: m._gram_cache, self, self.gram, is_leaf=lambda x: x is None)
```

## Options
`unproven-pytrees` (`[tool.jaxfix.pytree-cache]`, default false): also report a pytree that is not
an NNX graph object without the evidence above.

`cache-style` (`[tool.jaxfix.pytree-cache]`): `"property"` (default) turns the
`cached_property` into a plain `property`: no new field, no cache. `"field"` (opt-in) rewrites
as shown above: a registered cache field per property, annotated `Optional[<return type>]`
(`Any` without a return annotation), filled functionally by one `with_caches()` method in the
class kind's copy idiom (`self.replace`, `eqx.tree_at`, `dataclasses.replace`, or
`tree_flatten` / `tree_unflatten` with the cache appended to the children; a subclass chains to
`super().with_caches()`).

## Fix safety
The two styles differ in what they promise.

`cache-style = "property"` (the default) is **safe**: the class keeps its fields, so its tree structure,
its checkpoints and its gradients are those of the original on every path where the original
works, and no tracer is ever stored (the leak is gone). Eager code recomputes on each access;
under jit XLA removes the duplicate computation.

`cache-style = "field"` (opt-in) is **unsafe**, measured on flax 0.12.8 / equinox 0.13.8:
- tree structure: the class gains a `None` leaf, so its treedef changes (code comparing
  treedefs, or a `jit` cache warmed before, sees a new structure), and `None` vs filled are two
  compilations;
- checkpoints: `flax.serialization.from_state_dict` / `from_bytes` of a checkpoint saved before
  the rewrite raises `ValueError: Missing field _norm_cache`;
- gradients: once filled by `with_caches()`, the cache is a leaf of its own: `jax.grad` sends
  the gradient to the cache instead of the fields it was computed from (gradient 0 for them),
  and an optimizer step, `replace` or `jax.tree.map` updates the fields but not the cache, which
  goes stale. Before filling, values and gradients are unchanged.

A property annotated to return static Python data (`int`, `str`, `tuple[...]`, ...) gets no
cache field even in the field style: filled, it would be a leaf, traced under jit (a shape or a
branch flag would stop being concrete). It becomes a plain property (safe on its own).
Unannotated properties are assumed to return arrays; if one returns static data, the filled
cache is traced under jit: one more reason the field style is unsafe. equinox: a class with its
own `__init__` gets `self._norm_cache = None` at its top (equinox leaves a defaulted field unset
under a custom `__init__`); a subclass whose base in this module has a custom `__init__` is
reported as manual. A `setter`/`deleter` on the name, an assignment or `del` of the attribute
in the module, a class registered with separate flatten functions, or a `tree_flatten` /
`tree_unflatten` too irregular to edit is reported as manual, with the reason.

A Flax NNX module (`nnx.Module`, `nnx.Pytree`, `nnx.Object` subclass) is always given the
property fix, whatever the style (measured, flax 0.12.8): read first inside `nnx.jit`, the
`cached_property` stores a tracer on the real module and the next call raises
`UnexpectedTracerError`; filled eagerly, the cached array is a plain attribute, which NNX holds
as static metadata: the compiled program keeps that first value when an optimizer updates the
parameters (a stale value, silently), and `nnx.jit` raises `ValueError` (arrays cannot be
metadata) once a second instance with its own cached array reaches the same function. There is no
registered cache field to fill in a module; the property keeps its `Variable`s the only state.
See docs/frameworks.md. On every pytree kind the finding depends on the cached value
(`cached_value.py`): a plain Python object (an `int` size, a string, an enum, a config or quantizer
object, None: a return annotation or every `return` says so) never holds a tracer and is not
reported; an array gets the safe fix; a value the file cannot classify (`self.config.make_mask()`)
is reported with the fix marked unsafe, since a property re-runs the body at every read.

## References
- https://docs.jax.dev/en/latest/custom_pytrees.html
- https://github.com/patrick-kidger/equinox/issues/539
- https://github.com/pyro-ppl/numpyro/issues/1651
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator

import libcst as cst

from codemods._command import commands_for
from codemods.pytree_cache.cached_members import (
    CACHED_PROPERTY,
    CachedClass,
    PytreeCacheFamily,
    cached_classes,
    may_hold_cached_pytree,
    may_hold_cached_pytree_in,
)
from codemods.pytree_cache.cached_value import PYTHON_VALUE, UNKNOWN_VALUE, cached_value
from codemods.pytree_cache.class_fix import class_fix
from jaxfix.analysis import pytrees as pt
from jaxfix.analysis.persistent_reads import persistent_reads
from jaxfix.analysis.project_lookups import attribute_read
from jaxfix.analysis.walk import statements
from jaxfix.model import Finding
from jaxfix.rulebase import Code, Invalid, Option, Rule, RuleContext, Valid


class CachedPropertyOnPytreeRule(PytreeCacheFamily, Rule):
    __doc__ = __doc__

    name = "cached-property-on-pytree"
    codes = (
        Code(
            "JAX101",
            "cached-property-on-pytree",
            "`functools.cached_property` on a pytree class: lost at every jit boundary, leaks tracers",
            fix="sometimes",
        ),
    )
    options = (
        Option(
            "cache-style",
            "property",
            "How JAX101 is fixed: `property` (plain property, safe; the default) or `field` "
            "(registered cache field + `with_caches()`, unsafe: a new pytree leaf).",
            choices=("field", "property"),
        ),
        Option(
            "unproven-pytrees",
            False,
            "JAX101: also report a pytree that is not a Flax NNX graph object when this file shows no "
            "instance of it closed over by traced code that reads the property (its instances are "
            "closed over elsewhere: another module, a notebook).",
        ),
    )
    valid = (
        Valid(
            """
            import functools


            class Config:
                def __init__(self, sizes):
                    self.sizes = sizes

                @functools.cached_property
                def total(self):
                    return sum(self.sizes)
            """
        ),
        Valid(
            """
            import flax.struct
            import jax
            import jax.numpy as jnp


            class Model(flax.struct.PyTreeNode):
                w: jax.Array

                @property
                def norm(self) -> jax.Array:
                    return jnp.linalg.norm(self.w)
            """
        ),
        Valid(
            """
            import functools

            import equinox as eqx
            import jax


            class Layer(eqx.Module):
                w: jax.Array

                @functools.cached_property
                def gram(self) -> jax.Array:
                    return self.w @ self.w.T


            @jax.jit
            def apply(layer: Layer, x: jax.Array) -> jax.Array:
                return layer.gram @ x  # an argument: rebuilt from leaves inside the trace
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import functools

            import flax.struct
            import jax
            import jax.numpy as jnp


            class Model(flax.struct.PyTreeNode):
                w: jax.Array

                @functools.cached_property
                def norm(self) -> jax.Array:
                    return jnp.linalg.norm(self.w)


            model = Model(jnp.ones(3))


            @jax.jit
            def scale(x):
                return model.norm * x
            """,
            fixed="""
            import flax.struct
            import jax
            import jax.numpy as jnp


            class Model(flax.struct.PyTreeNode):
                w: jax.Array

                @property
                def norm(self) -> jax.Array:
                    return jnp.linalg.norm(self.w)


            model = Model(jnp.ones(3))


            @jax.jit
            def scale(x):
                return model.norm * x
            """,
        ),
        Invalid(
            """
            import functools

            import equinox as eqx
            import jax


            class Layer(eqx.Module):
                w: jax.Array

                @functools.cached_property
                def gram(self) -> jax.Array:
                    return self.w @ self.w.T

                def solve(self, b: jax.Array) -> jax.Array:
                    step = jax.jit(lambda x: self.gram @ x)  # closes over the instance
                    return step(b)
            """,
            fixed="""
            import equinox as eqx
            import jax


            class Layer(eqx.Module):
                w: jax.Array

                @property
                def gram(self) -> jax.Array:
                    return self.w @ self.w.T

                def solve(self, b: jax.Array) -> jax.Array:
                    step = jax.jit(lambda x: self.gram @ x)  # closes over the instance
                    return step(b)
            """,
        ),
        Invalid(
            """
            import functools

            import jax
            import jax.numpy as jnp


            @jax.tree_util.register_pytree_node_class
            class Params:
                def __init__(self, w):
                    self.w = w

                @functools.cached_property
                def norm(self):
                    return jnp.linalg.norm(self.w)

                def tree_flatten(self):
                    return (self.w,), None

                @classmethod
                def tree_unflatten(cls, aux_data, children):
                    return cls(*children)


            def normalizer(params: Params):
                return jax.jit(lambda x: x / params.norm)
            """,
            fixed="""
            import jax
            import jax.numpy as jnp


            @jax.tree_util.register_pytree_node_class
            class Params:
                def __init__(self, w):
                    self.w = w

                @property
                def norm(self):
                    return jnp.linalg.norm(self.w)

                def tree_flatten(self):
                    return (self.w,), None

                @classmethod
                def tree_unflatten(cls, aux_data, children):
                    return cls(*children)


            def normalizer(params: Params):
                return jax.jit(lambda x: x / params.norm)
            """,
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        return may_hold_cached_pytree(tree, CACHED_PROPERTY)

    def could_match_in(self, ctx: RuleContext) -> bool:
        return may_hold_cached_pytree_in(ctx, CACHED_PROPERTY)

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        style = ctx.option(self, "cache-style")
        for cached in cached_classes(ctx):
            if not cached.properties:
                continue
            cached, unsure = _members_worth_reporting(ctx, cached, ctx.option(self, "unproven-pytrees"))
            if not cached.properties:
                continue
            fix = class_fix(ctx, cached, style, unsure)
            name = cached.classdef.name.value
            for member in cached.properties:
                yield ctx.finding(
                    self,
                    "JAX101",
                    member.decorator,
                    f"`cached_property` `{member.name}` on pytree class `{name}` ({cached.info.via}): its cache "
                    f"lives in `__dict__`, is rebuilt inside every jit trace and stores a tracer when first read "
                    f"under jit",
                    fix,
                )


def _members_worth_reporting(ctx: RuleContext, cached: CachedClass, unproven: bool) -> tuple[CachedClass, str]:
    """A pytree class's cached properties worth reporting: not those whose value is certainly a
    plain Python object (never a tracer; `cached_value`), and why the property fix is unsafe when
    one of the rest may be one. The same for every pytree kind: an `-> int` size or an enum cached
    on a `flax.struct.dataclass` holds no tracer any more than one on an `nnx.Module` (held-out2
    labels, google-deepmind/gemma `gm/utils/_types.py:83`, `gm/ckpts/_checkpoint.py:107`). Nor,
    on an NNX module (which needs no persistent read; `unproven-pytrees` reports it), a property that
    no code of the project reads (`project_lookups.attribute_read`): it is never first read under a trace
    (held-out labels, erfanzar/EasyDeL@090a03b `easydel/infra/base_module.py:651,706`,
    `modules/clip/modeling_clip.py:586`; held-out3 kvfrans/jax-diffusion-transformer
    `utils/stable_vae.py:58` and held-out9 mlprt/feedbax `feedbax/state.py:43`, found before the
    persistent-read requirement)."""
    kept, unsure = [], ""
    evidence = None if unproven or cached.info.kind == pt.NNX else _persistently_read(ctx, cached.classdef)
    for member in cached.properties:
        if evidence is not None and member.name not in evidence:
            continue
        if evidence is None and not unproven and not attribute_read(ctx, member.name):
            continue  # nothing reads it: never first read under a trace
        value, why = cached_value(ctx, member.func, cached.classdef)
        if value == PYTHON_VALUE:
            continue
        if value == UNKNOWN_VALUE and not unsure:
            unsure = f"`{member.name}`: {why}"
        kept.append(member)
    return dataclasses.replace(cached, properties=kept), unsure


def _persistently_read(ctx: RuleContext, classdef) -> frozenset[str]:
    """The attribute names read under a trace on a persistent instance (`persistent_reads`) of
    `classdef`'s class or of a subclass of it written in this file: the evidence a pytree that is
    not an NNX graph object needs. Passed to `jit`, rebuilt from leaves, such a pytree caches only
    on the trace's copy (ten spent pools: 0 real of 45 without it; google-deepmind/simply
    @2d1f2a3 `simply/utils/ragged_paged_attention.py`, mlprt/feedbax `feedbax/task.py`)."""
    reads = persistent_reads(ctx)
    if not reads:
        return frozenset()
    name = classdef.name.value
    names = set(reads.get(name, ()))
    for sub in _subclasses(ctx, name):
        names |= reads.get(sub, frozenset())
    return frozenset(names)


def _subclasses(ctx: RuleContext, name: str) -> set[str]:
    """The classes of this file that derive from `name`, directly or through each other, by the
    base names as written."""
    bases = {
        node.name.value: {b.value.value for b in node.bases if isinstance(b.value, cst.Name)}
        for node in statements(ctx.module)
        if isinstance(node, cst.ClassDef)
    }
    found: set[str] = set()
    grew = True
    while grew:
        new = {cls for cls, written in bases.items() if cls not in found and written & (found | {name})}
        found |= new
        grew = bool(new)
    return found


# `<Name>Command` for each rule: libcst codemod commands, made on first access
__getattr__ = commands_for(CachedPropertyOnPytreeRule)
