"""The kinds of Python value `ValueKinds` tells apart, one record per answer, and the few helpers
its parts share (`value_kinds` for the analysis, `value_classes` for the classes of a file).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

ARRAY = "array"  # a jax/numpy array: traceable, not hashable
NUMBER = "number"  # a Python int/float/complex: traceable and hashable
PYTREE = "pytree"  # a container or pytree class of arrays and numbers: traceable
STATIC = "static"  # hashable, neither an array nor a number: only static or captured
FRESH = "fresh callable"  # a function object made where it is bound: new on every run of that code
UNHASHABLE = "unhashable"  # a non-array value that is not hashable: neither traced nor static
UNKNOWN = "unknown"

TRACEABLE = frozenset({ARRAY, NUMBER, PYTREE})
MAX_DEPTH = 4  # how far a kind is followed through bindings, calls and fields


@dataclass(frozen=True)
class ValueKind:
    kind: str
    what: str = ""  # a few words for a message: "array", "frozen dataclass `Config`", ...
    hashable: bool | None = None
    callable: bool = False

    @property
    def traceable(self) -> bool:
        return self.kind in TRACEABLE

    @property
    def static(self) -> bool:
        """Known hashable and not traceable: a static argument or a captured value."""
        return self.kind == STATIC and self.hashable is True

    def described(self) -> str:
        return self.what or self.kind


UNKNOWN_KIND = ValueKind(UNKNOWN)
ARRAY_VALUE = ValueKind(ARRAY, "array", hashable=False)
NUMBER_VALUE = ValueKind(NUMBER, "Python number", hashable=True)
STRING_VALUE = ValueKind(STATIC, "string", hashable=True)
BOOL_VALUE = ValueKind(STATIC, "bool flag", hashable=True)
NONE_VALUE = ValueKind(STATIC, "None", hashable=True)




def combine(kinds: Iterable[ValueKind]) -> ValueKind:
    """One kind for a name bound several ways (or a value from several call sites)."""
    kinds = list(dict.fromkeys(kinds))
    if not kinds:
        return UNKNOWN_KIND
    if len(kinds) == 1:
        return kinds[0]
    names = {k.kind for k in kinds}
    for worst in (FRESH, UNHASHABLE):
        if worst in names:
            return next(k for k in kinds if k.kind == worst)
    if names == {NUMBER}:
        return NUMBER_VALUE
    if names <= {ARRAY, NUMBER}:
        return ARRAY_VALUE
    if names <= TRACEABLE:
        return ValueKind(PYTREE, "arrays and numbers", hashable=None)
    if names == {STATIC} and all(k.hashable for k in kinds):
        whats = sorted({k.what for k in kinds})
        return ValueKind(STATIC, " or ".join(whats), hashable=True, callable=all(k.callable for k in kinds))
    return ValueKind(UNKNOWN, hashable=False if any(k.hashable is False for k in kinds) else None)


STARRED = cst.Name("_starred_")  # `argument_for`: the call unpacks *args/**kwargs


def argument_for(call: cst.Call, positional: list[str], name: str) -> cst.BaseExpression | None:
    """The expression `call` passes for parameter `name` (`positional`: the names that take
    positional arguments, in order); None when it passes none, `STARRED` when it unpacks
    *args/**kwargs (then which value lands there is not known)."""
    position = 0
    passed = None
    for arg in call.args:
        if arg.star:
            return STARRED
        if arg.keyword is None:
            if position < len(positional) and positional[position] == name:
                passed = arg.value
            position += 1
        elif arg.keyword.value == name:
            passed = arg.value
    return passed
