"""Which way each value a hoisted callable captured goes, and where the hoist goes (JAX201/JAX202).

A value the callable reads from its function (a captured name, or a value a `partial` binds)
either stays captured, keys a cached factory, or becomes an argument of the hoisted jitted
function, traced or static. The kind of the value decides (`jaxfix.analysis.value_kinds`,
research section 3b):

- an array, a Python number or a container of them becomes a **traced** argument;
- a hashable non-array value (a string, a bool flag, a tuple of ints, an enum member, a frozen
  dataclass of hashable fields, a function defined at module level) becomes a **static**
  argument, or, when it does not change in the function, it **keys** a cached factory
  (`functools.cache`) and stays captured;
- a value used as a shape, loop bound, slice bound or branch flag must be static;
- a function made anew on every iteration or call (a nested `def`, a `lambda`, a `partial`)
  can be neither: as a static argument it is a new cache key every time (no compile saved), and
  it cannot be traced; an unhashable non-array value (a dict of settings, a list, a mutable
  dataclass) can be neither either. Such a value can only **stay captured**, which the hoist
  above the loop allows when the value does not change in that loop; otherwise the fix is manual
  and says why.

`leave(...)` decides for a hoist out of the function (module level, or a cached factory when some
value keys it); `above(...)` for a hoist just above a loop, the values that do not change in it
left captured. Each returns a `Decision`: the target, each value's role, one phrase per value for
the finding's message ("`cfg` (frozen dataclass `Config`) keys a cached factory"), and the
phrases that make the fix unsafe. `ManualFix` says why neither can be done automatically.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from jaxfix.analysis.value_kinds import FRESH, NUMBER, PYTREE, UNHASHABLE, ValueKind

TRACED, STATIC, KEY, CAPTURED = "traced", "static", "key", "captured"
MODULE, FACTORY, ABOVE = "module level", "cached factory", "above the loop"


class ManualFix(Exception):
    """The fix cannot be made automatically; the message says why."""


@dataclass
class Captured:
    """One value the hoisted callable needs from its function."""

    name: str  # the argument name it gets: the captured name, or the parameter a partial binds
    label: str  # as a message spells it: the name, or the bound expression
    kind: ValueKind
    variant: bool  # changes in the loop the hoist goes above (leaving: in any enclosing loop)
    needs_static: str | None = None  # why it must be static (a shape, a branch flag...), or None
    numeric: bool = False  # every use is arithmetic or an array operation
    keyable: bool = True  # may key a cached factory (read in the function, unchanged in its loops)
    external: bool = False  # a partial of a function not defined in this file: its needs are unknown
    key: str | None = None  # the local name a cached factory takes for it (default: `name`)


@dataclass
class Decision:
    target: str
    roles: dict[str, str] = field(default_factory=dict)
    phrases: list[str] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)
    loop: cst.CSTNode | None = None
    keys: list[str] = field(default_factory=list)  # the names a cached factory takes, in order

    def names(self, *roles: str) -> list[str]:
        return [name for name, role in self.roles.items() if role in roles]

    @property
    def note(self) -> str:
        return "; ".join(self.phrases)


def fresh_callable_reason(value: Captured, per: str) -> str:
    return (
        f"`{value.label}` is a {value.kind.described()}, a new function object on every {per}: as a static "
        "argument it would be a new cache key each time (no compile saved), and it cannot be traced; pass the "
        "arrays it reads to the jitted function instead of the function, or build it once outside"
    )


def argument_role(value: Captured, per: str) -> tuple[str, str, bool]:
    """(role, phrase, unsafe) for a value that becomes an argument of the hoisted function; raises
    ManualFix when it can be neither traced nor static."""
    kind, label, what = value.kind, value.label, value.kind.described()
    if value.kind.kind == FRESH:
        raise ManualFix(fresh_callable_reason(value, per))
    if value.needs_static:
        why = value.needs_static
        if kind.static or kind.kind == NUMBER or (kind.kind == PYTREE and kind.hashable):
            phrase = f"`{label}` becomes a static argument (used as {_a(why)}; {what})"
            if kind.callable and value.variant:
                return STATIC, phrase + _PER_ITERATION_CALLABLE, True
            return STATIC, phrase, value.external
        if kind.hashable is False:
            raise ManualFix(f"`{label}` is used as {_a(why)} but holds an unhashable value ({what}); it cannot be a static argument")
        return STATIC, f"`{label}` becomes a static argument ({why}); its hashability is not established", True
    if kind.traceable:
        phrase = f"`{label}` becomes a traced argument ({what})"
        if value.external:
            return TRACED, phrase + "; the wrapped function is not defined in this file, so whether it needs the value static is not known", True
        if kind.kind == NUMBER and not value.numeric:
            # A Python number the callable hands to code this file does not show (a nested def, an
            # import): there it may be a step count, a shape or a `range` bound, which a tracer breaks
            # (yipihey/mimic-jax@e16551b: `num_steps must be a positive Python integer`).
            return TRACED, phrase + "; it is passed on to code whose use of it is not visible here, which may need it static", True
        return TRACED, phrase, False
    if kind.kind == UNHASHABLE:
        change = "changes per iteration" if value.variant else "would become an argument"
        raise ManualFix(
            f"`{label}` ({what}) {change}, and it is neither an array (a traced argument) nor hashable (a static argument)"
        )
    if kind.static:
        phrase = f"`{label}` becomes a static argument ({what}: hashable, not an array)"
        if kind.callable and value.variant:
            return STATIC, phrase + _PER_ITERATION_CALLABLE, True
        return STATIC, phrase, value.external
    if value.numeric:
        return TRACED, f"`{label}` becomes a traced argument (used only as a number or array)", False
    if kind.callable:
        return (
            STATIC,
            f"`{label}` becomes a static argument (a callable); it must be the same function object each time, "
            "else every call compiles",
            True,
        )
    return (
        TRACED,
        f"`{label}` becomes a traced argument; it must be an array, a number or a pytree of them "
        "(its kind is not known from this file)",
        True,
    )


def _a(words: str) -> str:
    """`words` with its indefinite article: "a branch condition", "an argument of range()"."""
    return f"{'an' if words[:1].lower() in 'aeiou' else 'a'} {words}"


_PER_ITERATION_CALLABLE = "; a callable that changes per iteration compiles once per distinct function"


def leave(values: Iterable[Captured], *, factory: bool, per: str) -> Decision:
    """The hoist out of the function: values that key a cached factory (hashable, unchanged in the
    function's loops) stay captured; every other value becomes an argument."""
    values = list(values)
    keys = [v for v in values if factory and v.keyable and not v.variant and v.kind.static]
    decision = Decision(FACTORY if keys else MODULE)
    for value in values:
        if value in keys:
            decision.roles[value.name] = KEY
            key = value.key or value.name
            if key not in decision.keys:
                decision.keys.append(key)
            decision.phrases.append(
                f"`{value.label}` ({value.kind.described()}) stays captured and keys a cached factory: one jitted "
                "function per distinct value"
            )
            continue
        role, phrase, unsafe = argument_role(value, per)
        decision.roles[value.name] = role
        decision.phrases.append(phrase)
        if unsafe:
            decision.unsafe.append(phrase)
    return decision


def above(values: Iterable[Captured], loop: cst.CSTNode) -> Decision:
    """The hoist just above `loop`: values that do not change in it stay captured (closure intact);
    the others become arguments."""
    decision = Decision(ABOVE, loop=loop)
    for value in values:
        if not value.variant:
            decision.roles[value.name] = CAPTURED
            decision.phrases.append(f"`{value.label}` stays captured: it does not change in the loop")
            continue
        role, phrase, unsafe = argument_role(value, "iteration")
        decision.roles[value.name] = role
        decision.phrases.append(phrase)
        if unsafe:
            decision.unsafe.append(phrase)
    return decision
