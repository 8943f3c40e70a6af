"""The figure that matters for each family of fix, in words a user reads at a glance.

- jit placement (JAX2xx): compiles per call in steady state, "10 compiles per call -> 0";
- caching (JAX1xx): how often the property computes, eager and under jit, from the counts the
  child took (`observe.caching_counts`);
- control flow (rules verified against the original run eagerly): the error the original raises
  under jit, and how many inputs, over which branches, the jitted rewrite matched.

Also why a rewrite is slower, where the counts say.
"""

from __future__ import annotations

from typing import Any

from jaxfix.verify import branches

SLOWER = 1.25  # a rewrite this much slower per call is called slower, with the reason when known

CACHING = "caching"
JIT_PLACEMENT = "jit-placement"
CONTROL_FLOW = "control-flow"


def family_for(code: str, reference: str) -> str:
    """The family of a rule code (stable under the codemods' file layout)."""
    if reference == "eager":
        return CONTROL_FLOW
    if code.startswith("JAX1"):
        return CACHING
    if code.startswith("JAX2"):
        return JIT_PLACEMENT
    return ""


def _per_call(total: int | None, calls: int) -> str:
    """Compiles per call; `jit_placement` asks only where every call compiled alike."""
    return "?" if total is None else str(total // max(calls, 1))


def jit_placement(before_compiles: int | None, after_compiles: int | None, calls: int) -> str:
    """`10 compiles per call -> 0`, or the totals (`10 compiles in 9 calls -> 0`) where the calls
    compile unevenly (a per-call average like 1.1 says less than the counts)."""
    even = all(total is None or total % max(calls, 1) == 0 for total in (before_compiles, after_compiles))
    if calls > 1 and not even:
        return f"{before_compiles} compiles in {calls} calls -> {_per_call(after_compiles, 1)} (steady state)"
    unit = " per call" if calls > 1 else ""
    return f"{_per_call(before_compiles, calls)} compiles{unit} -> {_per_call(after_compiles, calls)} (steady state)"


def _times(n: int) -> str:
    return "once" if n == 1 else ("never" if n == 0 else f"{n} times")


def caching(before: dict[str, Any] | None, after: dict[str, Any] | None) -> tuple[str, str]:
    """(headline, why slower) from the property counts of both versions; empty when not measured."""
    if not before or not after:
        return "", ""
    reads = before.get("reads", 10)
    parts = []
    jit_before, jit_after = before.get("jit_ops"), after.get("filled_jit_ops", after.get("jit_ops"))
    if jit_before and jit_after == 0 and "filled_jit_ops" in after:
        parts.append(
            f"under jit: recomputed on each call ({jit_before} ops in the traced program) -> "
            f"once, by with_caches() outside jit (0 ops per call)"
        )
    elif jit_before is not None and jit_after is not None:
        parts.append(f"under jit: {jit_before} ops in the traced program -> {jit_after}")
    eager_before, eager_after = before.get("eager_computes"), after.get("eager_computes")
    why = ""
    if eager_before is not None and eager_after is not None:
        text = f"eager: {reads} reads of one instance compute it {_times(eager_before)} -> {_times(eager_after)}"
        if eager_after > eager_before:
            why = "the property now recomputes per access"
            filled = after.get("filled_eager_computes")
            if filled is not None and filled <= eager_before:
                text += f" ({_times(filled)} after with_caches())"
                why += " until with_caches() fills the cache"
        parts.append(text)
    return "; ".join(parts), why


def control_flow(
    before_observed: dict[str, Any],
    compared_labels: list[str],
    arms: list[branches.Arms],
) -> str:
    """'original raises X under jit; rewritten runs under jit and equals ... on N inputs (both branches)'."""
    count = len(compared_labels)
    errors = before_observed.get("under_jit") or {}
    raised = sorted({errors[label] for label in compared_labels if errors.get(label)})
    lines = before_observed.get("lines") or {}
    reached = branches.describe(branches.coverage(arms, {label: lines.get(label, ()) for label in compared_labels}))
    inputs = f"{count} input{'s' if count != 1 else ''}" + (f" ({reached})" if reached else "")
    if raised:
        return (
            f"original raises {' / '.join(raised)} under jit; rewritten runs under jit "
            f"and equals the original run eagerly on {inputs}"
        )
    return f"rewritten equals the original run eagerly on {inputs}"


def slower_because(
    family: str, times: tuple[float | None, float | None], caching_why: str, has_branches: bool = True
) -> str:
    """Why the rewrite is slower per call (empty when it is not, or nothing measured says why).
    `has_branches`: the original function has an `if` (a rewrite of it computes both arms)."""
    before, after = times
    if before is None or after is None or after <= before * SLOWER:
        return ""
    if caching_why:
        return caching_why
    if family == CONTROL_FLOW:
        if has_branches:
            return "both branches are now computed"
        # a `while`/`for` rewritten as a lax loop, compared with the original run eagerly
        return "the original ran eagerly in Python; the rewrite dispatches a compiled loop"
    return "no measured cause (timings on a shared machine vary)"
