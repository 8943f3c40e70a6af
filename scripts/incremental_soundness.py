"""Does the language server's incremental analysis agree with a full analysis on real code?

For every file of the corpus (default: the installed jax, flax and optax source trees), opens the
file in an `IncrementalAnalyzer`, applies `--edits` of the edits `tests/incremental_support.py`
knows (statements deleted, duplicated, swapped, renamed, lines inserted, imports added inside a
function), each followed by its undo, and compares every result with `engine.analyze` on the same
text. Prints the disagreements, then the number of files and edits; exits 1 on
any disagreement. Slow on purpose (three analyses per edit); a measurement, not a test.

    python scripts/incremental_soundness.py [-j 2] [--edits 3] [PATH ...]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from incremental_support import differences  # noqa: E402

from jaxfix.engine.config import Config  # noqa: E402

PACKAGES = ("jax", "flax", "optax")


def corpus() -> list[str]:
    roots = [Path(importlib.import_module(name).__file__).parent for name in PACKAGES]
    return sorted(str(p) for root in roots for p in root.rglob("*.py"))


def one(job: tuple[str, int]) -> tuple[str, list[str]]:
    path, edits = job
    try:
        source = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return path, []
    try:
        return path, differences(source, limit=edits, path=path, config=Config(select=("ALL",)))
    except Exception as exc:  # a crash of the analyzer is a disagreement too
        return path, [f"crash: {type(exc).__name__}: {exc}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("--edits", type=int, default=3)
    args = parser.parse_args()
    paths = args.paths or corpus()
    started = time.perf_counter()
    bad = 0
    with ProcessPoolExecutor(args.j) as pool:
        for path, problems in pool.map(one, [(p, args.edits) for p in paths], chunksize=4):
            for problem in problems:
                bad += 1
                print(f"{path}: {problem}", flush=True)
    print(f"files: {len(paths)}, edits per file: {args.edits}, disagreements: {bad}, {time.perf_counter() - started:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
