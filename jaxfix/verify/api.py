"""The verifier's front door: `verify_result(FileResult) -> FileVerification`.

Plan (which callables changed, where each one's inputs come from) -> one child per version
(`runner`, `child`) -> compare every output (`compare`) -> an `Evidence` per unit, and per fix the
combination of the units it is answerable for (`changed.units_for_finding`):

- `verified`: the figure that matters for the fix's family first (`figures`: compiles per call,
  property computations, the original's error under jit and the branches reached), then N inputs
  compared equal; device; compiles and traces of the steady-state (second) run, original ->
  rewritten; median time per call, original -> rewritten (and why, when slower);
- `mismatch`: the first output both versions produced that differs: callable, input, key path,
  expected vs got, max difference (nothing derived from an input the original raised on counts,
  and a field the fix adds, `intended`, is compared on the original's leaves);
- `unverifiable`: why (no inputs, no device, the original itself fails...) and what the user can supply;
- `ineffective` (JAX201/JAX202 only, `payoff`): verified, but no fewer steady-state compiles than
  the original: the fix buys nothing, and `--verify --write` holds it back.

The CLI (`jaxfix verify`, `jaxfix fix --verify`), the fixture tests and the benchmark all call this
same function.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jaxfix.model import Evidence, FileResult, Finding
from jaxfix.verify import branches, figures, payoff
from jaxfix.verify import inputs as inputs_mod
from jaxfix.verify import screen as screen_mod
from jaxfix.verify._recorder.run_main import main_blocks
from jaxfix.verify.changed import (
    ChangeSet,
    changed_callables,
    family_of,
    units_for_finding,
)
from jaxfix.verify.compare import compare_trees, identical
from jaxfix.verify.device import DeviceChoice, choose_device
from jaxfix.verify.gather import DEFAULT_RECORD_TIMEOUT, gather_inputs
from jaxfix.verify.intended import added_fields as fields_added
from jaxfix.verify.protocol import Job, Task, TaskResult, VersionResult
from jaxfix.verify.runner import STARTUP_ALLOWANCE, run_versions

DEFAULT_TIMEOUT = 60.0
DEFAULT_RECORD_LIMIT = 5
SUPPLY = (
    "supply inputs: --examples FILE (EXAMPLES = {{'{name}': [call(...)]}} or drive(mod)), "
    "or --record \"CMD\" to record calls while CMD runs the original"
)


@dataclass
class UnitResult:
    """One verified unit: a changed callable, or the whole module through a drive."""

    name: str  # qualname, or "drive()"
    kind: str  # function | method | ... | drive | class | module
    source: str  # recorded | example | synthesized | drive | none
    evidence: Evidence


@dataclass
class FileVerification:
    path: str
    evidence: Evidence  # the file as a whole
    units: list[UnitResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)  # applied fixes, evidence attached
    device: str = ""
    reference: str = "as-written"
    original: VersionResult | None = None
    rewritten: VersionResult | None = None
    notes: list[str] = field(default_factory=list)

    def unit(self, name: str) -> UnitResult | None:
        return next((u for u in self.units if u.name == name), None)


def module_name_for(path: str) -> tuple[str, list[str]]:
    """The import name of the file (walking up packages) and the folders to put on sys.path."""
    file = Path(path).resolve()
    folder = file.parent
    stem = re.sub(r"\W", "_", file.stem)
    if stem[:1].isdigit():
        stem = "_" + stem
    parts = [stem]
    while (folder / "__init__.py").exists() and folder.name.isidentifier():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts), list(dict.fromkeys([str(folder), str(file.parent)]))


def reference_for(findings: list[Finding]) -> str:
    """Eager when any applied fix comes from a rule whose original cannot run under jit."""
    for finding in findings:
        if family_of(finding)[1] == "eager":
            return "eager"
    return "as-written"


# -- verdicts -------------------------------------------------------------------------------------


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
    for key in dict.fromkeys([*before.outputs, *after.outputs]):
        old, new = before.outputs.get(key), after.outputs.get(key)
        label = _base_label(key, labels)
        derived = key != label
        described = before.inputs.get(key) or after.inputs.get(key) or label
        if derived and label in rejected:
            continue  # the original raised on this input: nothing derived from it says anything
        if not _same_arguments(before, after, key):
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
            result = compare_trees(old.tree, new.tree, prefix=key, added_fields=added_fields)
            diff = result.difference
            if diff is not None:
                return _mismatch(
                    name, source, family, described, key, diff.message,
                    path=diff.path, reason=diff.reason, expected=diff.expected, got=diff.got,
                    max_difference=diff.max_abs_diff, max_ulp=diff.max_ulp,
                )
            intended.extend(result.added)
            if label != MAIN_BLOCK:  # the script ending alike is checked, but it is no input
                compared.add(label)
        elif old.tree is not None and reference == "eager" and derived and " grad wrt " in key:
            # The eager original is differentiable; the rewrite (a lax loop) may not be in reverse
            # mode. The original could not run under jit at all, so there is no compiled gradient
            # to keep: said, not judged.
            skipped.append(f"{key}: the rewrite cannot be differentiated here ({new.error_type}); only the eager original could")
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
    )


def _verified(
    name: str, source: str, before: TaskResult, after: TaskResult, *, device: str, reference: str, family: str,
    compared: list[str], skipped: list[str], agreed: list[str], intended: list[str],
    added_fields: frozenset[str], arms: list[branches.Arms],
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
    if skipped:
        notes.append(
            f"{len(skipped)} output(s) not compared because the original raised or only one version has them "
            f"(first: {skipped[0]})"
        )
    if agreed:
        notes.append(f"{len(agreed)} output(s) raise the same error in both versions")
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


# -- the plan -------------------------------------------------------------------------------------


@dataclass
class _Plan:
    tasks: list[Task] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # task id -> input source
    units: dict[str, UnitResult] = field(default_factory=dict)  # decided without running


def _plan(
    changes: ChangeSet,
    examples: inputs_mod.ExamplesFile | None,
    recording: inputs_mod.Recording | None,
    context: inputs_mod.Context | None = None,
) -> _Plan:
    """Per changed callable, its inputs: recorded (--record, or the project's tests, doctests and
    __main__ block), declared, covered by a drive, else synthesized (`context` lets synthesis build
    the project's classes)."""
    plan = _Plan()
    # whether the module has a `__main__` block: asked only where a callable's calls could not be
    # recorded, and then once for the module
    has_main = functools.cache(lambda: context is not None and bool(main_blocks(context.source)))
    if examples is not None and examples.has_drive:
        plan.tasks.append(Task(id="drive()", kind="drive", script_path=examples.path, script_source=examples.source))
        plan.sources["drive()"] = "drive"
    for change in changes.callables:
        name = change.qualname
        if change.status == "added":
            continue
        if change.status == "removed":
            plan.units[name] = UnitResult(name, change.kind, "none", unverifiable(f"{name} was removed by the rewrite"))
            continue
        kind = change.kind
        task = Task(id=name, kind="calls", target=name, target_kind=kind, tree_roundtrip=kind in ("property", "method"))
        if recording is not None and recording.count(name):
            task.calls_pickle = inputs_mod.pickle.dumps(recording.calls[name])
            plan.sources[name] = recording.source_of(name)
        elif examples is not None and examples.covers(name):
            task.script_path, task.script_source = examples.path, examples.source
            plan.sources[name] = "example"
        elif examples is not None and examples.has_drive:
            # Declared inputs come before synthesized ones: the drive exercises this callable.
            plan.units[name] = UnitResult(name, kind, "none", unverifiable(f"{name}: covered by drive() only"))
            continue
        elif _main_block_calls_it(recording, name) and kind in ("function", "method") and has_main():
            # Real calls that could not travel to a child (a TrainState holding optax closures), or
            # that the script did not reach because it failed first (on the bug another fix
            # repairs): the script makes them again in each version and their outputs are compared.
            task = Task(id=name, kind="main", target=name, target_kind=kind)
            plan.sources[name] = "__main__"
        else:
            try:
                calls = inputs_mod.synthesize(change.original or change.info, guess=True, context=context)
                task.calls_pickle = inputs_mod.pickled(calls)
                plan.sources[name] = calls[0].source if calls else "synthesized"
            except inputs_mod.CannotSynthesize as exc:
                why = f"{name}: no inputs ({exc})"
                if recording is not None and (recording.calls or recording.returncode or recording.skipped):
                    why += f"; the recorded run made no usable call of it{_skip_note(recording, name)}"
                plan.units[name] = UnitResult(name, kind, "none", unverifiable(why, SUPPLY.format(name=name)))
                continue
        plan.tasks.append(task)
    if any(c.status != "added" for c in changes.callables):
        # Module- and class-level changes (a hoisted `_f_jit = jax.jit(f)`, a new field) are
        # exercised by importing the module and through the changed callables that use them.
        return plan
    for cls in changes.classes_changed:
        plan.units[f"class {cls}"] = UnitResult(
            f"class {cls}", "class", "none",
            unverifiable(f"the body of class {cls} changed (fields or decorators)", "supply a drive(mod) in --examples FILE"),
        )
    if changes.module_level_changed:
        plan.units["module"] = UnitResult(
            "module", "module", "none",
            unverifiable("module-level code changed (it runs at import)", "supply a drive(mod) in --examples FILE"),
        )
    return plan


def _families(findings: list[Finding], changes: ChangeSet) -> dict[str, str]:
    """Per changed callable (and the drive), the family of the fixes it answers for."""
    out: dict[str, str] = {}
    for finding in findings:
        if finding.fix is None:
            continue
        family = figures.family_for(finding.code, family_of(finding)[1])
        if not family:
            continue
        for name in units_for_finding(finding, changes):
            out.setdefault(name, family)
        out.setdefault("drive()", family)
    return out


def _screen_made_up_inputs(plan, changes, original, results, verification, choice, module_name, filename, sys_path, cwd) -> None:
    """Leave out synthesized/guessed inputs on which the original's `while` loop does not finish
    (see screen.py); a callable left without inputs becomes unverifiable with the reason."""
    infos = {c.qualname: c.original for c in changes.callables if c.original is not None}
    risky = [
        task for task in plan.tasks
        if task.kind == "calls" and plan.sources.get(task.id) in ("synthesized", "guessed") and task.id in infos
        and screen_mod.needs_screening(original, infos[task.id].start_line, infos[task.id].end_line)
    ]
    if not risky:
        return
    probe = Job(module_name, filename, original, sys_path, True, [], filename=filename)
    kept, dropped = screen_mod.screen(probe, risky, choice, cwd=cwd)
    for task in risky:
        task.calls_pickle = kept[task.id]
        if task.id in dropped:
            verification.notes.append(f"inputs: {task.id}: {dropped[task.id]}")
        if not inputs_mod.pickle.loads(task.calls_pickle):
            plan.tasks.remove(task)
            results[task.id] = UnitResult(task.id, task.target_kind, plan.sources[task.id], unverifiable(
                f"{task.id}: no inputs ({dropped.get(task.id, 'every made-up input was left out')})", SUPPLY.format(name=task.id)
            ))


def _main_block_calls_it(recording: inputs_mod.Recording | None, name: str) -> bool:
    """Whether running the `__main__` block in each child may give calls of `name` that the
    recording could not: it called `name` with values it could not keep, or the script failed
    before it called `name` at all."""
    if recording is None:
        return False
    if recording.skipped.get(name, "").startswith("a call could not be recorded"):
        return True
    return recording.main_failed and not recording.count(name) and name not in recording.skipped


def _skip_note(recording: inputs_mod.Recording, name: str) -> str:
    note = recording.skipped.get(name)
    return f" ({note})" if note else ""


def _version_failure(before: VersionResult, after: VersionResult) -> Evidence | None:
    if not before.ok and not after.ok:
        return unverifiable(f"neither version could run: original: {before.error}; rewritten: {after.error}")
    if not before.ok:
        return unverifiable(f"the original could not run: {before.error}", "check that the file imports in this environment")
    if not after.ok:
        return Evidence(
            "mismatch",
            f"the rewritten module failed where the original ran: {after.error}",
            {"reason": "raised", "got": after.error},
        )
    return None


def verify_change(
    original: str,
    rewritten: str,
    path: str,
    *,
    findings: list[Finding] = (),  # type: ignore[assignment]
    reference: str | None = None,
    device: str | DeviceChoice = "auto",
    examples: str | None = None,
    record_cmd: str | None = None,
    record_limit: int = DEFAULT_RECORD_LIMIT,
    recording: inputs_mod.Recording | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    parallel: bool = True,
    cwd: str | None = None,
    record_timeout: float = DEFAULT_RECORD_TIMEOUT,
    gather: bool = True,
) -> FileVerification:
    """Verify that `rewritten` behaves like `original` (the text of the file at `path`).

    With neither `examples`, `record_cmd` nor `recording`, inputs are gathered without
    configuration (`gather.py`: the project's tests, doctests, the `__main__` block, within
    `record_timeout` seconds) unless `gather` is False; synthesis comes last either way."""
    findings = list(findings)
    examples_file = inputs_mod.read_examples(examples) if examples else None
    if reference is None:
        reference = (examples_file.reference if examples_file and examples_file.reference else None) or reference_for(findings)
    choice = device if isinstance(device, DeviceChoice) else choose_device(device)
    verification = FileVerification(path=path, evidence=unverifiable("not run"), reference=reference, device=choice.description)
    if original == rewritten:
        verification.evidence = unverifiable("nothing was rewritten")
        verification.findings = findings
        return verification
    try:
        same_code = ast.dump(ast.parse(original)) == ast.dump(ast.parse(rewritten))
        changes = changed_callables(original, rewritten)
    except SyntaxError as exc:
        verification.evidence = unverifiable(f"cannot parse: {exc}")
        verification.findings = findings
        return verification
    if same_code:
        # Comments, noqa codes or layout only: equal syntax trees compile to the same code.
        verification.evidence = Evidence(
            "verified", "the rewrite changes no code (the syntax trees are equal); nothing to run",
            {"inputs": 0, "reason": "equal-syntax-trees", "compiles": [0, 0]},
        )
        verification.findings = [
            f if f.fix is None else f.with_fix(replace(f.fix, evidence=verification.evidence)) for f in findings
        ]
        return verification
    module_name, sys_path = module_name_for(path)
    if recording is not None and recording.module_name:
        module_name = recording.module_name
    targets = {c.qualname: c.kind for c in changes.callables if c.status == "changed"}
    if record_cmd and recording is None:
        recording = inputs_mod.record_calls(
            record_cmd, path=path, targets=targets, limit=record_limit, cwd=cwd, timeout=record_timeout,
            module_name=module_name, sys_path=sys_path, progress=f"recording inputs: {record_cmd}",
        )
        if recording.module_name:
            module_name = recording.module_name
        recorded = sum(len(v) for v in recording.calls.values())
        stopped = f", stopped at the time limit ({record_timeout:g} s)" if recording.timed_out else ""
        verification.notes.append(
            f"recorded {recorded} call(s) while running {record_cmd!r} (exit status {recording.returncode}{stopped})"
        )
        verification.notes.extend(f"recorder: {e}" for e in recording.errors)
    elif gather and recording is None and examples_file is None and targets:
        gathered = gather_inputs(
            path, original, targets, module_name=module_name, sys_path=sys_path, limit=record_limit, timeout=record_timeout
        )
        verification.notes.extend(gathered.notes)
        if gathered.recording.calls or gathered.recording.skipped or gathered.recording.main_failed:
            recording = gathered.recording
            module_name = recording.module_name or module_name
    context = inputs_mod.Context(original, module_name, sys_path)
    plan = _plan(changes, examples_file, recording, context)
    results: dict[str, UnitResult] = {
        name: replace(unit, evidence=replace(unit.evidence, input_source=unit.evidence.input_source or unit.source))
        for name, unit in plan.units.items()
    }
    families = _families(findings, changes)
    added = fields_added(original, rewritten)
    if plan.tasks and not choice.available:
        for task in plan.tasks:
            results[task.id] = UnitResult(task.id, task.target_kind, plan.sources[task.id], unverifiable(choice.description))
    elif plan.tasks:
        filename = str(Path(path))
        _screen_made_up_inputs(plan, changes, original, results, verification, choice, module_name, filename, sys_path, cwd)
    if plan.tasks and choice.available:
        child_timeout = STARTUP_ALLOWANCE + timeout * len(plan.tasks)
        filename = str(Path(path))
        jobs = [
            Job(module_name, filename, original, sys_path, reference == "eager", plan.tasks, filename=filename, task_timeout=timeout),
            Job(module_name, filename, rewritten, sys_path, False, plan.tasks, filename=f"{filename} (rewritten by jaxfix)", task_timeout=timeout,
                reference_source=original if any(t.kind == "main" for t in plan.tasks) else None,
                reference_eager=reference == "eager"),
        ]
        before, after = run_versions(jobs, choice, timeout=child_timeout, parallel=parallel, cwd=cwd)
        verification.original, verification.rewritten = before, after
        used = before.device or after.device or choice.description
        verification.device = used
        failure = _version_failure(before, after)
        for task in plan.tasks:
            kind = "drive" if task.kind == "drive" else task.target_kind
            if failure is not None:
                evidence = failure
            else:
                evidence = judge(
                    task.id, plan.sources[task.id], before.tasks[task.id], after.tasks[task.id], device=used,
                    reference=reference, family=families.get(task.id, ""), added_fields=added,
                    arms=branches.arms_of(original, task.target) if task.target and reference == "eager" else None,
                )
            if task.kind == "drive" and examples_file and examples_file.expect_compiles is not None:
                evidence = replace(evidence, data={**evidence.data, "expect_compiles": list(examples_file.expect_compiles)})
            results[task.id] = UnitResult(task.id, kind, plan.sources[task.id], evidence)
    drive = results.get("drive()")
    if drive is not None:
        # The drive exercises the module as a whole: it stands in for units without inputs of their own.
        for name, unit in list(results.items()):
            if name != "drive()" and unit.source == "none" and unit.evidence.verdict == "unverifiable":
                results[name] = UnitResult(name, unit.kind, "drive", drive.evidence)
    verification.units = list(results.values())
    verification.evidence = combine([u.evidence for u in verification.units]) if verification.units else unverifiable(
        "no changed function, method or property was found", "supply a drive(mod) in --examples FILE"
    )
    attached = []
    paying = payoff.paying(findings)
    for finding in findings:
        if finding.fix is None:
            attached.append(finding)
            continue
        names = units_for_finding(finding, changes)
        chosen = [results[n].evidence for n in names if n in results]
        if drive is not None and not any(ev.verdict == "mismatch" for ev in chosen):
            chosen = [drive.evidence] + [ev for ev in chosen if ev.verdict != "unverifiable"]
        evidence = combine(chosen) if chosen else verification.evidence
        evidence = payoff.judge(finding, evidence, original, paying)
        attached.append(finding.with_fix(replace(finding.fix, evidence=evidence)))
    verification.findings = attached
    return verification


def verify_result(result: FileResult, **options: Any) -> FileVerification:
    """Verify the fixes `analyze(..., fix=True)` applied to one file (see `verify_change`)."""
    if result.fixed_source is None or not result.changed:
        return FileVerification(path=result.path, evidence=unverifiable("nothing was rewritten"), findings=list(result.fixes_applied))
    if result.path.endswith(".ipynb"):  # its text is the notebook's JSON: its cells, run in order, are the inputs
        from jaxfix.verify.notebook import verify_notebook

        return verify_notebook(result, **options)
    verification = verify_change(result.source, result.fixed_source, result.path, findings=list(result.fixes_applied), **options)
    return _count_jit_placement_past_eager_fixes(result, verification, options)


def _count_jit_placement_past_eager_fixes(result: FileResult, verification: FileVerification, options: dict) -> FileVerification:
    """A control-flow fix in the file makes the original run eagerly (it cannot run under jit),
    and an eager run compiles nothing, so the jit-placement fixes beside it got no compile counts
    (a training script with a traced `if` and a jit rebuilt per step). Verify those again from
    the file with only its other fixes applied: both sides then run under jit, and the counts say
    whether the hoist pays (`payoff.judge`: verified or ineffective)."""
    if verification.reference != "eager" or options.get("reference"):
        return verification
    placement = [f for f in result.fixes_applied if f.fix is not None and _is_jit_placement(f)]
    others = [f for f in result.fixes_applied if f.fix is not None and not _is_jit_placement(f)]
    if not placement or not others:
        return verification
    # the verifier is a front end: the engine is below it (imported here, where it is needed)
    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config
    from jaxfix.model import Safety

    config = Config(
        select=tuple(sorted({f.code for f in others})), unsafe_fixes=any(f.fix.safety is Safety.UNSAFE for f in others)
    )
    base = analyze(result.source, result.path, config, fix=True)
    if base.error or base.fixed_source is None or base.fixed_source == result.fixed_source:
        return verification
    second = verify_change(base.fixed_source, result.fixed_source, result.path, findings=placement, reference="as-written", **options)
    counted = {(f.code, f.line, f.column): f for f in second.findings}
    verification.findings = [counted.get((f.code, f.line, f.column), f) if _is_jit_placement(f) else f for f in verification.findings]
    verification.notes.append(
        "jit-placement fixes: compared with the file after its other fixes, both run under jit (the original ran eagerly)"
    )
    return verification


def _is_jit_placement(finding: Finding) -> bool:
    return figures.family_for(finding.code, family_of(finding)[1]) == figures.JIT_PLACEMENT


def verify_file_result(
    result: FileResult,
    *,
    device: str = "auto",
    examples: str | None = None,
    record_cmd: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    **options: Any,
) -> list[Finding]:
    """The applied fixes of `result`, each with `fix.evidence` set. This is what the CLI calls."""
    return verify_result(
        result, device=device, examples=examples, record_cmd=record_cmd, timeout=timeout, **options
    ).findings
