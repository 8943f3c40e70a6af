"""How good are the fixes jaxfix writes? (issue #19)

Usage: PYTHONPATH=. python benchmarks/fix_quality.py [--json] [--list] [--only TEXT ...] [--no-projects]

Programs:
- every positive fixture that has a drive, of every family: fixtures/<family>/<case>.in.py with
  <case>.drive.py;
- the realistic programs of benchmarks/fix_quality/ (NAME.py with NAME.drive.py): training loops
  with a frozen config, flax and equinox models, a learning-rate sweep, an input pipeline, a
  Kalman-smoothing-shaped search, an RL rollout, a VAE evaluation, GP regression, a flax struct
  with a cached property and jitted control flow;
- the projects of benchmarks/verify_real/ (each file jaxfix changes there, verified on the inputs
  `jaxfix fix --verify` finds with no configuration: the project's tests, __main__, doctests,
  synthesized values; the probe of (d) and (e) runs a file's own `__main__` block there);
  `--no-projects` leaves them out.

Each file is fixed as `jaxfix fix --unsafe-fixes` does (every safe and unsafe fix, all rules), and
the fixed file is verified with `jaxfix.verify` (the function `--verify` calls, on the drive where
there is one). Per fix it counts:

(a) runs and agrees: the verdict is `verified`, or `ineffective` (agrees, but removes no compile);
(b) lint: the fixed file has no Ruff problem (F401, I001, E1, W, as tests/test_fixture_lint.py)
    that its input did not have;
(c) lines changed per fix: lines added plus removed in the file's diff, over the file's fixes;
and for jit placement (JAX201-JAX203):
(d) steady-state recompiles at the fix's site: `benchmarks/fix_quality_probe.py` runs the drive
    twice on both versions and counts, per line that calls `jax.jit`, the wrappers made and the
    compiles inside their calls in the second run. The fix's site is the statement of the finding
    in the original and the statement binding the fix's new name in the rewritten file. A
    recompile is a compile beyond one per wrapper the rewritten code makes in that run: a hoist to
    module level or into a cached factory makes none (every steady-state compile counts), a hoist
    above a loop makes one per entry into the loop (the issue's "above the loop, closure intact"
    placement: one compile per entry, none per iteration). The same count of wrappers is charged
    to the original (same inputs, same entries). Also shown: the verifier's steady-state compiles
    of the fix's function per run (what `--verify` prints);
(e) non-array values turned into traced arguments: `benchmarks/fix_quality_probe.py` runs the drive
    on both versions with `jax.jit` instrumented and records traced leaves that are neither arrays
    nor numbers (a string, a bool flag, a config, a function); a fix that adds one counts.

Targets (issue #19): 100% of safe and unsafe fixes run and agree, 100% lint clean, every
jit-placement fix at 0 steady-state recompiles on its inputs, no non-array value turned traced.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:  # run from anywhere: this checkout's jaxfix first
    sys.path.insert(0, str(ROOT))

from jaxfix.engine import analyze  # noqa: E402
from jaxfix.engine.config import Config  # noqa: E402
from jaxfix.verify import payoff  # noqa: E402
from jaxfix.verify._recorder.run_main import main_blocks  # noqa: E402
from jaxfix.verify.api import verify_result  # noqa: E402

FIXTURES = ROOT / "fixtures"
PROGRAMS = HERE / "fix_quality"
PROJECTS = HERE / "verify_real"
PROBE = HERE / "fix_quality_probe.py"
# The probe's drive for a project file without one: the module's own `__main__` blocks, as
# `--verify` runs them (argv: the file alone)
MAIN_DRIVE = """
import sys

from jaxfix.verify._recorder.run_main import run_main_blocks


def drive(mod):
    sys.argv = [mod.__file__]
    with open(mod.__file__, encoding="utf-8") as handle:
        run_main_blocks(mod, mod.__file__, handle.read())
"""
SELECT = "F401,I001,E1,W"
FAMILIES = {"JAX0": "meta", "JAX1": "pytree caching", "JAX2": "jit placement", "JAX3": "control flow",
            "JAX4": "trace-time semantics", "JAX5": "compile cost"}
AGREES = ("verified", "ineffective")


@dataclass
class Program:
    name: str  # fixtures/jit_placement/nested_def, fix_quality/lr_sweep, verify_real/mlp_train/mlp/train.py
    path: Path
    drive: Path | None
    cwd: Path | None = None  # zero-configuration inputs are gathered from this project folder


@dataclass
class FixRow:
    program: str
    code: str
    line: int
    safety: str
    verdict: str = "not verified"
    detail: str = ""
    compiles: tuple[int, int] | None = None
    lines_changed: float = 0.0
    lint_clean: bool = True
    lint_added: list[str] = field(default_factory=list)
    non_array_traced: list[str] = field(default_factory=list)
    shared: str = ""  # why the compile counts are not this fix's alone
    recompiles: tuple[int, int] | None = None  # at the fix's site, steady state (see (d))
    site: str = ""  # the site's wrappers and compiles, before -> after
    title: str = ""  # the fix's title: where the hoist went

    @property
    def family(self) -> str:
        return FAMILIES.get(self.code[:4], self.code[:4])


def discover(only: list[str], projects: bool) -> list[Program]:
    found = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for source in sorted(folder.glob("*.in.py")):
            case = source.name[: -len(".in.py")]
            drive = folder / f"{case}.drive.py"
            if drive.exists():
                found.append(Program(f"fixtures/{folder.name}/{case}", source, drive))
    for source in sorted(PROGRAMS.glob("*.py")):
        if not source.name.endswith(".drive.py"):
            found.append(Program(f"fix_quality/{source.stem}", source, source.with_name(f"{source.stem}.drive.py")))
    if projects and PROJECTS.is_dir():
        for project in sorted(p for p in PROJECTS.iterdir() if p.is_dir()):
            for source in sorted(project.rglob("*.py")):
                if "tests" not in source.relative_to(project).parts and not source.name.startswith("test_"):
                    found.append(Program(f"verify_real/{project.name}/{source.relative_to(project)}", source, None, project))
    return [p for p in found if not only or any(text in p.name for text in only)]


def _probe(module: Path, drive: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "probe.json"
        run = subprocess.run(
            [sys.executable, str(PROBE), str(module), str(drive), str(out)],
            capture_output=True, text=True, timeout=600, cwd=module.parent,
        )
        if not out.exists():
            return {"calls": 0, "non_array": [], "error": (run.stderr or run.stdout)[-500:]}
        return json.loads(out.read_text())


def _diff_lines(before: str, after: str) -> int:
    return sum(
        1
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    )


def measure(program: Program, timeout: float) -> tuple[list[FixRow], str, str]:
    """The fix rows of one program, and its source and fixed text (for the Ruff run)."""
    source = program.path.read_text(encoding="utf-8")
    result = analyze(source, str(program.path), Config(select=("ALL",), unsafe_fixes=True), fix=True)
    if result.error or not result.changed:
        return [], source, source
    fixed = result.fixed_source
    applied = [f for f in result.fixes_applied if f.fix is not None and f.fix.applicable]
    per_fix_lines = _diff_lines(source, fixed) / max(len(applied), 1)
    options = {"device": "cpu", "timeout": timeout}
    if program.drive is not None:
        options["examples"] = str(program.drive)
    else:
        options["cwd"] = str(program.cwd)
    verification = verify_result(result, **options)
    # several jit-placement sites compile in the same runs: each fix is judged on the compiles of
    # its own function (`jit(<name>)`); sites whose functions share a name share their counts
    sites = analyze(source, str(program.path), Config(select=("JAX2",)), fix=False).findings
    names = Counter(payoff.compiled_name(source, f.line, f.column) for f in sites)
    paying = max(len(sites), 1)
    rows = []
    for finding in verification.findings:
        if finding.fix is None or not finding.fix.applicable:
            continue
        evidence = finding.fix.evidence
        row = FixRow(
            program.name, finding.code, finding.line, finding.fix.safety.value, lines_changed=per_fix_lines,
            title=finding.fix.title,
        )
        if evidence is not None:
            row.verdict, row.detail = evidence.verdict, evidence.detail.splitlines()[0] if evidence.detail else ""
            eager = evidence.data.get("reference") == "eager" or any(
                isinstance(u, dict) and u.get("reference") == "eager" for u in evidence.data.get("units") or []
            )
            if finding.code.startswith("JAX2") and evidence.verdict in AGREES and eager:
                row.shared = "compiles not compared: the original ran eagerly for a control-flow fix in the same file"
            elif finding.code.startswith("JAX2") and evidence.verdict in AGREES:
                row.compiles = payoff.compile_counts(finding, evidence, source, paying)
                shared = names[payoff.compiled_name(source, finding.line, finding.column)]
                if len(sites) > 1 and shared > 1:
                    row.shared = f"counts of jit({payoff.compiled_name(source, finding.line, finding.column)}), shared by {shared} sites"
        rows.append(row)
    main_only = program.drive is None and bool(main_blocks(fixed))
    if (program.drive is not None or main_only) and any(r.code.startswith("JAX2") for r in rows):
        with tempfile.TemporaryDirectory() as tmp:
            before_file, after_file = Path(tmp) / "before" / program.path.name, Path(tmp) / "after" / program.path.name
            before_file.parent.mkdir()
            after_file.parent.mkdir()
            before_file.write_text(source, encoding="utf-8")
            after_file.write_text(fixed, encoding="utf-8")
            drive = program.drive
            if main_only:  # a project without a drive: its own __main__ block drives the probe
                drive = Path(tmp) / "main_drive.py"
                drive.write_text(MAIN_DRIVE, encoding="utf-8")
            before, after = _probe(before_file, drive), _probe(after_file, drive)
        added = Counter(f"{r['function']}: {', '.join(r['types'])}" for r in after["non_array"]) - Counter(
            f"{r['function']}: {', '.join(r['types'])}" for r in before["non_array"]
        )
        for row in rows:
            if row.code.startswith("JAX2"):
                row.non_array_traced = sorted(added)
                # a drive that failed has no second (steady-state) run: its counts say nothing
                _site_recompiles(
                    row, source, fixed, {} if before.get("error") else before.get("sites", {}),
                    {} if after.get("error") else after.get("sites", {}),
                )
    return rows, source, fixed


def _statement_span(tree: ast.Module, line: int) -> tuple[int, int] | None:
    """Lines (decorators included) of the innermost statement that holds `line`."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            if start <= line <= node.end_lineno and (best is None or node.end_lineno - start < best[1] - best[0]):
                best = (start, node.end_lineno)
    return best


def _binding_span(tree: ast.Module, name: str) -> tuple[int, int] | None:
    """Lines of the statement that binds `name` (an assignment, or a def such as a cached factory)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return min([node.lineno, *(d.lineno for d in node.decorator_list)]), node.end_lineno
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.lineno, node.end_lineno
    return None


def _site_counts(sites: dict, span: tuple[int, int] | None) -> tuple[int, int] | None:
    """(wrappers made, compiles) of the probe's sites inside `span`; None when none is there."""
    if span is None:
        return None
    inside = [v for k, v in sites.items() if span[0] <= int(k) <= span[1]]
    if not inside:
        return None
    return sum(v["creations"] for v in inside), sum(v["compiles"] for v in inside)


def _site_recompiles(row: FixRow, source: str, fixed: str, before: dict, after: dict) -> None:
    """Fill `row.recompiles` from the probe's per-site counts (see the module docstring, (d))."""
    named = re.search(r"`([A-Za-z_][A-Za-z0-9_]*)`\s*$", row.title) or re.search(r"as `([A-Za-z_][A-Za-z0-9_]*)`", row.title)
    if not named:
        return
    original = _site_counts(before, _statement_span(ast.parse(source), row.line))
    rewritten = _site_counts(after, _binding_span(ast.parse(fixed), named.group(1)))
    if rewritten is None:
        return
    wrappers = rewritten[0]
    # the original's site may not be reached: a script that dies on the bug another fix repairs
    row.recompiles = (None if original is None else max(0, original[1] - wrappers), max(0, rewritten[1] - wrappers))
    was = "not reached" if original is None else f"{original[0]} wrappers, {original[1]} compiles"
    row.site = f"site: {was} -> {rewritten[0]} wrappers, {rewritten[1]} compiles per run"


def lint(pairs: dict[str, tuple[str, str]]) -> dict[str, list[str]]:
    """{program: Ruff problems its fixed file has that its input had not}, from one Ruff run."""
    ruff = [shutil.which("ruff")] if shutil.which("ruff") else [sys.executable, "-m", "ruff"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        names = {}
        for i, (name, (before, after)) in enumerate(pairs.items()):
            (root / f"p{i}_in.py").write_text(before, encoding="utf-8")
            (root / f"p{i}_out.py").write_text(after, encoding="utf-8")
            names[name] = (f"p{i}_in.py", f"p{i}_out.py")
        run = subprocess.run(
            [*ruff, "check", "--select", SELECT, "--no-cache", "--isolated", "--preview", "--output-format", "json", "."],
            cwd=root, capture_output=True, text=True, check=False,
        )
        problems: dict[str, list[str]] = defaultdict(list)
        for item in json.loads(run.stdout or "[]"):
            problems[item["filename"].rsplit("/", 1)[-1]].append(f"{item['code']} {item['message']}")
    return {
        name: sorted((Counter(problems[o]) - Counter(problems[i])).elements()) for name, (i, o) in names.items()
    }


def _ratio(n: int, total: int) -> str:
    return f"{n}/{total} ({n / total:.0%})" if total else "0/0"


def report(rows: list[FixRow], programs: int, wall: float, listing: bool) -> dict:
    by_family: dict[str, list[FixRow]] = defaultdict(list)
    for row in rows:
        by_family[row.family].append(row)
    table = {}
    print(f"{'family':<22}{'fixes':>6}{'safe':>6}{'unsafe':>7}{'run+agree':>14}{'lint clean':>14}{'lines/fix':>10}")
    for family in sorted(by_family) + ["all"]:
        group = rows if family == "all" else by_family[family]
        agree = sum(r.verdict in AGREES for r in group)
        clean = sum(r.lint_clean for r in group)
        lines = sum(r.lines_changed for r in group) / max(len(group), 1)
        safe = sum(r.safety == "safe" for r in group)
        table[family] = {"fixes": len(group), "safe": safe, "unsafe": len(group) - safe, "run_and_agree": agree,
                         "lint_clean": clean, "lines_per_fix": round(lines, 1)}
        print(f"{family:<22}{len(group):>6}{safe:>6}{len(group) - safe:>7}{_ratio(agree, len(group)):>14}"
              f"{_ratio(clean, len(group)):>14}{lines:>10.1f}")
    jit = [r for r in rows if r.code.startswith("JAX2")]
    counted = [r for r in jit if r.compiles is not None]
    zero = [r for r in counted if r.compiles[1] == 0]
    fewer = [r for r in counted if r.compiles[1] < r.compiles[0]]
    sited = [r for r in jit if r.recompiles is not None]
    no_recompile = [r for r in sited if r.recompiles[1] == 0]
    # without a drive (the projects) the probe does not run: the verifier's steady-state count of
    # the fix's function must then be 0 itself
    unsited = [r for r in counted if r.recompiles is None]
    unsited_zero = [r for r in unsited if r.compiles[1] == 0]
    traced = [r for r in jit if r.non_array_traced]
    verdicts = Counter(r.verdict for r in rows)
    print(f"\nverdicts: {dict(sorted(verdicts.items()))}")
    print(f"jit placement: {len(jit)} fixes; steady-state recompiles at the fix's site after the fix: "
          f"0 for {_ratio(len(no_recompile), len(sited))} measured per site "
          f"(before the fix: 0 for {sum(r.recompiles[0] == 0 for r in sited)}, not reached for "
          f"{sum(r.recompiles[0] is None for r in sited)}), "
          f"and 0 steady-state compiles for {_ratio(len(unsited_zero), len(unsited))} of the others (no drive)")
    print(f"jit placement: steady-state compiles per run as --verify counts them: 0 for {_ratio(len(zero), len(counted))}, "
          f"fewer than before for {_ratio(len(fewer), len(counted))} (a hoist above a loop compiles once per entry)")
    print(f"jit placement: fixes that turn a non-array value into a traced argument: {len(traced)} of {len(jit)}")
    print(f"{programs} programs, {len(rows)} fixes, {wall:.0f} s")
    misses = [r for r in rows if r.verdict not in AGREES or not r.lint_clean]
    misses += [r for r in jit if r.verdict in AGREES and r not in misses and not (
        (r.recompiles is not None and r.recompiles[1] == 0) or (r.recompiles is None and r.compiles is not None and r.compiles[1] == 0)
    )]
    misses += [r for r in traced if r not in misses]
    if misses:
        print("\nnot at target:")
    for r in misses:
        why = []
        if r.verdict not in AGREES:
            why.append(f"{r.verdict}: {r.detail[:160]}")
        if not r.lint_clean:
            why.append(f"lint: {', '.join(r.lint_added)}")
        if r.recompiles is None and r.verdict in AGREES and (r.compiles is None or r.compiles[1] != 0):
            counts = f": {r.compiles[0]} compiles -> {r.compiles[1]} per run" if r.compiles else ""
            why.append(f"the probe found no jit site for the fix (recompiles not measured){counts}")
        elif r.recompiles is not None and r.recompiles[1] != 0:
            why.append(f"{r.recompiles[0]} recompiles -> {r.recompiles[1]} ({r.site})")
        if r.non_array_traced:
            why.append(f"non-array traced: {'; '.join(r.non_array_traced)}")
        print(f"  {r.program}:{r.line} {r.code} ({r.safety}) " + " | ".join(why))
    if listing:
        print()
        for r in rows:
            compiles = f" compiles {r.compiles[0]}->{r.compiles[1]}" if r.compiles else ""
            recompiles = f" recompiles {r.recompiles[0]}->{r.recompiles[1]} ({r.site})" if r.recompiles else ""
            print(f"{r.program}:{r.line} {r.code} {r.safety} {r.verdict}{compiles}{recompiles} lines/fix {r.lines_changed:.1f}")
    return {
        "families": table,
        "verdicts": dict(verdicts),
        "jit_placement": {"fixes": len(jit), "with_counts": len(counted), "zero_after": len(zero),
                          "fewer_after": len(fewer), "with_site": len(sited), "no_recompile_after": len(no_recompile),
                          "without_site_zero_after": len(unsited_zero),
                          "non_array_traced": len(traced)},
        "programs": programs,
        "wall_s": round(wall, 1),
        "rows": [r.__dict__ for r in rows],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON after the table")
    parser.add_argument("--list", action="store_true", help="one line per fix")
    parser.add_argument("--only", nargs="*", default=[], help="programs whose name contains one of these")
    parser.add_argument("--no-projects", action="store_true", help="leave out benchmarks/verify_real/")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per verified callable")
    args = parser.parse_args()
    programs = discover(args.only, not args.no_projects)
    started = time.perf_counter()
    rows: list[FixRow] = []
    texts: dict[str, tuple[str, str]] = {}
    for i, program in enumerate(programs, 1):
        found, source, fixed = measure(program, args.timeout)
        print(f"[{i}/{len(programs)}] {program.name}: {len(found)} fix(es)", file=sys.stderr, flush=True)
        rows.extend(found)
        if found:
            texts[program.name] = (source, fixed)
    added = lint(texts)
    for row in rows:
        row.lint_added = added.get(row.program, [])
        row.lint_clean = not row.lint_added
    figures = report(rows, len(programs), time.perf_counter() - started, args.list)
    if args.json:
        print(json.dumps(figures, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
