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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jaxfix.model import Evidence, FileResult, Finding
from jaxfix.verify import apart, branches, figures, payoff
from jaxfix.verify import inputs as inputs_mod
from jaxfix.verify import screen as screen_mod
from jaxfix.verify._recorder.run_main import main_blocks
from jaxfix.verify.changed import (
    ChangeSet,
    changed_callables,
    family_of,
    units_for_finding,
)
from jaxfix.verify.device import DeviceChoice, choose_device
from jaxfix.verify.gather import DEFAULT_RECORD_TIMEOUT, SuiteRun, gather_inputs
from jaxfix.verify.intended import added_fields as fields_added
from jaxfix.verify.intended import uncached_classes
from jaxfix.verify.protocol import Job, Task, VersionResult
from jaxfix.verify.runner import STARTUP_ALLOWANCE, run_pair
from jaxfix.verify.verdicts import (  # noqa: F401 - judge, combine, MAIN_BLOCK: the verifier's API
    MAIN_BLOCK,
    SUPPLY,
    combine,
    judge,
    unverifiable,
)
from jaxfix.verify.watch import watch_for

DEFAULT_TIMEOUT = 60.0
DEFAULT_RECORD_LIMIT = 5


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
    parts: list["FileVerification"] = field(default_factory=list)  # one per rule, where they were verified apart

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
    run_main: bool = True,
) -> _Plan:
    """Per changed callable, its inputs: recorded (--record, or the project's tests, doctests and
    __main__ block), declared, covered by a drive, else synthesized (`context` lets synthesis build
    the project's classes)."""
    plan = _Plan()
    # whether the module has a `__main__` block: asked only where a callable's calls could not be
    # recorded, and then once for the module
    has_main = functools.cache(lambda: run_main and context is not None and bool(main_blocks(context.source)))
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
        if _signature(change.original) != _signature(change.rewritten):
            # a fix that adds a parameter (JAX503 passes the constant in): calls of the original
            # cannot be made on the rewrite; its callers, changed alike, answer for it
            plan.units[name] = UnitResult(name, kind, "none", unverifiable(
                f"{name}: its parameters changed ({', '.join(_signature(change.original))} -> "
                f"{', '.join(_signature(change.rewritten))}); judged through its changed callers",
                signature_changed=True,
            ))
            continue
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


def _signature(info) -> tuple[str, ...]:
    """A callable's parameters by name and kind (what a recorded call binds to)."""
    return tuple(f"{p.name}{'=' if p.default is not None else ''}" for p in info.params) if info is not None else ()


def _families(findings: list[Finding], changes: ChangeSet) -> dict[str, str]:
    """Per changed callable (and the drive), the family of the fixes it answers for."""
    out: dict[str, str] = {}
    for finding in findings:  # applied fixes, or the original's findings an edit of the user's answers for
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
    announce: Callable[[str], None] | None = None,
    run_main: bool = True,
    suite_run: SuiteRun | None = None,
    runs: dict[bytes, bytes] | None = None,
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
    if record_cmd:
        shared = recording is not None  # `verify_results` ran CMD once for every changed file
        if recording is None:
            recording = inputs_mod.record_calls(
                record_cmd, path=path, targets=targets, limit=record_limit, cwd=cwd, timeout=record_timeout,
                module_name=module_name, sys_path=sys_path, progress=f"recording inputs: {record_cmd}",
                eager=list(targets) if reference == "eager" else (),
            )
        if recording.module_name:
            module_name = recording.module_name
        once = ", one run for all changed files" if shared else ""
        verification.notes.extend(_recording_notes(recording, record_cmd, record_timeout, once))
    elif gather and recording is None and examples_file is None and targets:
        gathered = gather_inputs(
            path, original, targets, module_name=module_name, sys_path=sys_path, limit=record_limit, timeout=record_timeout,
            announce=announce, run_main=run_main, eager=reference == "eager", suite_run=suite_run,
        )
        verification.notes.extend(gathered.notes)
        if gathered.recording.calls or gathered.recording.skipped or gathered.recording.main_failed:
            recording = gathered.recording
            module_name = recording.module_name or module_name
    context = inputs_mod.Context(original, module_name, sys_path)
    plan = _plan(changes, examples_file, recording, context, run_main=run_main)
    results: dict[str, UnitResult] = {
        name: replace(unit, evidence=replace(unit.evidence, input_source=unit.evidence.input_source or unit.source))
        for name, unit in plan.units.items()
    }
    families = _families(findings, changes)
    added = fields_added(original, rewritten)
    uncached = uncached_classes(original, rewritten)
    if plan.tasks and not choice.available:
        for task in plan.tasks:
            results[task.id] = UnitResult(task.id, task.target_kind, plan.sources[task.id], unverifiable(choice.description))
    elif plan.tasks:
        filename = str(Path(path))
        _screen_made_up_inputs(plan, changes, original, results, verification, choice, module_name, filename, sys_path, cwd)
    if plan.tasks and choice.available:
        child_timeout = STARTUP_ALLOWANCE + timeout * len(plan.tasks)
        filename = str(Path(path))
        watch = watch_for([f.code for f in findings])
        jobs = [
            Job(module_name, filename, original, sys_path, reference == "eager", plan.tasks, filename=filename, task_timeout=timeout,
                watch=watch),
            Job(module_name, filename, rewritten, sys_path, False, plan.tasks, filename=f"{filename} (rewritten by jaxfix)", task_timeout=timeout,
                reference_source=original if any(t.kind == "main" for t in plan.tasks) else None,
                reference_eager=reference == "eager", watch=watch),
        ]
        before, after = run_pair(jobs, choice, timeout=child_timeout, parallel=parallel, cwd=cwd, runs=runs)
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
                    codes=[f.code for f in findings], uncached=uncached,
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
        if names and all(results[n].evidence.data.get("signature_changed") for n in names if n in results):
            names = [n for n in units_for_finding(replace(finding, line=0), changes)  # every changed callable
                     if n in results and not results[n].evidence.data.get("signature_changed")] or names
        chosen = [results[n].evidence for n in names if n in results]
        if drive is not None and not any(ev.verdict == "mismatch" for ev in chosen):
            chosen = [drive.evidence] + [ev for ev in chosen if ev.verdict != "unverifiable"]
        evidence = combine(chosen) if chosen else verification.evidence
        evidence = payoff.judge(finding, evidence, original, paying)
        attached.append(finding.with_fix(replace(finding.fix, evidence=evidence)))
    verification.findings = attached
    return verification


def verify_result(result: FileResult, **options: Any) -> FileVerification:
    """Verify the fixes `analyze(..., fix=True)` applied to one file (see `verify_change`). Where
    they come from two rules or more, each rule's fixes are judged on the original with only them
    applied (`apart.split`), so a verdict and its figures belong to that fix alone; `apart=False`
    judges them together, on the one text with every fix (what a fixture's golden output promises
    as a whole)."""
    separately = options.pop("apart", True)
    if result.fixed_source is None or not result.changed:
        return FileVerification(path=result.path, evidence=unverifiable("nothing was rewritten"), findings=list(result.fixes_applied))
    parts = apart.split(result) if separately else None
    if parts is not None:
        return _verify_apart(result, parts, options)
    if result.path.endswith(".ipynb"):  # its text is the notebook's JSON: its cells, run in order, are the inputs
        from jaxfix.verify.notebook import verify_notebook

        return verify_notebook(result, **options)
    verification = verify_change(result.source, result.fixed_source, result.path, findings=list(result.fixes_applied), **options)
    return _count_jit_placement_past_eager_fixes(result, verification, options)


def _verify_apart(result: FileResult, parts: list[apart.Part], options: dict[str, Any]) -> FileVerification:
    """One verification per part (`apart.split`), each of the original against the original with
    only that part's fixes applied. What the parts share runs once: the inputs are gathered (or
    `--record CMD` runs) once for every changed callable, and an original run that two parts ask
    for alike (a notebook's cells; the same callables watched alike) is reused (`runner.run_pair`)."""
    options = dict(options)
    runs: dict[bytes, bytes] = options.pop("runs", None) or {}
    notes: list[str] = []
    notebook = result.path.endswith(".ipynb")
    if notebook:
        from jaxfix.engine.notebook import NotebookError, read
        from jaxfix.verify.notebook import verify_notebook, watched_in

        options["watch"] = watched_in(result)  # every part watches the same functions: one original run
        try:
            options["original_nb"] = read(result.source)[1]  # read once: its masks are random tokens
        except NotebookError:
            pass
    elif options.get("recording") is None and not options.get("examples"):
        recording, notes = _inputs_once(result, parts, options)
        options["recording"], options["gather"] = recording, False
    done: list[FileVerification] = []
    for part in parts:
        one = replace(result, fixed_source=part.text, fixes_applied=list(part.findings))
        if notebook:
            verification = verify_notebook(one, runs=runs, **options)
        else:
            verification = verify_change(result.source, part.text, result.path, findings=list(part.findings), runs=runs, **options)
            verification = _count_jit_placement_past_eager_fixes(one, verification, options)
        verification.findings = _said_together(verification.findings, part.together)
        done.append(verification)
    _on_the_others(result, parts, done, options, runs)
    judged = {apart.site(f): f for v in done for f in v.findings}
    findings = [judged.get(apart.site(f), f) for f in result.fixes_applied]
    ran = next((v for v in done if v.original is not None), done[0])
    merged = FileVerification(
        path=result.path,
        evidence=combine([f.fix.evidence for f in findings if f.fix is not None and f.fix.evidence is not None])
        if findings else unverifiable("nothing was rewritten"),
        units=[u for v in done for u in v.units],
        findings=findings,
        device=ran.device,
        reference=reference_for(list(result.fixes_applied)),
        original=ran.original,
        rewritten=ran.rewritten,
        parts=done,
    )
    alone = sum(1 for p in parts if not p.together)
    merged.notes = list(dict.fromkeys([
        *notes, *(n for v in done for n in v.notes),
        f"each rule's fixes verified on their own ({alone} of {len(parts)} part(s) alone"
        f"{'' if alone == len(parts) else ', the rest with every fix applied'})",
    ]))
    return merged


def _on_the_others(
    result: FileResult, parts: list[apart.Part], done: list[FileVerification], options: dict[str, Any], runs: dict
) -> None:
    """A part that ran but was not verified alone is judged again on the file with the other
    parts' fixes applied, against the file with every fix (the difference is still only its own
    fixes); its verdict says so. Alone, the original may fail before it reaches the fix's code, or
    raise where the fix runs (a traced `if` beside a hoisted jit, which the other fix repairs); or
    the rewrite with only this fix still holds another control-flow site that raises under jit
    where the eager original ran (a `while` beside a fixed `if`). The second verdict is kept only
    where it is `verified` (a fix that is wrong stays wrong on top of the others)."""
    for part, verification in zip(parts, done):
        evidences = [f.fix.evidence for f in verification.findings if f.fix is not None and f.fix.evidence is not None]
        if part.together or not evidences or all(e.verdict in ("verified", "ineffective") for e in evidences):
            continue
        if any(": no inputs" in e.detail or e.data.get("signature_changed") for e in evidences):
            continue  # nothing ran: the other fixes give it no inputs either
        others = [f for p in parts if p is not part for f in p.findings]
        base = apart.fixed_with(result, others)
        if base is None or base.fixed_source is None or result.fixed_source is None:
            continue
        one = replace(result, source=base.fixed_source, fixes_applied=list(part.findings))
        if result.path.endswith(".ipynb"):
            from jaxfix.verify.notebook import verify_notebook

            again = verify_notebook(one, runs=runs, **{k: v for k, v in options.items() if k != "original_nb"})
        else:
            again = verify_change(base.fixed_source, result.fixed_source, result.path, findings=list(part.findings), runs=runs, **options)
        if not all(f.fix.evidence is not None and f.fix.evidence.verdict == "verified" for f in again.findings if f.fix is not None):
            continue
        codes = ", ".join(sorted({f.code for f in others}))
        first = next(e for e in evidences if e.verdict not in ("verified", "ineffective"))
        alone = f"{first.verdict}: {first.detail.splitlines()[0]}"
        why = f"judged on the file with its other fixes applied ({codes}): alone, {alone}"
        verification.findings = _said_together(again.findings, why)
        verification.units, verification.notes = again.units, [*verification.notes, *again.notes]
        verification.notes.append(f"{', '.join(sorted({f.code for f in part.findings}))}: {why}")


def _said_together(findings: list[Finding], why: str) -> list[Finding]:
    """`findings` whose fix evidence says `why` it was judged with other fixes (`apart.said_together`)."""
    return [
        f.with_fix(replace(f.fix, evidence=apart.said_together(f.fix.evidence, why)))
        if f.fix is not None and f.fix.evidence is not None else f
        for f in findings
    ]


def _recording_notes(recording: inputs_mod.Recording, record_cmd: str, record_timeout: float, once: str = "") -> list[str]:
    """What a run of `--record CMD` recorded, for the verdict's notes."""
    recorded = sum(len(v) for v in recording.calls.values())
    stopped = f", stopped at the time limit ({record_timeout:g} s)" if recording.timed_out else ""
    return [
        f"recorded {recorded} call(s) while running {record_cmd!r} (exit status {recording.returncode}{stopped}{once})",
        *(f"recorder: {e}" for e in recording.errors),
    ]


def _inputs_once(result: FileResult, parts: list[apart.Part], options: dict[str, Any]) -> tuple[inputs_mod.Recording | None, list[str]]:
    """The inputs every part uses: one gathering (or one run of `--record CMD`) for the callables
    any fix changed; the callables a control-flow fix changed run eagerly while recording where
    the run as written fails (and always under `--record CMD`, which runs once)."""
    changes = changed_callables(result.source, result.fixed_source or result.source)
    targets = {c.qualname: c.kind for c in changes.callables if c.status == "changed"}
    if not targets:
        return None, []
    eager: set[str] = set()
    for part in parts:
        if (options.get("reference") or reference_for(list(part.findings))) == "eager":
            eager.update(c.qualname for c in changed_callables(result.source, part.text).callables if c.status == "changed")
    module_name, sys_path = module_name_for(result.path)
    limit = int(options.get("record_limit", DEFAULT_RECORD_LIMIT))
    record_timeout = float(options.get("record_timeout", DEFAULT_RECORD_TIMEOUT))
    record_cmd = options.get("record_cmd")
    if record_cmd:
        recording = inputs_mod.record_calls(
            record_cmd, path=result.path, targets=targets, limit=limit, cwd=options.get("cwd"), timeout=record_timeout,
            module_name=module_name, sys_path=sys_path, progress=f"recording inputs: {record_cmd}", eager=sorted(eager),
        )
        options["record_cmd"] = None  # the parts use this recording: CMD runs once
        return recording, _recording_notes(recording, record_cmd, record_timeout)
    if not options.get("gather", True):
        return None, []
    common = dict(module_name=module_name, sys_path=sys_path, limit=limit, timeout=record_timeout,
                  run_main=options.get("run_main", True), suite_run=options.get("suite_run"))
    # Under jit first: a control-flow fix's callable runs eagerly while recording only where the
    # program fails under jit (its original raises there), since an eager run of a training loop
    # costs minutes (a scan of 300 steps: 69 s eagerly, 9 s as written).
    gathered = gather_inputs(result.path, result.source, targets, announce=options.get("announce"), **common)
    failed = gathered.recording.main_failed or gathered.recording.returncode not in (0, 5, None)
    if eager and failed and not gathered.recording.timed_out:
        again = gather_inputs(result.path, result.source, targets, eager=sorted(eager), **common)
        again.notes = [f"{n} (again with {', '.join(sorted(eager))} run eagerly: the run as written failed)" for n in again.notes]
        gathered = again
    recording = gathered.recording
    if not (recording.calls or recording.skipped or recording.main_failed):
        return None, gathered.notes
    return recording, gathered.notes


def verify_results(results: list[FileResult], **options: Any) -> list[FileVerification]:
    """`verify_result` for each changed file of one run; with zero configuration, the project's
    test suite runs once for all of them (each file watched in the same recording), not once per
    file (`suite.select_tests` per file, their union per project root)."""
    shared: dict[str, SuiteRun] = {}
    changed = [r for r in results if r.fixed_source is not None and r.changed]
    if options.get("record_cmd") and not options.get("examples"):
        # `--record CMD` likewise: one run of CMD watching every changed file, not one per file
        recorded = _record_once(changed, options)
        return [verify_result(r, **options, recording=recorded.get(r.path)) for r in results]
    if not options.get("examples") and options.get("gather", True):
        shared = _run_suite_once(changed, options)
    return [verify_result(r, **options, suite_run=shared.get(r.path)) for r in results]


def _watch(result: FileResult) -> dict | None:
    """What the recorder watches in `result`'s file: its changed callables, how to import it, and
    which callables run eagerly (the original of a control-flow fix raises under jit); None when
    no callable changed."""
    try:
        changes = changed_callables(result.source, result.fixed_source or result.source)
    except SyntaxError:
        return None
    targets = {c.qualname: c.kind for c in changes.callables if c.status == "changed"}
    if not targets:
        return None
    module_name, sys_path = module_name_for(result.path)
    return {"path": result.path, "targets": targets, "module_name": module_name, "sys_path": sys_path,
            "eager": list(targets) if reference_for(list(result.fixes_applied)) == "eager" else ()}


def _record_once(results: list[FileResult], options: dict[str, Any]) -> dict[str, inputs_mod.Recording]:
    """One run of `record_cmd` with the recorder watching every changed file (two or more); a
    single file records in `verify_result` as before."""
    from jaxfix.verify.recording import record_files

    watched = [(r, w) for r in results if (w := _watch(r)) is not None]
    if len(watched) < 2:
        return {}
    command = options["record_cmd"]
    recordings = record_files(
        command, [w for _, w in watched], limit=int(options.get("record_limit", DEFAULT_RECORD_LIMIT)),
        timeout=float(options.get("record_timeout", DEFAULT_RECORD_TIMEOUT)), cwd=options.get("cwd"), source="recorded",
        progress=f"recording inputs: {command} (once for {len(watched)} changed files)",
    )
    return {r.path: recording for (r, _), recording in zip(watched, recordings)}


def _run_suite_once(results: list[FileResult], options: dict[str, Any]) -> dict[str, SuiteRun]:
    from jaxfix.verify import suite
    from jaxfix.verify.recording import record_files

    by_root: dict[Path, list[tuple[FileResult, dict, list[Path], str | None]]] = {}
    for result in results:
        watch = _watch(result)
        if watch is None:
            continue
        root, why, tests = suite.select_tests(result.path)
        if not tests:
            continue
        by_root.setdefault(root, []).append((result, watch, tests, why))
    out: dict[str, SuiteRun] = {}
    timeout = float(options.get("record_timeout", DEFAULT_RECORD_TIMEOUT))
    announce = options.get("announce")
    for root, files in by_root.items():
        if len(files) < 2:
            continue  # one file: its own gathering runs the same tests
        tests = sorted({t for *_, file_tests, _ in files for t in file_tests})
        if announce is not None:
            announce(
                f"{root}: will run the original code to record inputs: {len(tests)} test file(s) of the project's pytest suite, "
                f"once for {len(files)} changed files; time limit {timeout:g} s (--record-timeout)"
            )
        recordings = record_files(
            suite.pytest_command(root, tests), [watch for _, watch, _, _ in files],
            limit=int(options.get("record_limit", DEFAULT_RECORD_LIMIT)), timeout=timeout, cwd=str(root), source="pytest",
            progress=f"recording inputs: pytest on {len(tests)} test file(s) for {len(files)} changed files",
        )
        for (result, _, _, why), recording in zip(files, recordings):
            out[result.path] = SuiteRun(recording, tests, why, len(files), timeout)
    return out


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
