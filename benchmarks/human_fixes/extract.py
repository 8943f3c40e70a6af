"""Cut a human-fix case out of a mirrored repository's history.

Reads `case.toml` ([source] repo/commit/parent/path, `keep` = top-level or
`Class.method` names plus "imports"; optional [[context]] path/keep for files a
cross-file detection needs) and writes before.py/after.py (and context/) with
only the kept statements, so a case stays small but every kept line is the
project's own code. The fixed line is given upstream (`fixed_line_upstream`,
plus `extra_lines_upstream` where the anti-pattern spans two places, e.g. a
nested def and the jit call that wraps it) and mapped into the trimmed before.py. Needs the mirror under /work/.mirror
(the `fetch` tool); the committed case files are what the benchmark reads.

    python benchmarks/human_fixes/extract.py benchmarks/human_fixes/cases/<slug>
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import tomllib

MIRRORS = Path("/work/.mirror")


def git_show(repo: str, ref: str, path: str) -> str:
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{ref}:{path}"],
        check=True, capture_output=True, text=True,
    ).stdout


def _span(node: ast.AST) -> tuple[int, int]:
    start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    return start, node.end_lineno


def kept_ranges(source: str, keep: list[str]) -> list[tuple[int, int]]:
    """1-based inclusive line ranges of the kept statements, in file order."""
    tree = ast.parse(source)
    wanted = set(keep)
    ranges: list[tuple[int, int]] = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and "imports" in wanted:
            ranges.append(_span(node))
            continue
        name = getattr(node, "name", None)
        if name is None and isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name = next((t.id for t in targets if isinstance(t, ast.Name)), None)
        if name is None and f"line:{node.lineno}" in wanted:
            ranges.append(_span(node))
            continue
        if name in wanted:
            ranges.append(_span(node))
        elif isinstance(node, ast.ClassDef) and any(k.startswith(name + ".") for k in wanted):
            first = node.body[0]
            start, _ = _span(node)
            body_start = _span(first)[0]
            # class header (decorators, bases, docstring)
            if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant):
                ranges.append((start, first.end_lineno))
            else:
                ranges.append((start, body_start - 1))
            for item in node.body:
                iname = getattr(item, "name", None)
                if iname is None and isinstance(item, (ast.Assign, ast.AnnAssign)):
                    targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                    iname = next((t.id for t in targets if isinstance(t, ast.Name)), None)
                if f"{name}.{iname}" in wanted or f"{name}.*fields" in wanted and isinstance(item, ast.AnnAssign):
                    ranges.append(_span(item))
    return ranges


def cut(source: str, keep: list[str]) -> tuple[str, dict[int, int]]:
    lines = source.splitlines()
    out: list[str] = []
    mapping: dict[int, int] = {}
    prev_end = 0
    for start, end in kept_ranges(source, keep):
        if out and start > prev_end + 1:
            out.append("")
        for n in range(start, end + 1):
            out.append(lines[n - 1])
            mapping[n] = len(out)
        prev_end = end
    text = "\n".join(out) + "\n"
    ast.parse(text)
    return text, mapping


def build(case_dir: Path) -> None:
    spec = tomllib.loads((case_dir / "case.toml").read_text())
    src = spec["source"]
    before_full = git_show(src["repo"], src["parent"], src["path"])
    after_full = git_show(src["repo"], src["commit"], src["path"])
    keep = src["keep"]
    before, mapping = cut(before_full, keep)
    after, _ = cut(after_full, src.get("keep_after", keep))
    header = f"# Trimmed from {src['repo']}@{{}}:{src['path']} ({src['licence']}); see case.toml.\n"
    (case_dir / "before.py").write_text(header.format(src["parent"][:12]) + before)
    (case_dir / "after.py").write_text(header.format(src["commit"][:12]) + after)
    fixed = mapping.get(src["fixed_line_upstream"])
    if fixed is None:
        raise SystemExit(f"{case_dir.name}: fixed line {src['fixed_line_upstream']} not kept")
    line = fixed + 1  # the one-line header shifts everything by one
    toml_path = case_dir / "case.toml"
    toml_text = re.sub(r"(?m)^fixed_line = .*$", f"fixed_line = {line}", toml_path.read_text())
    extra = [mapping[n] + 1 for n in src.get("extra_lines_upstream", []) if n in mapping]
    if extra:
        toml_text = re.sub(r"(?m)^site_lines = .*$", f"site_lines = {extra}", toml_text)
    toml_path.write_text(toml_text)
    print(case_dir.name, "fixed line in before.py:", line)
    for ctx in spec.get("context", []):
        for ref, name in ((src["parent"], "before"), (src["commit"], "after")):
            text, _ = cut(git_show(src["repo"], ref, ctx["path"]), ctx["keep"])
            dest = case_dir / "context" / name / ctx["path"]
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(f"# Trimmed from {src['repo']}@{ref[:12]}:{ctx['path']} ({src['licence']}).\n" + text)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        build(Path(arg))
