"""Traced context reached through calls across the modules of a project.

Per module (`call_summary.summarize_calls`, on the stdlib AST, cached with the project index):
every function and method, its trace entries, and the calls out of its own body whose target
resolves by name, each argument with the parameters of the caller its value depends on.

Over the project (`propagate`): from the entries, a parameter of a callee is traced when an
argument passed to it depends on a traced parameter of the caller (or on a value a jax
function made under the trace). The answer kept is the cross-module part: functions entered
from another module, with which parameters traced and why; `jit_contexts` takes them as
entries and does the precise, statement-ordered analysis inside the callee's own module.
Precision first: a literal, a shape or a static argument passed to a parameter never makes it
traced, and `self` is traced only for pytree classes (`pytrees.PYTREE_BASES` chains).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from jaxfix.analysis.call_summary import (  # noqa: F401 - the engine imports CallSummary, summarize_calls from here
    STAGED,
    CallEdge,
    CallSummary,
    FunctionCalls,
    summarize_calls,
)
from jaxfix.analysis.pytest_files import is_test_module
from jaxfix.analysis.transforms import CONSTRUCTION_HOOKS


@dataclass(frozen=True)
class CrossEntry:
    """A function entered from traced code of another module."""

    traced: frozenset[str]
    reason: str  # "`step` (jitted, train.py:12) calls `update` with `x`"
    # every transform the entry traces back to is in test code (`pytest_files.is_test_module`: a
    # test or a script under `tests/` jits the library function with arguments of its choosing)
    from_tests: bool = False


Lookup = Callable[[str], "CallSummary | None"]


def propagate(
    summaries: Lookup, roots: list[str], *, is_pytree: Callable[[str], bool] = lambda q: False, budget: int = 20000
) -> dict[str, dict[str, CrossEntry]]:
    """module -> function -> how it is entered from another module, from the entries of `roots`
    (modules looked up through `summaries`, which may parse them on demand)."""
    traced: dict[tuple[str, str], set[str]] = {}
    how: dict[tuple[str, str], str] = {}
    tests: dict[tuple[str, str], bool] = {}  # every origin of the entry is test code

    def origin(key: tuple[str, str], from_tests: bool) -> bool:
        """Record one more origin of `key`; whether that made it no longer test-only (its callees
        are then visited again, to pass that on)."""
        was = tests.get(key)
        tests[key] = (True if was is None else was) and from_tests
        return was is True and not tests[key]
    work: list[tuple[str, str]] = []
    out: dict[str, dict[str, CrossEntry]] = {}
    for name in roots:
        summary = summaries(name)
        if summary is None:
            continue
        for fname, entry in summary.entries.items():
            key = (name, fname)
            traced[key] = set(entry.traced)
            how[key] = f"{entry.how}, {summary.path}:{entry.line}"
            origin(key, is_test_module(summary.path))
            work.append(key)
        for qualname, foreign in summary.foreign.items():
            found = _split(qualname, summaries)
            info = found[2].functions.get(found[1]) if found is not None else None
            if info is None or info.class_name is not None:
                continue
            key = (found[0], info.name)
            bound = set(info.positional[: foreign.bound_positional]) | foreign.bound_names
            entered = set(info.params) - bound - foreign.statics.of(info) - info.literal_defaults
            if not entered:
                continue
            if origin(key, is_test_module(summary.path)):
                work.append(key)
            if entered <= traced.get(key, set()):
                continue
            traced.setdefault(key, set()).update(entered)
            how.setdefault(key, f"{foreign.how}, {summary.path}:{foreign.line}")
            work.append(key)
            named = ", ".join(f"`{p}`" for p in sorted(traced[key]))
            reason = f"`{info.name}` is {foreign.how} at {summary.path}:{foreign.line} with {named} traced"
            prev = out.setdefault(key[0], {}).get(key[1])
            out[key[0]][key[1]] = CrossEntry(frozenset(traced[key]), prev.reason if prev else reason)
    while work and budget > 0:
        budget -= 1
        key = work.pop()
        module, fname = key
        summary = summaries(module)
        info = summary.functions.get(fname) if summary is not None else None
        if info is None:
            continue
        live = traced[key] | {STAGED}
        for edge in info.calls:
            for callee_key, callee, shift, self_traced in _targets(edge, module, summaries, is_pytree, live, info):
                bound = _bind(edge, callee, shift, live)
                if self_traced and callee.positional:
                    bound.add(callee.positional[0])
                if not bound:
                    continue
                old = traced.setdefault(callee_key, set())
                changed = origin(callee_key, tests.get(key, False))
                if bound <= old:
                    if changed:
                        work.append(callee_key)
                    continue
                old |= bound
                work.append(callee_key)
                if callee_key not in how:
                    how[callee_key] = f"traced, {summary.path}:{edge.line}"
                if callee_key[0] != module:
                    caller = fname.rsplit(".", 1)[-1]
                    named = ", ".join(f"`{p}`" for p in sorted(old))
                    reason = f"`{caller}` ({how[key]}) calls `{callee.name.rsplit('.', 1)[-1]}` with {named} traced"
                    prev = out.setdefault(callee_key[0], {}).get(callee_key[1])
                    out[callee_key[0]][callee_key[1]] = CrossEntry(frozenset(old), prev.reason if prev else reason)
    return {
        module: {f: replace(entry, from_tests=tests.get((module, f), False)) for f, entry in entries.items()}
        for module, entries in out.items()
    }


def _split(qualname: str, summaries: Lookup) -> tuple[str, str, CallSummary] | None:
    """("pkg.mod", "Cls.m", summary) for a qualified name the project defines (re-exports are not followed)."""
    parts = qualname.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        summary = summaries(".".join(parts[:cut]))
        if summary is not None:  # named as the project indexes it (`summary.module`)
            return summary.module, ".".join(parts[cut:]), summary
    return None


def _method(summary: CallSummary, cls: str, name: str, summaries: Lookup, depth: int = 0):
    """(summary, FunctionCalls) of `cls.name`, looking through bases the project defines."""
    info = summary.functions.get(f"{cls}.{name}")
    if info is not None:
        return summary, info
    if depth > 4:
        return None
    for base in summary.classes.get(cls, ()):
        found = _split(base, summaries)
        if found is not None and found[1] in found[2].classes:
            hit = _method(found[2], found[1], name, summaries, depth + 1)
            if hit is not None:
                return hit
    return None


def _targets(edge: CallEdge, module: str, summaries: Lookup, is_pytree, live: set[str], caller: FunctionCalls):
    """(key, callee, positional shift, self traced) for each function the call runs."""
    found = _split(edge.target, summaries)
    if found is None:
        return []
    mod, rest, summary = found
    receiver_traced = bool(edge.receiver_deps & live)
    if edge.receiver == "self" and caller.positional:
        receiver_traced = caller.positional[0] in live
    if rest in summary.classes and edge.receiver is None:  # a construction: its hooks
        out = []
        any_traced = any(d & live for _, d in edge.args)
        pytree = is_pytree(f"{mod}.{rest}")
        for hook in CONSTRUCTION_HOOKS:
            hit = _method(summary, rest, hook, summaries)
            if hit is not None:
                s, info = hit
                shift = 1 if hook == "__init__" else None  # the hooks after __init__ see only `self`
                out.append(((s.module, info.name), info, shift, pytree and any_traced and hook != "__init__"))
        return out
    if "." in rest:
        cls, _, meth = rest.rpartition(".")
        if cls not in summary.classes:
            return []
        hit = _method(summary, cls, meth, summaries)
        if hit is None:
            return []
        s, info = hit
        shift = 1 if info.is_method else 0
        self_traced = info.is_method and receiver_traced and is_pytree(f"{mod}.{cls}")
        return [((s.module, info.name), info, shift, self_traced)]
    info = summary.functions.get(rest)
    if info is None or info.class_name is not None:
        return []
    return [((mod, info.name), info, 0, False)]


def _bind(edge: CallEdge, callee: FunctionCalls, shift: int | None, live: set[str]) -> set[str]:
    out: set[str] = set()
    if shift is None:
        return out
    params = callee.positional[shift:]
    for slot, deps in edge.args:
        if not deps & live:
            continue
        if isinstance(slot, int):
            if slot < len(params):
                out.add(params[slot])
        elif slot in callee.params:
            out.add(slot)
    return out
