"""A `Site`: one place where a compiling transform wraps a callable, in code that runs repeatedly,
as the site finder (`sites`) records it and the planner and rules read it."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from codemods.jit_placement.transform_kinds import MODULE_FUNCTION, NEW_FUNCTION_WRAPPERS
from jaxfix.analysis.transforms import REWRAPPING_JITS, display_name


@dataclass
class Site:
    """One place where a compiling transform wraps a callable, in code that runs repeatedly."""

    node: cst.CSTNode  # the outermost transform Call, or the decorated FunctionDef
    chain: list[cst.Call]  # transform calls, outermost first (empty for a decorated def)
    kinds: list[str]  # transform short names, outermost first
    target: cst.BaseExpression | cst.FunctionDef  # the wrapped callable (expression or the def)
    kind: str  # see FRESH, or MODULE_FUNCTION
    call: cst.Call | None = None  # `T(F)(args)`: the immediate call
    definition: cst.FunctionDef | None = None  # nested def behind a Name target
    loops: list[cst.CSTNode] = field(default_factory=list)
    function: cst.CSTNode | None = None
    # `f = T(F)` then `f(args)`: the binding statement and every call of `f` (the direct form
    # `T(F)(args)` has `calls == [call]` and no binding)
    calls: list[cst.Call] = field(default_factory=list)
    binding: cst.SimpleStatementLine | None = None
    manual: str | None = None  # the site is reported, but the fix must be done by hand (why)
    in_test_case: bool = False  # in a class deriving from a `TestCase` (test code, whatever the file)
    # outside loops: this module shows the function running more than once (called in a loop or
    # from two places, or a method a loop calls on one object); without it a fix is never `safe`
    repeats: bool = False
    qualified: list[str] = field(default_factory=list)  # the transforms' qualified names, outermost first

    @property
    def fresh(self) -> bool:
        """Each evaluation of the transform makes a new cache key: the callable is new each time,
        or a module function sits under a wrapper that returns a new function object
        (`jax.jit(jax.grad(f))`)."""
        return self.kind != MODULE_FUNCTION or self.rewraps or any(k in NEW_FUNCTION_WRAPPERS for k in self.kinds[1:])

    @property
    def rewraps(self) -> bool:
        """The outer transform is a new cache key even around the same function (`nnx.jit`)."""
        return bool(self.qualified) and self.qualified[0] in REWRAPPING_JITS

    @property
    def described(self) -> str:
        """What is fresh, as a message says it: `lambda`, `nested def`, or for a module function
        under a wrapper `module function under `jax.grad``."""
        if self.kind != MODULE_FUNCTION:
            return self.kind
        if self.rewraps:
            return f"wrapper of a module function (`{display_name(self.qualified[0])}` makes a new one per call)"
        wrapper = next(k for k in self.kinds[1:] if k in NEW_FUNCTION_WRAPPERS)
        return f"function made by `jax.{wrapper}`"

    @property
    def spelled(self) -> str:
        """The transform chain as a message spells it: `jax.jit(...)`, `jax.jit(jax.grad(...))`."""
        if len(self.qualified) == len(self.kinds):
            names = [display_name(q) for q in self.qualified]
        else:
            names = [f"{'eqx.' if k.startswith('filter_') else 'jax.'}{k}" for k in self.kinds]
        return "(".join(names) + "(...)" + ")" * (len(self.kinds) - 1)

    @property
    def reported_at(self) -> cst.CSTNode:
        """The node a finding points at: the call `T(F)(x)`, the binding's `T(F)`, or the def's name."""
        node = self.node if self.call is None or self.binding is not None else self.call
        return node.name if isinstance(node, cst.FunctionDef) else node


# methods that build an object once (`setup`: flax linen's): what they store on `self` is one
# object per instance, and a jitted callable they build is built once
CONSTRUCTORS = frozenset({"__init__", "__post_init__", "setup"})
