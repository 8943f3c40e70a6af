"""Mutation benchmark for verification: can `--verify` be fooled by a plausible bug in a fix generator?

Usage: PYTHONPATH=. python benchmarks/verify_mutants.py [--json] [--only NAME ...] [--max-programs N]

Each mutant (MUTANTS below) is one small change a developer could make by mistake in a fix
generator under `codemods/` (arguments of `jax.debug.print` reordered, `.at[i].add` for `.set`,
`block_until_ready` after the clock read, a per-iteration value made static, ...). Mutants are
applied one at a time to a temporary copy of `jaxfix/` and `codemods/` (the real tree is never
edited). The programs are the fixtures' `.in.py` files copied out without their drive files (so
verification has no declared inputs: zero configuration), the `benchmarks/verify_real` projects,
`examples/` and `benchmarks/verify_mutants_programs/` (small programs written as users write them).
A mutant of an opt-in fix style carries the pyproject.toml that asks for it (`config`, passed as
`--config` to its runs and to its unmutated baseline): JAX101's registered cache field is opt-in.
For each mutant:

1. `jaxfix fix --unsafe-fixes` (no verification) runs with the mutated tree on the programs that
   have a finding of the mutant's rule codes; the programs whose diff differs from the unmutated
   tree's are the ones the mutant touches (a mutant that touches none is reported `untouched`, a
   defect of the benchmark, not of verification);
2. `jaxfix fix --unsafe-fixes --verify` runs on (at most --max-programs of) those programs and the
   evidence lines of the mutant's codes are read:
   - `caught`: some fix came back `mismatch` or `ineffective`, or the fix run failed (a rewrite
     that does not converge is an error, never a verdict);
   - `missed`: every such fix came back `verified`;
   - `no evidence`: otherwise (`unverifiable`, no evidence line).

The same programs also run unmutated: any `mismatch`/`ineffective` there is a false alarm of
verification on correct fixes (the `ineffective` verdicts on unmutated code are listed: a fix that
really saves nothing is a defect of the generator, not of verification).

Target (issue #31): >= 90% of mutants caught, 0 false mismatches on the unmutated code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USER_PROGRAMS = Path(__file__).resolve().parent / "verify_mutants_programs"  # written as users write them
EVIDENCE = re.compile(
    r"^\s*(?P<path>\S+?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) "
    r"(?P<verdict>verified|mismatch|unverifiable|ineffective|weak|error): (?P<detail>.*)$",
    re.IGNORECASE,
)
FINDING = re.compile(r"^\s*(?P<path>\S+?):(?P<line>\d+):(?P<col>\d+): (?P<code>JAX\d+)\b")


@dataclass(frozen=True)
class Mutant:
    """One injected bug: `old` (found exactly `count` times) becomes `new` in `path`."""

    name: str
    path: str
    old: str
    new: str
    codes: tuple[str, ...]
    why: str
    count: int = 1
    config: str = ""  # a pyproject.toml for every run of this mutant (and its unmutated baseline)


# JAX101's default fix is the plain property; the registered cache field (`with_caches()`) the
# caching mutants change is opt-in, so their runs ask for it.
FIELD_STYLE = '[tool.jaxfix.pytree-cache]\ncache-style = "field"\n'

MUTANTS: tuple[Mutant, ...] = (
    # --- trace-time semantics -----------------------------------------------------------------
    Mutant(
        "debug-print-args-reversed",
        "codemods/trace_time_semantics/print_in_traced_code.py",
        "[self.ctx.literal(fmt), *self.args,",
        "[self.ctx.literal(fmt), *reversed(self.args),",
        ("JAX401",),
        "jax.debug.print with its arguments in the wrong order",
    ),
    Mutant(
        "debug-print-sep-dropped",
        "codemods/trace_time_semantics/print_in_traced_code.py",
        "                self.fmt.append(_escape(sep))",
        "                self.fmt.append(_escape(sep.strip()))",
        ("JAX401",),
        "the separator between printed values lost (print(a, b) -> '{}{}')",
    ),
    Mutant(
        "at-add-for-set",
        "codemods/trace_time_semantics/in_place_update_on_traced_array.py",
        'call = f"{at}.set({_arg(node.value, value)})"',
        'call = f"{at}.add({_arg(node.value, value)})"',
        ("JAX403",),
        "x[i] = v rewritten as x.at[i].add(v)",
    ),
    Mutant(
        "at-subtract-as-add",
        "codemods/trace_time_semantics/in_place_update_on_traced_array.py",
        '"-=": "subtract"',
        '"-=": "add"',
        ("JAX403",),
        "x[i] -= v rewritten as x.at[i].add(v)",
    ),
    # --- caching (pytree_cache) ---------------------------------------------------------------
    Mutant(
        "with-caches-first-value",
        "codemods/pytree_cache/class_fix.py",
        'args = ", ".join(f"{c}=self.{n}" for n, c in cache.items())',
        'args = ", ".join(f"{c}=self.{next(iter(cache))}" for n, c in cache.items())',
        ("JAX101",),
        "with_caches() fills every cache with the first property's value",
        count=2,
        config=FIELD_STYLE,
    ),
    Mutant(
        "with-caches-fills-none",
        "codemods/pytree_cache/class_fix.py",
        'ret = f"return {start}.replace({args})"',
        'ret = f"return {start}.replace()"',
        ("JAX101",),
        "with_caches() fills no cache",
        config=FIELD_STYLE,
    ),
    Mutant(
        "cache-guard-inverted",
        "codemods/pytree_cache/class_fix.py",
        'f"if {me}.{cache} is not None:\\n    return {me}.{cache}\\n"',
        'f"if {me}.{cache} is None:\\n    return {me}.{cache}\\n"',
        ("JAX101",),
        "the cached property returns its cache when the cache is empty",
        config=FIELD_STYLE,
    ),
    # --- timing -------------------------------------------------------------------------------
    Mutant(
        "block-after-clock",
        "codemods/compile_cost/timing_checker.py",
        "insert_before={before: [new]} if before is not None else None,\n"
        "                    insert_after={after: [new]} if after is not None else None,",
        "insert_before={after: [new]} if after is not None else None,\n"
        "                    insert_after={before: [new]} if before is not None else None,",
        ("JAX501",),
        "block_until_ready inserted after the clock read",
    ),
    Mutant(
        "block-before-start",
        "codemods/compile_cost/timing_checker.py",
        "insert_before={before: [new]} if before is not None else None,",
        "insert_before={stmts[0]: [new]} if before is not None else None,",
        ("JAX501",),
        "block_until_ready inserted at the top of the timed block, before the region starts, not before its end",
    ),
    # --- jit placement ------------------------------------------------------------------------
    Mutant(
        "per-iteration-value-static",
        "codemods/jit_placement/captures.py",
        "    if value.needs_static:\n        why = value.needs_static\n",
        "    if value.variant and kind.kind == NUMBER:\n"
        "        return STATIC, f\"`{label}` becomes a static argument\", False\n"
        "    if value.needs_static:\n        why = value.needs_static\n",
        ("JAX201", "JAX202"),
        "a captured per-iteration number made static instead of traced",
    ),
    Mutant(
        "hoist-drops-static-argnames",
        "codemods/jit_placement/plan_layout.py",
        "return [*rest, f\"static_argnames=({', '.join(names)}{',' if len(names) == 1 else ''})\"]",
        "return rest",
        ("JAX201", "JAX202"),
        "the hoisted jit forgets the static_argnames of the captured static values",
    ),
    # --- traced control flow ------------------------------------------------------------------
    Mutant(
        "fori-loop-one-trip-short",
        "jaxfix/rewriting/loops.py",
        "{fori}({lo}, {hi}, {name},",
        "{fori}({lo}, {hi} - 1, {name},",
        ("JAX303", "JAX502"),
        "range(lo, hi) rewritten as fori_loop(lo, hi - 1, ...)",
        count=2,
    ),
    Mutant(
        "while-cond-negated",
        "jaxfix/rewriting/loops.py",
        'ret_stmt = self.fn.parse_stmt(f"return {pred}\\n")',
        'ret_stmt = self.fn.parse_stmt(f"return ~({pred})\\n")',
        ("JAX302",),
        "the while_loop condition negated",
    ),
    Mutant(
        "where-sides-swapped",
        "codemods/traced_control_flow/where.py",
        'text = f"{where}({pred}, {taken}, {not_taken})"',
        'text = f"{where}({pred}, {not_taken}, {taken})"',
        ("JAX301",),
        "jnp.where with the taken and untaken sides swapped",
    ),
    Mutant(
        "cond-branches-swapped",
        "codemods/traced_control_flow/branch_rewrite.py",
        'call = f"{target}{cond}({pred}, {t_name}, {f_name}',
        'call = f"{target}{cond}({pred}, {f_name}, {t_name}',
        ("JAX301",),
        "lax.cond with the true and false branch functions swapped",
    ),
    Mutant(
        "logical-or-for-and",
        "jaxfix/rewriting/functions.py",
        'fn = "logical_and" if isinstance(e.operator, cst.And) else "logical_or"',
        'fn = "logical_or" if isinstance(e.operator, cst.And) else "logical_and"',
        ("JAX301", "JAX302", "JAX305"),
        "`and` rewritten as jnp.logical_or (and `or` as logical_and)",
    ),
    # --- compile cost -------------------------------------------------------------------------
    Mutant(
        "constant-param-first",
        "codemods/compile_cost/large_captured_constant.py",
        "params.with_changes(params=[*plist, new_param])",
        "params.with_changes(params=[new_param, *plist])",
        ("JAX503",),
        "the constant becomes the first parameter while callers pass it last",
    ),
)


def _copy_tree(dest: Path, source: Path = ROOT, ref: str | None = None) -> None:
    """`jaxfix/` and `codemods/` of `source` (or of git commit `ref` of this repository) under `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    if ref is not None:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "jaxfix", "codemods"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
        return
    for name in ("jaxfix", "codemods"):
        shutil.copytree(source / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def apply(mutant: Mutant, tree: Path) -> None:
    target = tree / mutant.path
    text = target.read_text()
    found = text.count(mutant.old)
    if found != mutant.count:
        raise SystemExit(f"mutant {mutant.name}: {mutant.old!r} found {found} times in {mutant.path}, expected {mutant.count}")
    target.write_text(text.replace(mutant.old, mutant.new))


def programs(work: Path) -> dict[str, Path]:
    """name -> folder: fixtures without drive files, verify_real projects, examples."""
    out: dict[str, Path] = {}
    for case in sorted((ROOT / "fixtures").glob("*/*.in.py")):
        name = f"fixture:{case.parent.name}/{case.name[: -len('.in.py')]}"
        folder = work / "fixtures" / case.parent.name / case.name[: -len(".in.py")]
        folder.mkdir(parents=True)
        shutil.copy(case, folder / (case.name[: -len(".in.py")] + ".py"))
        out[name] = folder
    for project in sorted((ROOT / "benchmarks" / "verify_real").iterdir()):
        if project.is_dir():
            folder = work / "verify_real" / project.name
            shutil.copytree(project, folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".jaxfix_cache"))
            out[f"verify_real:{project.name}"] = folder
    for project in sorted(USER_PROGRAMS.iterdir()):
        if project.is_dir():
            folder = work / "user" / project.name
            shutil.copytree(project, folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".jaxfix_cache"))
            out[f"user:{project.name}"] = folder
    for example in sorted((ROOT / "examples").glob("*.py")):
        if example.name == "verify_examples.py":
            continue  # declared inputs, not a program: zero configuration here
        folder = work / "examples" / example.stem
        folder.mkdir(parents=True)
        shutil.copy(example, folder / example.name)
        out[f"examples:{example.stem}"] = folder
    return out


def run_jaxfix(tree: Path, folder: Path, *args: str, timeout: float, command: str = "fix") -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env["JAXFIX_NO_CACHE"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "jaxfix.cli", command, "--no-cache", *(("--unsafe-fixes",) if command == "fix" else ()), *args, "."]
    try:
        return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(command, 124, e.stdout or "", (e.stderr or "") + "\n[timeout]")


def fresh(folder: Path, scratch: Path) -> Path:
    """A clean copy of a program folder (a run must not see another run's written files)."""
    dest = Path(tempfile.mkdtemp(dir=scratch)) / folder.name
    shutil.copytree(folder, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return dest


def evidence(done: subprocess.CompletedProcess, codes: tuple[str, ...] | None) -> list[dict]:
    out = []
    for line in (done.stdout + "\n" + done.stderr).splitlines():
        m = EVIDENCE.match(line)
        if m and (codes is None or m["code"] in codes):
            out.append({**m.groupdict(), "verdict": m["verdict"].lower()})
    return out


def _owner(path: str, progs: dict[str, Path], root: Path) -> str | None:
    """The program a path printed by a run over `root` belongs to."""
    full = (root / path.removeprefix("a/").removeprefix("b/")).resolve()
    for name, folder in progs.items():
        if folder.resolve() in full.parents:
            return name
    return None


def codes_by_program(done: subprocess.CompletedProcess, progs: dict[str, Path], root: Path) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {name: set() for name in progs}
    for line in done.stdout.splitlines():
        m = FINDING.match(line)
        if m and (name := _owner(m["path"], progs, root)):
            out[name].add(m["code"])
    return out


def diffs_by_program(done: subprocess.CompletedProcess, progs: dict[str, Path], root: Path) -> dict[str, str]:
    """The unified diff `fix` printed over `root`, split per program."""
    out: dict[str, list[str]] = {name: [] for name in progs}
    current = None
    for line in done.stdout.splitlines():
        if line.startswith("--- "):
            current = _owner(line[4:].strip(), progs, root)
        if current is not None:
            out[current].append(line)
    return {name: "\n".join(lines) for name, lines in out.items()}


@dataclass
class Result:
    mutant: str
    why: str
    touched: list[str] = field(default_factory=list)
    verdicts: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    outcome: str = ""
    seconds: float = 0.0


def judge(result: Result) -> str:
    flat = [v for vs in result.verdicts.values() for v in vs]
    if not result.touched:
        return "untouched"
    if result.errors or any(v in ("mismatch", "ineffective") for v in flat):
        kinds = sorted({v for v in flat if v in ("mismatch", "ineffective")} | ({"error"} if result.errors else set()))
        return "caught (" + ", ".join(kinds) + ")"
    if flat and all(v == "verified" for v in flat):
        return "missed (verified)"
    if any(v == "verified" for v in flat):
        return "missed (verified)"
    return "no evidence"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", nargs="*", default=None, help="mutant names")
    parser.add_argument("--max-programs", type=int, default=3, help="programs verified per mutant")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per jaxfix run")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--ref", default=None, help="take jaxfix/ and codemods/ from this git commit (default: the working tree)")
    args = parser.parse_args(argv)
    mutants = [m for m in MUTANTS if args.only is None or m.name in args.only]
    if args.list:
        for m in mutants:
            print(f"{m.name:32} {'/'.join(m.codes):16} {m.why}")
        return 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="jaxfix-mutants-") as tmp:
        work = Path(tmp)
        base_tree = work / "base"
        _copy_tree(base_tree, ref=args.ref)
        progs = programs(work / "programs")
        scratch = work / "scratch"
        scratch.mkdir()
        # the unmutated diffs (no verification: quick), and which rule codes each program has: one
        # run over all programs, split per program
        root = work / "programs"
        baselines: dict[str, tuple[dict[str, str], dict[str, set[str]]]] = {}

        def config_args(config: str) -> tuple[str, ...]:
            if not config:
                return ()
            path = work / f"config-{abs(hash(config))}.toml"
            path.write_text(config)
            return ("--config", str(path))

        def baseline(config: str) -> tuple[dict[str, str], dict[str, set[str]]]:
            """The unmutated diffs (no verification: quick) and rule codes per program under `config`."""
            if config not in baselines:
                extra = config_args(config)
                diff = diffs_by_program(run_jaxfix(base_tree, root, *extra, timeout=args.timeout * 4), progs, root)
                codes = codes_by_program(
                    run_jaxfix(base_tree, root, *extra, timeout=args.timeout * 4, command="check"), progs, root
                )
                baselines[config] = (diff, codes)
            return baselines[config]

        results: list[Result] = []
        verify_on: set[tuple[str, str]] = set()
        for mutant in mutants:
            t0 = time.perf_counter()
            result = Result(mutant.name, mutant.why)
            tree = work / f"mutant-{mutant.name}"
            _copy_tree(tree, base_tree)
            apply(mutant, tree)
            base_diff, base_codes = baseline(mutant.config)
            extra = config_args(mutant.config)
            mutated = diffs_by_program(run_jaxfix(tree, root, *extra, timeout=args.timeout * 4), progs, root)
            for name in progs:
                if base_codes[name] & set(mutant.codes) and mutated[name] != base_diff[name]:
                    result.touched.append(name)
            for name in result.touched[: args.max_programs]:
                verify_on.add((name, mutant.config))
                done = run_jaxfix(tree, fresh(progs[name], scratch), *extra, "--verify", timeout=args.timeout)
                found = evidence(done, mutant.codes)
                result.verdicts[name] = [f["verdict"] for f in found]
                if done.returncode not in (0, 1) and not found:
                    result.errors.append(f"{name}: exit {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}")
                elif "did not converge" in done.stderr + done.stdout:
                    result.errors.append(f"{name}: the fix did not converge")
            result.outcome = judge(result)
            result.seconds = round(time.perf_counter() - t0, 1)
            results.append(result)
            shutil.rmtree(tree)
            if not args.json:
                print(f"{mutant.name:32} {result.outcome:28} {result.seconds:6.1f}s  {result.verdicts or ''} {result.errors or ''}",
                      flush=True)
        # false alarms: the same programs, unmutated
        false_alarms: list[dict] = []
        base_verdicts: dict[str, list[str]] = {}
        for name, config in sorted(verify_on):
            label = name + (" (field cache style)" if config == FIELD_STYLE else " (config)" if config else "")
            done = run_jaxfix(base_tree, fresh(progs[name], scratch), *config_args(config), "--verify", timeout=args.timeout)
            found = evidence(done, None)
            base_verdicts[label] = [f"{f['code']} {f['verdict']}" for f in found]
            for f in found:
                if f["verdict"] in ("mismatch", "ineffective"):
                    false_alarms.append({"program": label, **f})
    scored = [r for r in results if r.outcome != "untouched"]
    caught = [r for r in scored if r.outcome.startswith("caught")]
    summary = {
        "mutants": len(results),
        "scored": len(scored),
        "caught": len(caught),
        "missed": sum(r.outcome.startswith("missed") for r in scored),
        "no_evidence": sum(r.outcome == "no evidence" for r in scored),
        "untouched": len(results) - len(scored),
        "caught_fraction": round(len(caught) / len(scored), 3) if scored else None,
        "false_alarms_unmutated": len([f for f in false_alarms if f["verdict"] == "mismatch"]),
        "ineffective_unmutated": len([f for f in false_alarms if f["verdict"] == "ineffective"]),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    if args.json:
        print(json.dumps({"summary": summary, "results": [r.__dict__ for r in results], "unmutated": base_verdicts,
                          "false_alarms": false_alarms}, indent=2))
    else:
        print()
        for name, verdicts in sorted(base_verdicts.items()):
            print(f"unmutated {name}: {', '.join(verdicts) or '(no evidence)'}")
        for f in false_alarms:
            print(f"FALSE ALARM {f['program']}: {f['path']}:{f['line']} {f['code']} {f['verdict']}: {f['detail'][:200]}")
        print(
            f"\ncaught {summary['caught']} of {summary['scored']} mutants ({summary['caught_fraction']}); "
            f"missed {summary['missed']}, no evidence {summary['no_evidence']}, untouched {summary['untouched']}; "
            f"false mismatches on unmutated code: {summary['false_alarms_unmutated']}; "
            f"ineffective on unmutated code: {summary['ineffective_unmutated']}; {summary['wall_s']} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
