"""Are the rules' `could_match` screens sound and tight on real code? Rules run with screens bypassed.

For every file of the corpus (default: the installed jax, flax and optax source trees) and every
rule whose text prefilter passes, the rule's `check` runs on the parsed file whether or not its
`could_match` and `could_match_in` admit it. A finding on a file the screens rejected is a
*miss*: a screen is unsound there. Prints, per rule: files passing the prefilter, files (and lines) the screen
admits, files with findings, findings, misses; exits 1 on any miss. Slow on purpose (it
libcst-parses everything the prefilters admit); a measurement, not a test.

Rules that use a project index (pytree-cache: base classes from other files) or follow calls
(the traced-code rules: a file other modules' traced code calls into is screened with those
functions entered, and the checked packages are out of sight for the analysis) are checked with
one built over the same files, as `jaxfix check` builds it; the screens are asked as the engine
asks them (`fixing.screens_admit`).

    python scripts/screen_soundness.py [-j 2] [--rules jit-in-loop,pytree-cache] [PATH ...]
"""

from __future__ import annotations

import argparse
import ast
import importlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jaxfix.analysis.cstparse import parse_module  # noqa: E402
from jaxfix.engine import registry  # noqa: E402
from jaxfix.engine.config import Config  # noqa: E402
from jaxfix.engine.fixing import _entered_from_elsewhere, screens_admit  # noqa: E402
from jaxfix.rulebase import RuleContext  # noqa: E402

PACKAGES = ("jax", "flax", "optax")

_project = None
_rule_names: tuple[str, ...] = ()


def _init(project, rule_names) -> None:
    global _project, _rule_names
    _project, _rule_names = project, rule_names


def corpus() -> list[str]:
    roots = [Path(importlib.import_module(name).__file__).parent for name in PACKAGES]
    return sorted(str(p) for root in roots for p in root.rglob("*.py"))


def one(path: str) -> dict:
    """{rule: (admitted, findings)} for the rules whose prefilter passes, and the file's line count."""
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return {"path": path, "lines": 0, "rules": {}, "error": f"{type(exc).__name__}: {exc}"}
    out: dict = {"path": path, "lines": source.count("\n"), "rules": {}}
    rules = [r() for r in registry.all_rules() if r.name in _rule_names]
    entered = _entered_from_elsewhere(_project, path)
    # (a rule following calls runs on a file other modules' traced code enters, whatever its text)
    rules = [r for r in rules if (entered and r.follows_calls) or any(token in source for token in r.prefilter)]
    if not rules:
        return out
    try:
        tree = ast.parse(source)
        module = parse_module(source)
    except Exception as exc:  # noqa: BLE001 - an unparsable corpus file is reported, not fatal
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    # the last screens (`could_match_in`) are asked before the module is set, as the engine does
    ctx = RuleContext(source, path, options=Config().options(), project=_project, tree=tree)
    admitted = {rule.name: screens_admit(rule, ctx) for rule in rules}  # the pattern is a screen too
    ctx.set_module(module)
    for rule in rules:
        findings = [f"{f.code} {f.line}:{f.column}" for f in rule.check(ctx)]
        out["rules"][rule.name] = (admitted[rule.name], findings)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="files or folders (default: the jax/flax/optax corpus)")
    parser.add_argument("--rules", default="all", help="rule names, comma-separated (default: all)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args(argv)

    known = [r for r in registry.all_rules() if not r.sees_findings]
    names = tuple(r.name for r in known) if args.rules == "all" else tuple(args.rules.split(","))
    unknown = set(names) - {r.name for r in known}
    if unknown:
        parser.error(f"unknown rules: {', '.join(sorted(unknown))}")
    if args.paths:
        files = sorted(
            str(f) for p in map(Path, args.paths) for f in ([p] if p.is_file() else p.rglob("*.py"))
        )
    else:
        files = corpus()

    start = time.perf_counter()
    project = None
    if any(r.uses_project or r.follows_calls for r in known if r.name in names):
        from jaxfix.engine.project import build_project_index

        project = build_project_index(files, workers=args.jobs)
    with ProcessPoolExecutor(args.jobs, initializer=_init, initargs=(project, names)) as pool:
        results = list(pool.map(one, files, chunksize=4))

    misses: list[str] = []
    print(f"{len(files)} files, {sum(r['lines'] for r in results)} lines; project index: {project is not None}")
    print(f"{'rule':36} {'prefilter':>9} {'admitted':>9} {'(lines)':>8} {'w/ find.':>8} {'findings':>8} {'misses':>6}")
    for name in names:
        rows = [(r, r["rules"][name]) for r in results if name in r["rules"]]
        admitted = [(r, a) for r, a in rows if a[0]]
        with_findings = [(r, a) for r, a in rows if a[1]]
        rule_misses = [f"{r['path']}: {f}" for r, (ok, found) in rows if not ok for f in found]
        misses += [f"{name}: {m}" for m in rule_misses]
        print(
            f"{name:36} {len(rows):9} {len(admitted):9} {sum(r['lines'] for r, _ in admitted):8} "
            f"{len(with_findings):8} {sum(len(a[1]) for _, a in rows):8} {len(rule_misses):6}"
        )
    for r in results:
        if "error" in r:
            print(f"not parsed: {r['path']}: {r['error']}")
    for miss in misses:
        print(f"MISS {miss}")
    print(f"{time.perf_counter() - start:.1f} s")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
