"""Whether a jit-placement fix pays: the verdict `ineffective`.

A JAX201/JAX202 fix exists to remove compiles. When its evidence is `verified` (the rewrite
behaves like the original) but shows no fewer steady-state compiles than the original ("4
compiles -> 4"), the fix keeps behaviour and buys nothing: a closure passed as a static argument
that is new every time, or a wrapper still made once per call. Its verdict becomes
`ineffective`, which `--verify --write` holds back like any verdict but `verified`. JAX203 (the
same module function re-wrapped) is left alone: its original is already a cache hit, and what it
saves is dispatch time, not compiles.

Where a file has several such fixes, each is judged on the compiles of the function it compiles
(`jit(<name>)` in the counts per function), when the original text names it; otherwise on the
file's totals. Inputs on which neither version compiles anything in the steady state show
nothing either way: the verdict stays, with a note saying so.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from jaxfix.model import Evidence, Finding
from jaxfix.verify.watch import timing_figure, timing_verdict

INEFFECTIVE = "ineffective"
PAYING_CODES = frozenset({"JAX201", "JAX202"})
_PARTIALS = frozenset({"partial", "functools.partial"})
_WRAPPING = frozenset({"grad", "value_and_grad", "vmap", "checkpoint", "remat", "filter_grad", "filter_value_and_grad", "filter_vmap"})


def judge(finding: Finding, evidence: Evidence, original: str, paying_fixes: int) -> Evidence:
    """`evidence` for `finding`, turned `ineffective` when it shows no compile removed (JAX201,
    JAX202), no clock read moved after a wait (JAX501), or a filled cache that still recomputes
    under jit (JAX101). For the last two, a unit that ran and shows it is enough even where
    another unit of the fix could not be verified (the fix does not do what it promises)."""
    if evidence.verdict not in ("verified", "unverifiable"):
        return evidence
    if finding.code == "JAX501":
        pairs = [pair for pair in _pairs(evidence, "timing") if pair[1] and pair[1].get("reads")]
        why = _first(timing_verdict(*pair) for pair in pairs)
        if why:
            return _ineffective(evidence, why, "the timed region still excludes the computation")
        return _own_figure(evidence, timing_figure(pairs)) if pairs and evidence.verdict == "verified" else evidence
    if finding.code == "JAX101":
        why = _first(_cache_unused(*pair) for pair in _pairs(evidence, "observed", ("original", "rewritten")))
        return _ineffective(evidence, why, "the cache is not used") if why else evidence
    if evidence.verdict != "verified":
        return evidence
    if finding.code == "JAX203":
        # the re-wrap was a cache hit already: its own effect is dispatch time, not the compiles a
        # hoist in the same function removed
        times = evidence.data.get("time_per_call") or [None, None]
        if len(times) == 2 and None not in times:
            return _own_figure(
                evidence, f"the same function was re-wrapped (a cache hit): per call {times[0] * 1e3:.3g} ms -> {times[1] * 1e3:.3g} ms"
            )
        return evidence
    if finding.code not in PAYING_CODES:
        return evidence
    if evidence.data.get("reference") == "eager" or any(u.get("reference") == "eager" for u in _units(evidence)):
        return evidence  # the original ran eagerly for a control-flow fix: its compiles say nothing
    counts = compile_counts(finding, evidence, original, paying_fixes)
    if counts is None:
        return evidence
    before, after = counts
    if before == 0 and after == 0:
        note = "the inputs compile nothing in the steady state, so they do not show the fix removing compiles"
        return replace(evidence, notes=(*evidence.notes, note), data={**evidence.data, "payoff": [before, after]})
    if after < before:
        return evidence
    headline = f"{before} compiles -> {after} (steady state): no compile removed"
    rest = evidence.detail.splitlines()
    if rest and evidence.headline and rest[0] == evidence.headline:
        rest = rest[1:]  # the family's figure, said again by the new first line
    detail = "\n".join([f"{headline}: the rewrite behaves like the original but compiles as often on these inputs", *rest])
    return replace(
        evidence,
        verdict=INEFFECTIVE,
        detail=detail,
        headline=headline,
        data={**evidence.data, "payoff": [before, after]},
    )


def compile_counts(finding: Finding, evidence: Evidence, original: str, paying_fixes: int) -> tuple[int, int] | None:
    """Steady-state compiles (original, rewritten) that answer for `finding`: those of its own
    function when the file has several judged fixes and the counts per function name it, else
    the evidence's totals; None when the evidence has none."""
    if paying_fixes > 1:
        name = compiled_name(original, finding.line, finding.column)
        counts = _per_function(evidence, name) if name else None
        if counts is not None:
            return counts
    compiles = evidence.data.get("compiles") or [None, None]
    if len(compiles) != 2 or compiles[0] is None or compiles[1] is None:
        return None
    return int(compiles[0]), int(compiles[1])


def _units(evidence: Evidence) -> list[dict[str, Any]]:
    units = evidence.data.get("units")
    return [u for u in units if isinstance(u, dict)] if isinstance(units, list) else []


def _per_function(evidence: Evidence, name: str) -> tuple[int, int] | None:
    """Compiles of `jit(name)` before and after, summed over the evidence's units."""
    key = f"jit({name})"
    before = after = 0
    seen = False
    for data in [evidence.data, *_units(evidence)]:
        pair = data.get("compiles_by_function")
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(p, dict) for p in pair):
            continue
        seen = True
        before += int(pair[0].get(key, 0))
        after += int(pair[1].get(key, 0))
    return (before, after) if seen else None


def compiled_name(source: str, line: int, column: int) -> str | None:
    """The name jit gives the function compiled at the finding (`loss_fn` for
    `jax.jit(partial(loss_fn, cfg))(x)`, `<lambda>`, a nested def's name), or None."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) != line:
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node.name  # a decorated nested def: the finding is at its name
        if isinstance(node, ast.Call) and node.col_offset == column - 1:
            call = node.func if isinstance(node.func, ast.Call) else node  # `T(F)(x)` or a bound `T(F)`
            if call.args:
                return _target_name(call.args[0])
    return None


def _target_name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Lambda):
        return "<lambda>"
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Call) and expr.args and (
        _dotted(expr.func) in _PARTIALS or (_dotted(expr.func) or "").rsplit(".", 1)[-1] in _WRAPPING
    ):
        return _target_name(expr.args[0])  # partial(f, ...), grad(f), vmap(f): compiled as `f`
    return None


def _dotted(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        head = _dotted(expr.value)
        return f"{head}.{expr.attr}" if head else None
    return None


def paying(findings: Iterable[Finding]) -> int:
    """How many applied fixes are of the codes judged here."""
    return sum(1 for f in findings if f.fix is not None and f.code in PAYING_CODES)


def _pairs(evidence: Evidence, key: str, names: tuple[Any, Any] = (0, 1)) -> list[tuple[Any, Any]]:
    """(original, rewritten) of measurement `key` in the evidence and each of its units."""
    out = []
    for data in [evidence.data, *_units(evidence)]:
        pair = data.get(key)
        try:
            out.append((pair[names[0]], pair[names[1]]))
        except (KeyError, IndexError, TypeError):
            continue
    return out


def _first(reasons: Iterable[str | None]) -> str | None:
    return next((r for r in reasons if r), None)


def _cache_unused(before: dict[str, Any] | None, after: dict[str, Any] | None) -> str | None:
    """A JAX101 field fix whose filled cache still recomputes the property inside jit."""
    if not before or not after or "filled_jit_ops" not in after:
        return None
    old, new = before.get("jit_ops"), after["filled_jit_ops"]
    if not old or new is None or new < old:
        return None
    return f"after with_caches() the property still puts {new} ops into the traced program (original: {old})"


def _ineffective(evidence: Evidence, why: str, short: str) -> Evidence:
    rest = evidence.detail.splitlines()
    if rest and evidence.headline and rest[0] == evidence.headline:
        rest = rest[1:]
    return replace(
        evidence,
        verdict=INEFFECTIVE,
        detail="\n".join([f"{short}: {why}", *rest]),
        headline=short,
        data={**evidence.data, "ineffective_because": why},
    )

def _own_figure(evidence: Evidence, headline: str) -> Evidence:
    """The evidence led by the figure of this fix's own effect (a timing fix in a function whose
    jit hoist removed compiles is not verified by those compiles)."""
    rest = evidence.detail.splitlines()
    if rest and evidence.headline and rest[0] == evidence.headline:
        rest = rest[1:]
    return replace(evidence, detail="\n".join([headline, *rest]), headline=headline)
