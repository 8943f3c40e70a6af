"""`fix --verify` on a notebook: its code cells, run in order, are the inputs.

A notebook has no callable a test calls: its cells are a script whose `__main__` block is the
cell sequence. So each version (original, rewritten) runs as the joined module the engine
analysed (`jaxfix.engine.notebook.runnable`: IPython input inert, a timing magic's statement run
once) from top to bottom in a fresh `__main__` namespace, in its own child (`runner`, `child`'s
drive task, under `--verify-timeout`), twice: the second run is the steady state whose compiles are
counted, as for a script. What is compared is what a notebook shows: the values its cells left
in the namespace (arrays, numbers and pytrees of them, each named with the cell that last binds
it), and the values of the cells' calls of each top-level function the fix changed (`watched`,
as `verify` watches a script's `__main__` calls). A value that differs between two runs of the
original (a clock, an unseeded random draw) says nothing and is left out, as is a name only one
version has (a hoisted jit). A fix whose changed statements never ran is unverifiable. Positions in
the evidence are the notebook's: `cell N`, `cell N, line L`.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from jaxfix.engine.notebook import runnable
from jaxfix.model import Evidence, FileResult, Finding
from jaxfix.verify import payoff
from jaxfix.verify.compare import identical

NAME = "notebook cells"
SOURCE = "notebook"

# The drive each child runs: the joined module, executed as `__main__` in a fresh namespace.
LINES = "lines run"  # the drive's output that is no value: the module lines its first run ran
DRIVE = (
    f"LINES = {LINES!r}\n"
    + """
import ast, builtins, collections, contextlib, functools, linecache, types


def _shown(value):
    import jax
    import numpy as np

    if isinstance(value, (types.ModuleType, type)) or callable(value):
        return False
    try:
        leaves = jax.tree.leaves(value)
    except Exception:
        return False
    kinds = (jax.Array, np.ndarray, np.generic, bool, int, float, complex)
    return bool(leaves) and all(isinstance(leaf, kinds) for leaf in leaves)


_runs = []
CALLS = 8  # calls of a watched function kept per run


class _Watched:
    # A function the fix changed, as the cells see it: each call's value is kept (not those made
    # inside a trace); attributes (`.lower`, `.clear_cache`) are the function's own.

    def __init__(self, name, target, kept):
        self.__wrapped__, self._name, self._kept = target, name, kept
        functools.update_wrapper(self, target)

    def __call__(self, *args, **kwargs):
        import jax

        value = self.__wrapped__(*args, **kwargs)
        kept = self._kept.setdefault(self._name, [])
        try:
            traced = any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves((args, kwargs, value)))
        except Exception:
            traced = True
        if len(kept) < CALLS and not traced and _shown(value):
            kept.append(value)
        return value

    def __getattr__(self, name):
        return getattr(self.__wrapped__, name)


def drive(mod):
    from jaxfix.verify.observe import lines_run

    text, filename = mod.JAXFIX_CELLS, mod.JAXFIX_FILENAME
    linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
    namespace = {"__name__": "__main__", "__builtins__": builtins, "__file__": mod.__file__,
                 "display": lambda *args, **kwargs: None}  # IPython's display(): output only
    ran = collections.Counter()  # observe.lines_run counts each line's executions
    first = not _runs
    _runs.append(1)
    calls = {}
    tree = compile(text, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    with lines_run(filename, ran) if first else contextlib.nullcontext():  # the first run only
        for statement in tree.body:  # one at a time: a changed function is watched once defined
            exec(compile(ast.Module([statement], []), filename, "exec", dont_inherit=True), namespace)
            for name in mod.JAXFIX_WATCH:
                target = namespace.get(name)
                if callable(target) and not isinstance(target, _Watched):
                    namespace[name] = _Watched(name, target, calls)
    cell_of = mod.JAXFIX_CELL_OF
    out = {f"{name} (cell {cell_of[name]})": value for name, value in namespace.items()
           if name in cell_of and not name.startswith("_") and _shown(value)}
    for name, values in calls.items():
        for number, value in enumerate(values, 1):
            out[f"{name} call {number} (defined in cell {cell_of.get(name, '?')})"] = value
    if first:
        out[LINES] = ",".join(map(str, sorted(ran)))
    return out
"""
)


def cell_of_names(module) -> dict[str, int]:
    """Per top-level name of the joined module, the (1-based) notebook cell that last binds it."""
    starts, lines = module.starts(), module.text.splitlines()
    out: dict[str, int] = {}
    for stmt in ast.parse(module.text).body:
        names: list[str] = []
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(stmt.name)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            names.extend((a.asname or a.name).split(".")[0] for a in stmt.names)
        else:
            stack: list[ast.AST] = [stmt]
            while stack:  # stores outside nested scopes (loops, ifs, withs at top level)
                node = stack.pop()
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.append(node.id)
                if not isinstance(
                    node,
                    ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda,
                ):
                    stack.extend(ast.iter_child_nodes(node))
        cell = module.locate(stmt.lineno, 1, starts, lines)[0]
        for name in names:
            out[name] = cell
    return out


def _job_source(text: str, filename: str, cell_of: dict[str, int], watch: list[str]) -> str:
    """The module each child imports: only data (importing runs nothing); the drive runs it."""
    return (
        f"JAXFIX_CELLS = {text!r}\nJAXFIX_FILENAME = {filename!r}\nJAXFIX_CELL_OF = {cell_of!r}\n"
        f"JAXFIX_WATCH = {watch!r}\n"
    )


def watched(before_text: str, after_text: str) -> list[str]:
    """The functions defined at the top of the cells whose definition the fix changed: the cells'
    calls of them are compared, as `verify` compares a script's `__main__` calls."""
    from jaxfix.verify.changed import changed_callables

    changes = changed_callables(before_text, after_text)
    return sorted(
        c.qualname
        for c in changes.callables
        if c.status == "changed" and c.kind == "function" and "." not in c.qualname
    )


def in_cells(text: str, filename: str, module) -> str:
    """`text` with each `File "<filename>", line N` (and `line N` after it) as `cell C, line L`."""
    starts, lines = module.starts(), module.text.splitlines()

    def one(match: re.Match) -> str:
        cell, line, _ = module.locate(int(match.group(2)), 1, starts, lines)
        return f"{match.group(1)}cell {cell}, line {line}"

    return re.sub(rf'(File "{re.escape(filename)}", )line (\d+)', one, text)


def _at_module(finding: Finding, module) -> Finding:
    """`finding` (at a cell's line) at its line in the joined module, as `payoff` reads it."""
    order = [c.index + 1 for c in module.cells]
    if finding.cell not in order:
        return finding
    start = module.starts()[order.index(finding.cell)]
    return replace(finding, line=start + finding.line - 1, end_line=start + finding.end_line - 1)


def _drop(task, keys: set[str]) -> None:
    for key in keys:
        for suffix in ("", " (2nd run)"):
            task.outputs.pop(key + suffix, None)
            task.inputs.pop(key + suffix, None)


def watched_in(result: FileResult) -> list[str]:
    """`watched` for a notebook result (its JSON texts): the functions every fix together changed."""
    from jaxfix.engine.notebook import NotebookError, read

    try:
        (_, before_nb), (_, after_nb) = read(result.source), read(result.fixed_source or "")
        return watched(before_nb.text, after_nb.text)
    except (NotebookError, SyntaxError):
        return []


def verify_notebook(
    result: FileResult,
    *,
    device: Any = "auto",
    timeout: float | None = None,
    parallel: bool = True,
    cwd: str | None = None,
    runs: dict[bytes, bytes] | None = None,
    watch: list[str] | None = None,
    original_nb: Any = None,
    **ignored: Any,
) -> Any:
    """Verify the fixes applied to a notebook (`result.source` and `fixed_source` are its JSON
    text) by running both versions' cells; the answer is `api.verify_result`'s. Where a notebook's
    fixes are verified one rule at a time (`api._verify_apart`), each gets the functions all of
    them changed as `watch`, and the original read once (`original_nb`: reading masks IPython input
    with fresh random tokens), so the original's run is the same job each time and runs once (`runs`)."""
    from jaxfix.engine.notebook import (  # the engine is below this front end
        NotebookError,
        read,
    )
    from jaxfix.verify.api import (
        DEFAULT_TIMEOUT,
        FileVerification,
        combine,
        reference_for,
        unverifiable,
    )
    from jaxfix.verify.device import DeviceChoice, choose_device
    from jaxfix.verify.protocol import Job, Task
    from jaxfix.verify.runner import STARTUP_ALLOWANCE, run_pair

    findings = list(result.fixes_applied)

    def answer(evidence: Evidence, **more: Any) -> FileVerification:
        attached = [f.with_fix(replace(f.fix, evidence=evidence)) if f.fix is not None else f for f in findings]
        return FileVerification(path=result.path, evidence=evidence, findings=attached, **more)

    try:
        (_, before_nb), (_, after_nb) = (
            (None, original_nb) if original_nb is not None else read(result.source),
            read(result.fixed_source or ""),
        )
    except NotebookError as exc:
        return answer(unverifiable(f"cannot read the notebook: {exc}"))
    left_out = [c.index + 1 for c in before_nb.cells if c.problem]
    if left_out:
        return answer(
            unverifiable(
                f"cell(s) {', '.join(map(str, left_out))} could not be read, so the notebook cannot run as a script",
                "make those cells parse (shell commands as `!` lines)",
            )
        )
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    reference = ignored.get("reference") or reference_for(findings)
    choice = device if isinstance(device, DeviceChoice) else choose_device(device)
    if not choice.available:
        return answer(
            unverifiable(choice.description),
            device=choice.description,
            reference=reference,
        )
    path = Path(result.path).resolve()
    filename = str(Path(result.path))
    cell_of = cell_of_names(before_nb)
    watch = watched(before_nb.text, after_nb.text) if watch is None else list(watch)
    task = Task(id=NAME, kind="drive", script_path=f"{filename} (cells)", script_source=DRIVE)
    module_name = "_jaxfix_notebook_" + re.sub(r"\W", "_", path.stem)
    common: dict[str, Any] = {
        "sys_path": [str(path.parent)],
        "tasks": [task],
        "task_timeout": timeout,
    }
    rewritten_name = f"{filename} (rewritten by jaxfix)"
    jobs = [
        Job(
            module_name,
            str(path),
            _job_source(runnable(before_nb), filename, cell_of, watch),
            eager=reference == "eager",
            filename=filename,
            **common,
        ),
        Job(
            module_name,
            str(path),
            _job_source(runnable(after_nb), rewritten_name, cell_of, watch),
            eager=False,
            filename=rewritten_name,
            **common,
        ),
    ]
    before, after = run_pair(
        jobs,
        choice,
        timeout=STARTUP_ALLOWANCE + 2 * timeout,
        parallel=parallel,
        cwd=cwd or str(path.parent),
        runs=runs,
    )
    verification = FileVerification(
        path=result.path,
        evidence=unverifiable("not run"),
        reference=reference,
        device=before.device or choice.description,
        original=before,
        rewritten=after,
    )
    codes = len([c for c in before_nb.cells if c.kept])
    if ignored.get("examples") or ignored.get("record_cmd"):
        verification.notes.append(
            "inputs: --examples and --record are not used for a notebook: its cells are the inputs"
        )
    verification.notes.append(
        f"inputs: ran the notebook's {codes} code cell(s) in order as its __main__ block, twice per version"
    )
    not_run: list[int] = []
    if not before.ok or not after.ok or NAME not in before.tasks or NAME not in after.tasks:
        which = "original" if not before.ok else "rewritten"
        error = before.error if not before.ok else after.error
        evidence = unverifiable(f"the {which} notebook could not run: {error}")
    else:
        evidence = _judge_runs(
            before.tasks[NAME],
            after.tasks[NAME],
            findings,
            verification,
            reference,
            Path(result.path).name,
            not_run,
            (filename, before_nb),
            (rewritten_name, after_nb),
        )
    changed = sorted({f.cell for f in findings if f.fix is not None and f.cell})
    if changed:
        evidence = replace(
            evidence,
            notes=(
                *evidence.notes,
                f"the fixes changed cell(s) {', '.join(map(str, changed))}",
            ),
        )
    paying = payoff.paying(findings)
    verification.findings = [
        f if f.fix is None else f.with_fix(replace(f.fix, evidence=_judged(f, evidence, before_nb, paying, not_run)))
        for f in findings
    ]
    verification.evidence = combine([f.fix.evidence for f in verification.findings if f.fix is not None] or [evidence])
    return verification


RAN = "a run of its code cells in order"


def _judge_runs(old, new, findings, verification, reference, name, not_run, *versions) -> Evidence:
    """The evidence from the drive's outputs of both versions: a run that raised first (with the
    cell and line), then the values both runs left, compared by `api.judge`. `not_run` gets the
    cells whose changed code the rewritten run never reached."""
    from jaxfix.verify import figures
    from jaxfix.verify.api import judge, unverifiable
    from jaxfix.verify.changed import family_of

    def cells(text: str) -> str:
        text = re.sub(
            r'  File "[^"\n]* \(cells\)", line \d+, in drive\n(    .*\n)?', "", text
        )  # the runner's own frame
        for filename, module in versions:
            text = in_cells(text, filename, module)
        return text

    supply = "give it more time with --verify-timeout"
    for task, which in ((old, "original"), (new, "rewritten")):
        if task.error:
            return unverifiable(f"the {which} notebook's cells did not run: {cells(task.error)}", supply)
    raised = {
        which: task.outputs.get(key)
        for which, task in (("original", old), ("rewritten", new))
        for key in ("drive()", "drive() (2nd run)")
        if task.outputs.get(key) is not None
    }
    if "original" in raised:
        o = raised["original"]
        return unverifiable(
            f"the original notebook fails when its cells run in order: {o.error}\n{cells(o.trace)}".rstrip(),
            "make the notebook run from top to bottom in a fresh kernel",
        )
    if "rewritten" in raised:
        o = raised["rewritten"]
        return Evidence(
            "mismatch",
            f"mismatch in {name}: the rewritten notebook raised {o.error} where the original ran to the end\n{cells(o.trace)}".rstrip(),
            {
                "reason": "raised",
                "got": o.error,
                "callable": name,
                "output": "the cells",
            },
            input_source=SOURCE,
            headline=f"the rewritten notebook raised {o.error}",
        )
    old.labels, new.labels = [], []
    for task in (old, new):
        task.inputs.pop(LINES, None)
    old.outputs.pop(LINES, None)
    lines = new.outputs.pop(LINES, None)
    ran = {int(n) for n in str(lines.tree.leaves[0].value).split(",") if n} if lines and lines.tree else set()
    not_run[:] = _never_ran(versions[0][1].text, versions[1][1], ran)
    names = {k.removesuffix(" (2nd run)") for k in [*old.outputs, *new.outputs]}
    noisy = {
        k
        for k in names
        if (a := old.outputs.get(k)) is not None
        and (b := old.outputs.get(k + " (2nd run)")) is not None
        and a.tree is not None
        and b.tree is not None
        and not identical(a.tree, b.tree)
    }
    one_sided = {k for k in names - noisy if (k in old.outputs) != (k in new.outputs)}
    for task in (old, new):
        _drop(task, noisy | one_sided)
        for key in task.inputs:
            task.inputs[key] = RAN
    if noisy:
        verification.notes.append(
            f"left out {len(noisy)} value(s) that differ between two runs of the original notebook "
            f"(a clock or unseeded randomness): {', '.join(sorted(noisy))}"
        )
    if one_sided:
        verification.notes.append(f"not compared, only one version has them: {', '.join(sorted(one_sided))}")
    compared = sorted(k for k in old.outputs if not k.endswith(" (2nd run)") and k in new.outputs)
    if not compared:
        return unverifiable(
            "the notebook's cells leave no array or number that both versions compute alike in two runs",
            "bind what a cell computes to a name (`loss = step(w)`)",
        )
    family = next(
        (fam for f in findings if f.fix is not None and (fam := figures.family_for(f.code, family_of(f)[1]))),
        "",
    )
    evidence = judge(
        name,
        SOURCE,
        old,
        new,
        device=verification.device,
        reference=reference,
        family=family,
    )
    detail = re.sub(
        rf"verified on \d+ {SOURCE} inputs?",
        f"verified on a run of the notebook's cells ({len(compared)} value(s) compared: {', '.join(compared)})",
        cells(evidence.detail),
    ).replace(" per call", " per run of the cells")
    detail = re.sub(r" on (\d+) inputs?\b", r" on \1 value(s) of the cells", detail, count=1)
    return replace(evidence, detail=detail)


def _judged(finding: Finding, evidence: Evidence, module, paying: int, not_run: list[int]) -> Evidence:
    """`payoff.judge` (verified but no fewer compiles: ineffective) on the joined module; a fix
    whose cell's changed code never ran is unverifiable, whatever the values say."""
    if finding.cell in not_run and evidence.verdict in ("verified", "ineffective"):
        from jaxfix.verify.api import unverifiable

        return replace(
            unverifiable(
                f"the rewritten code in cell {finding.cell} never ran when the cells ran in order",
                "call what the fix changed in a later cell",
            ),
            input_source=SOURCE,
        )
    return payoff.judge(_at_module(finding, module), evidence, module.text, paying)


def _never_ran(before_text: str, after, ran: set[int]) -> list[int]:
    """The cells of the rewritten module `after` with changed statements of which none ran (a
    statement ran when a line of its span, decorators included, is in `ran`)."""
    old, new = before_text.split("\n"), after.text.split("\n")
    changed: set[int] = set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            changed.update(
                n for n in range(j1 + 1, j2 + 1) if new[n - 1].strip() and not new[n - 1].lstrip().startswith("#")
            )
    if not changed:
        return []
    spans = []
    for node in ast.walk(ast.parse(after.text)):
        if isinstance(node, ast.stmt):
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            spans.append((first, node.end_lineno or node.lineno))
    starts, lines = after.starts(), after.text.splitlines()
    reached: dict[int, bool] = {}
    for n in sorted(changed):
        around = [s for s in spans if s[0] <= n <= s[1]]
        if not around:
            continue
        first, last = min(around, key=lambda s: s[1] - s[0])  # the innermost statement
        cell = after.locate(n, 1, starts, lines)[0]
        reached[cell] = reached.get(cell, False) or any(first <= k <= last for k in ran)
    return sorted(cell for cell, hit in reached.items() if not hit)
