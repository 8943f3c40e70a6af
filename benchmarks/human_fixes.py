"""Recall of jaxfix at the lines real people changed to fix a JAX anti-pattern.

Each case under benchmarks/human_fixes/cases/<slug>/ holds a trimmed copy of a
public file before and after a human's fixing commit (source, commit, licence
and the fixed line in case.toml; extract.py cut them). This script runs
`jaxfix check --select ALL --no-cache` on each version, laid out under its
original repository path together with the case's context files (the other
module a cross-file detection needs), and prints:

- recall at the fixed site: a finding of the expected family (JAX1xx pytree
  cache, JAX2xx jit placement, JAX3xx control flow, JAX4xx trace-time
  semantics, JAX5xx compile cost/timing) within 2 lines of the fixed line of
  before.py (or of `site_lines`, where the anti-pattern the human removed spans
  two places, e.g. a nested def and the jit call wrapping it); overall and split by `needs` ("file": the file shows everything;
  "project": it takes another module or the framework's conventions);
- findings of that family at the fixed site of the after-versions (the human's
  fix must stay silent, preview findings included; target 0).

Recall is given for the default tier (what `check` shows) and with `--preview`.

    python benchmarks/human_fixes.py [--json OUT] [--only SLUG ...]
    PYTHONPATH=/path/to/other/checkout python benchmarks/human_fixes.py   # measure another jaxfix
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import tomllib

CASES = Path(__file__).parent / "human_fixes" / "cases"
WINDOW = 2


@dataclass
class Outcome:
    slug: str
    code: str
    needs: str
    fixed_line: int
    caught: bool  # by a finding `check` shows by default
    caught_in_preview: bool = False  # by any finding, preview ones included (`--preview`)
    before_near: list[str] = field(default_factory=list)
    after_site: list[str] = field(default_factory=list)
    error: str = ""


def _layout(case: Path, version: str, spec: dict, root: Path) -> Path:
    """Place the version under its repo path, with that version's context files."""
    main = root / spec["source"]["path"]
    main.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(case / f"{version}.py", main)
    ctx = case / "context" / version
    if ctx.is_dir():
        for f in ctx.rglob("*.py"):
            dest = root / f.relative_to(ctx)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
    return main


def _check(root: Path) -> list[dict]:
    """The findings of `check --select ALL --preview` (each marked `preview`; a jaxfix from before
    preview mode is run without the option)."""
    for preview in (["--preview"], []):
        proc = subprocess.run(
            [sys.executable, "-m", "jaxfix", "check", "--select", "ALL", "--no-cache",
             "--output-format", "json", "-q", *preview, str(root)],
            capture_output=True, text=True, check=False,
            cwd=root.parent,  # not the caller's cwd: `-m` puts it first on sys.path (PYTHONPATH picks the jaxfix)
        )
        if not (proc.returncode == 2 and "--preview" in proc.stderr):
            break
    if proc.returncode not in (0, 1):
        raise RuntimeError(proc.stderr.strip()[-400:])
    return json.loads(proc.stdout or "[]")


def after_site(before: list[str], after: list[str], line: int) -> tuple[int, int]:
    """Lines of after.py that replaced (or kept) before.py's fixed line."""
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    i = line - 1
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if i1 <= i < i2 or (tag == "insert" and i1 == i):
            if tag == "equal":
                return j1 + (i - i1) + 1, j1 + (i - i1) + 1
            return j1 + 1, max(j1 + 1, j2)
    return line, line


def _family(code: str) -> str:
    return code[:4]


def run_case(case: Path) -> Outcome:
    spec = tomllib.loads((case / "case.toml").read_text())
    out = Outcome(case.name, spec["code"], spec["needs"], spec["fixed_line"], False)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root_b, root_a = Path(tmp, "before"), Path(tmp, "after")
            main_b = _layout(case, "before", spec, root_b)
            main_a = _layout(case, "after", spec, root_a)
            found_b = [f for f in _check(root_b) if Path(f["path"]).resolve() == main_b.resolve()]
            found_a = [f for f in _check(root_a) if Path(f["path"]).resolve() == main_a.resolve()]
    except (RuntimeError, json.JSONDecodeError) as exc:
        out.error = str(exc)
        return out
    fam = _family(spec["code"])
    line = spec["fixed_line"]
    sites = [line, *spec.get("site_lines", [])]
    near = [f for f in found_b if any(abs(f["line"] - s) <= WINDOW for s in sites)]
    out.before_near = [f"{f['code']}@{f['line']}" + (" (preview)" if f.get("preview") else "") for f in near]
    out.caught = any(_family(f["code"]) == fam and not f.get("preview") for f in near)
    out.caught_in_preview = any(_family(f["code"]) == fam for f in near)
    lo, hi = after_site(
        (case / "before.py").read_text().splitlines(),
        (case / "after.py").read_text().splitlines(),
        line,
    )
    out.after_site = [
        f"{f['code']}@{f['line']}" for f in found_a
        if _family(f["code"]) == fam and lo - WINDOW <= f["line"] <= hi + WINDOW
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write per-case outcomes here")
    ap.add_argument("--only", nargs="*", default=None, help="case slugs to run")
    args = ap.parse_args(argv)
    cases = sorted(p for p in CASES.iterdir() if (p / "case.toml").is_file())
    if args.only:
        cases = [c for c in cases if c.name in set(args.only)]
    outcomes = [run_case(c) for c in cases]
    for o in outcomes:
        mark = "ERROR" if o.error else ("caught" if o.caught else "missed")
        extra = f" after:{','.join(o.after_site)}" if o.after_site else ""
        near = ",".join(o.before_near) or "-"
        print(f"{mark:7} {o.code} {o.needs:7} {o.slug}  near:{near}{extra}{' ' + o.error if o.error else ''}")
    print()
    for label, group in (("all", outcomes),
                         ("needs=file", [o for o in outcomes if o.needs == "file"]),
                         ("needs=project", [o for o in outcomes if o.needs == "project"])):
        hit, anyway = sum(o.caught for o in group), sum(o.caught_in_preview for o in group)
        rate = f"{hit / len(group):.2f}" if group else "n/a"
        print(f"recall {label:14} {hit}/{len(group)} = {rate}   with --preview {anyway}/{len(group)}")
    flagged = [o for o in outcomes if o.after_site]
    print(f"after-versions flagged at the fixed site: {len(flagged)}/{len(outcomes)}"
          + (f" ({', '.join(o.slug for o in flagged)})" if flagged else ""))
    if args.json:
        args.json.write_text(json.dumps([asdict(o) for o in outcomes], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
