"""Verdicts: one task's outputs of the original and the rewritten version compared (`judge`), the
`verified` evidence with the family's figure first (`_verified`), and several units combined into
one verdict per fix (`combine`). `api.verify_change` runs the versions and calls these.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from jaxfix.model import Evidence
from jaxfix.verify import branches, figures
from jaxfix.verify.compare import compare_printed, compare_trees, identical
from jaxfix.verify.protocol import TaskResult
from jaxfix.verify.watch import reorder_scale

SUPPLY = (
    "supply inputs: --examples FILE (EXAMPLES = {{'{name}': [call(...)]}} or drive(mod)), "
    "or --record \"CMD\" to record calls while CMD runs the original"
)


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{seconds * 1e3:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def unverifiable(why: str, supply: str = "", **data: Any) -> Evidence:
    detail = why if not supply else f"{why}; {supply}"
    return Evidence("unverifiable", detail, {"why": why, "supply": supply, **data})


# Drive convention (from the pytree-cache fixtures): an output named "improves:..." may hold the
# string "CRASH:<ExceptionName>" where the code under test raised. Original CRASH vs a value in the
# rewrite is an improvement (reported, not compared); a rewrite CRASH where the original gave a
# value is a mismatch, under any name.
IMPROVES = "improves:"


def _crash_marker(outcome) -> str | None:
    tree = outcome.tree
    if tree is None or len(tree.leaves) != 1 or tree.leaves[0].kind != "object":
        return None
    value = tree.leaves[0].value
    return value if isinstance(value, str) and value.startswith("CRASH:") else None


def _base_label(key: str, labels: list[str]) -> str:
    key = key.removesuffix(" (2nd run)")
    for label in sorted(labels, key=len, reverse=True):
        if key == label or key.startswith(label + " "):
            return label
    return key


def _evidence(verdict: str, detail: str, data: dict[str, Any], *, source: str, family: str, headline: str = "", notes=()) -> Evidence:
    return Evidence(
        verdict, detail, {**data, "source": data.get("source", source)},
        input_source=source, family=family, headline=headline, notes=tuple(notes),
    )


MAIN_BLOCK = "__main__ block"  # a `main` task's output: how the script itself ended
PRINTED_SUFFIX = " printed"  # a call's printed lines (`watch.printed`), judged with the call's arguments


def _same_arguments(before: TaskResult, after: TaskResult, key: str) -> bool:
    """For a call the script made in each version (a `main` task): whether both passed the same
    values; outputs of other tasks have no recorded arguments and always count."""
    given, got = before.observed.get("arguments") or {}, after.observed.get("arguments") or {}
    if key not in given or key not in got:
        return True  # not a call both made: judged (or noted) as an output only one version has
    return identical(given[key], got[key])


def _mismatch(name: str, source: str, family: str, described: str, key: str, what: str, **data: Any) -> Evidence:
    on = f" on {described} ({source})" if described and described != key else ""
    return _evidence(
        "mismatch", f"mismatch in {name}{on}: output {key!r}: {what}",
        {"callable": name, "input": described, "output": key, **data}, source=source, family=family, headline=what,
    )


def judge(
    name: str,
    source: str,
    before: TaskResult,
    after: TaskResult,
    *,
    device: str,
    reference: str,
    family: str = "",
    added_fields: frozenset[str] = frozenset(),
    arms: list[branches.Arms] | None = None,
    codes: list[str] = (),  # type: ignore[assignment]  # the rules whose fixes changed this unit
    uncached: frozenset[str] = frozenset(),
) -> Evidence:
    """Compare one task's outputs of the original (`before`) and the rewritten (`after`) version.

    Only values both versions produced are compared: where the original raised on an input,
    nothing derived from that input (its gradients, probes, second run) is compared, and an output
    only one version has is noted, not judged (a drive's named output stays judged: it is the
    drive's own return value). Leaves under `added_fields` (fields the rewrite added to a class)
    are compared on the original's leaves and reported as intended.
    """
    if before.error or after.error:
        which = "original" if before.error else "rewritten"
        error = before.error or after.error
        ev = unverifiable(f"{name}: could not run on the {which} version: {error}", SUPPLY.format(name=name))
        return replace(ev, input_source=source, family=family)
    labels = before.labels or after.labels
    rejected = {
        label for label in labels if (o := before.outputs.get(label)) is not None and o.tree is None
    }  # inputs the original raised on
    compared: set[str] = set()
    skipped: list[str] = []
    agreed: list[str] = []
    intended: list[str] = []
    restructured: set[str] = set()  # classes compared on their leaves (`compare_trees(uncached=...)`)
    for key in dict.fromkeys([*before.outputs, *after.outputs]):
        old, new = before.outputs.get(key), after.outputs.get(key)
        label = _base_label(key, labels)
        derived = key != label
        described = before.inputs.get(key) or after.inputs.get(key) or label
        if derived and label in rejected:
            continue  # the original raised on this input: nothing derived from it says anything
        if not _same_arguments(before, after, label if key.endswith(PRINTED_SUFFIX) else key):
            replayed = (after.observed.get("replayed") or {}).get(key)
            if replayed is None:
                skipped.append(f"{key}: its arguments differ between the versions (in the last bits, from earlier calls)")
                continue
            old = replayed  # the original, run on the rewritten script's own arguments
        if old is None or new is None:
            where = "original" if new is None else "rewritten"
            if derived or source != "drive":
                skipped.append(f"{key}: exists only in the {where} version")
                continue
            return _mismatch(name, source, family, described, key, f"exists only in the {where} version", reason="structure")
        old_crash, new_crash = _crash_marker(old), _crash_marker(new)
        if old_crash and key.startswith(IMPROVES):
            # The drive caught the original's failure; the rewrite may repair it (or fail alike).
            skipped.append(f"{key}: the original raised {old_crash[len('CRASH:'):]}" + ("" if new_crash else ", the rewrite returns a value"))
            continue
        if new_crash and not old_crash:
            return _mismatch(
                name, source, family, described, key,
                f"the rewritten code raised {new_crash[len('CRASH:'):]} where the original returned a value",
                reason="raised", got=new_crash,
            )
        if old.tree is not None and new.tree is not None:
            scale = reorder_scale(codes, (before.observed.get("lines") or {}).get(label))
            result = compare_trees(
                old.tree, new.tree, prefix=key, added_fields=added_fields, scale=scale, uncached=uncached
            )
            if key.endswith(PRINTED_SUFFIX):
                result = replace(result, difference=compare_printed(key, old.tree, new.tree))
            diff = result.difference
            if diff is not None:
                return _mismatch(
                    name, source, family, described, key, diff.message,
                    path=diff.path, reason=diff.reason, expected=diff.expected, got=diff.got,
                    max_difference=diff.max_abs_diff, max_ulp=diff.max_ulp,
                )
            intended.extend(result.added)
            restructured.update(result.restructured)
            if label != MAIN_BLOCK:  # the script ending alike is checked, but it is no input
                compared.add(label)
        elif old.tree is not None and reference == "eager" and derived and " grad wrt " in key:
            # The eager original is differentiable; the rewrite (a lax loop) may not be in reverse
            # mode. The original could not run under jit at all, so there is no compiled gradient
            # to keep: said, not judged.
            skipped.append(f"{key}: the rewrite cannot be differentiated here ({new.error_type}); only the eager original could")
        elif old.tree is not None and reference == "eager" and source == "guessed" and _needs_one_type(new.error):
            # A guessed int beside float arithmetic: the eager original's branches return different
            # dtypes, which a Python `if` allows and `lax.cond`/`while_loop` does not. The original
            # never ran under jit on any input, so this says what the guess was, not what the fix did.
            skipped.append(f"{key}: on this guessed input the branches give different types, which lax control flow rejects")
        elif old.tree is not None:
            ev = _mismatch(
                name, source, family, described, key,
                f"the rewritten code raised {new.error} where the original returned a value",
                reason="raised", got=new.error,
            )
            return replace(ev, detail=f"{ev.detail}\n{new.trace}".rstrip())
        elif new.tree is not None:
            skipped.append(f"{key}: the original raised {old.error}; the rewrite returns a value")
        elif old.error_type != new.error_type:
            skipped.append(f"{key}: the original raised {old.error}, the rewritten code {new.error}")
        else:
            agreed.append(f"{key}: both raise {old.error_type}")  # behaviour kept, but proves little
    if not compared:
        why = f"{name}: no output could be compared"
        reasons = skipped + agreed
        if reasons:
            why += f" ({reasons[0]}{'' if len(reasons) == 1 else f'; and {len(reasons) - 1} more'})"
        ev = unverifiable(why, SUPPLY.format(name=name), skipped=skipped, both_raised=agreed)
        return replace(ev, input_source=source, family=family, notes=tuple(skipped + agreed))
    return _verified(
        name, source, before, after, device=device, reference=reference, family=family,
        compared=[label for label in labels if label in compared] or sorted(compared),
        skipped=skipped, agreed=agreed, intended=intended, added_fields=added_fields, arms=arms or [],
        restructured=sorted(restructured),
    )


# What JAX says when the arms of `lax.cond`/`switch` or a loop's carry change type (dtype or
# structure), as raised by jax 0.10.2.
_ONE_TYPE_ERRORS = (
    "branches must have equal output types",
    "branch outputs must have same type structure",
    "body_fun output and input must have identical types",
    "must have identical types",
    "the input carry",
)


def _needs_one_type(error: str | None) -> bool:
    return bool(error) and error.startswith("TypeError") and any(text in error for text in _ONE_TYPE_ERRORS)


def _verified(
    name: str, source: str, before: TaskResult, after: TaskResult, *, device: str, reference: str, family: str,
    compared: list[str], skipped: list[str], agreed: list[str], intended: list[str],
    added_fields: frozenset[str], arms: list[branches.Arms], restructured: list[str] = (),  # type: ignore[assignment]
) -> Evidence:
    """The verified evidence: the family's figure first, then inputs, device, counts and times."""
    count = len(compared)
    if source == "drive":
        what = f"1 drive run ({count} output{'s' if count != 1 else ''})"
    else:
        what = f"{count} {source} input{'s' if count != 1 else ''}"
    times = (before.time_per_call, after.time_per_call)
    caching_text, caching_why = figures.caching(before.observed.get("caching"), after.observed.get("caching"))
    if family == figures.CONTROL_FLOW and source != "drive":
        headline = figures.control_flow(before.observed, compared, arms)
    elif family == figures.JIT_PLACEMENT and reference == "eager":
        # A control-flow fix in the same file makes the original run eagerly: it compiles nothing.
        headline = "compiles not compared: the original ran eagerly for a control-flow fix in the same file"
    elif family == figures.JIT_PLACEMENT:
        ran = [label for label in before.labels if (o := before.outputs.get(label)) is not None and o.tree is not None]
        headline = figures.jit_placement(before.compiles, after.compiles, max(len(ran), 1))
    elif family == figures.CACHING:
        headline = caching_text
    else:
        headline = ""
    eager = " (original run eagerly)" if reference == "eager" else ""
    counts = (
        f"{before.compiles} compiles -> {after.compiles}, {before.traces} traces -> {after.traces} (steady state)"
    )
    speed = f"{_ms(times[0])} -> {_ms(times[1])} per call"
    slower = figures.slower_because(family, times, caching_why, has_branches=bool(arms))
    if slower:
        speed += f" (slower: {slower})"
    # The eager original compiles nothing: its counts would only say "0 -> 0".
    detail = f"verified on {what} on {device}{eager}: " + (speed if reference == "eager" else f"{counts}, {speed}")
    notes = []
    if intended:
        fields = ", ".join(f"`{f}`" for f in sorted(added_fields) if any(f in p for p in intended))
        notes.append(
            f"the fix adds field {fields} on purpose: compared on the original's leaves, "
            f"{len(intended)} added leaf(s) reported as intended (e.g. {intended[0]})"
        )
    if restructured:
        notes.append(
            f"the original's {', '.join(f'`{c}`' for c in restructured)} changes its tree structure once its "
            "cached property is read (equinox keeps the cache in its static data), the rewrite's does not: "
            "trees holding one were compared on their leaves"
        )
    if skipped:
        notes.append(
            f"{len(skipped)} output(s) not compared because the original raised or only one version has them "
            f"(first: {skipped[0]})"
        )
    if agreed:
        notes.append(f"{len(agreed)} output(s) raise the same error in both versions")
    weak = count == 1 and source != "drive"
    if weak:
        notes.append(
            "weak: the evidence rests on a single call; supply more inputs (--examples FILE, --record \"CMD\") to strengthen it"
        )
    # One line each: the family's figure, then how it was verified, then what was left out.
    detail = "\n".join([*([headline] if headline else []), detail, *notes])
    return _evidence(
        "verified",
        detail,
        {
            "callable": name, "inputs": count, "source": source, "device": device, "reference": reference,
            "compiles": [before.compiles, after.compiles], "traces": [before.traces, after.traces],
            "first_run_compiles": [before.first_compiles, after.first_compiles],
            "time_per_call": list(times), "calls": before.calls,
            "compiles_by_function": [before.compiles_by_fun, after.compiles_by_fun], "skipped": skipped,
            "both_raised": agreed, "intended": intended,
            "observed": {"original": before.observed.get("caching") or {}, "rewritten": after.observed.get("caching") or {}}
            if family == figures.CACHING else {},
            "under_jit": {k: v for k, v in (before.observed.get("under_jit") or {}).items() if k in compared},
            "branches": {
                str(line): c
                for line, c in branches.coverage(
                    arms, {k: (before.observed.get("lines") or {}).get(k, ()) for k in compared}
                ).items()
            },
            "slower_because": slower,
            "weak": weak,
            "timing": [before.observed.get("timing"), after.observed.get("timing")],
        },
        source=source, family=family, headline=headline, notes=notes,
    )


def combine(evidences: list[Evidence]) -> Evidence:
    """One verdict from several units: any mismatch wins, then verified only if all are."""
    unique: dict[int, Evidence] = {}
    for ev in evidences:
        unique.setdefault(id(ev), ev)
    evidences = list(unique.values())
    if not evidences:
        return unverifiable("no changed callable was found for this fix")
    for ev in evidences:
        if ev.verdict == "mismatch":
            return ev
    if len(evidences) == 1:
        return evidences[0]
    sources = ", ".join(dict.fromkeys(ev.input_source for ev in evidences if ev.input_source))
    family = next((ev.family for ev in evidences if ev.family), "")
    if all(ev.verdict == "verified" for ev in evidences):
        total = sum(ev.data.get("inputs", 0) for ev in evidences)
        before = sum(ev.data["compiles"][0] or 0 for ev in evidences)
        after = sum(ev.data["compiles"][1] or 0 for ev in evidences)
        names = ", ".join(ev.data.get("callable", "?") for ev in evidences)
        headlines = [f"{ev.data.get('callable', '?')}: {ev.headline}" for ev in evidences if ev.headline]
        detail = f"verified {names}: {total} inputs in all, {before} compiles -> {after} (steady state)"
        if headlines:
            detail += "; " + "; ".join(headlines)
        return Evidence(
            "verified",
            detail,
            {"inputs": total, "compiles": [before, after], "units": [ev.data for ev in evidences],
             "device": evidences[0].data.get("device")},
            input_source=sources, family=family, headline="; ".join(headlines),
        )
    reasons = [ev.detail for ev in evidences if ev.verdict == "unverifiable"]
    return Evidence("unverifiable", "; ".join(reasons), {"units": [ev.data for ev in evidences]}, input_source=sources, family=family)
