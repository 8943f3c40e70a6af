"""Golden, idempotence and differential-execution checks for fixtures/pytree_cache.

Cases are discovered from the folder. The behavioural check runs each case's `.drive.py`
on the original and on the rewritten module in this process (fresh module objects,
so no shared jit caches) and compares under the drive contract: a key named
`improves:...` may go from "CRASH:<exc>" in the original to a value in the rewrite
(reported, accepted); every other difference fails. The quick set runs the behaviour of the
first cases, `--long` of every case.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import black
import pytest
from long_support import quick_and_long

from codemods.pytree_cache.cached_property_on_pytree import CachedPropertyOnPytreeRule
from codemods.pytree_cache.method_cache_on_pytree import MethodCacheOnPytreeRule
from jaxfix.engine import analyze
from jaxfix.engine.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pytree_cache_support import FIXTURES, compare, load_drive, load_module  # noqa: E402

POSITIVE = sorted(p.name[: -len(".in.py")] for p in FIXTURES.glob("*.in.py"))
NEGATIVE = sorted(p.name[: -len(".ok.py")] for p in FIXTURES.glob("*.ok.py"))
# the goldens are of the opt-in field style (`cache-style = "field"`); the default is tested below
FIELD = Config(unsafe_fixes=True).with_options(
    "pytree-cache", **{"cache-style": "field", "unproven-pytrees": True}
)


def _config(case: str) -> Config:
    return Config(unsafe_fixes=case.endswith("_unsafe")).with_options(
        "pytree-cache", **{"cache-style": "field", "unproven-pytrees": True}
    )


def _below_imports(text: str) -> list[str]:
    """The lines from the first statement that is not an import (its decorators included)."""
    tree = ast.parse(text)
    first = next(n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom, ast.Expr)))
    start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))])
    return text.splitlines()[start - 1 :]


def _imported_names(text: str) -> set[str]:
    names = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname or a.name.split(".")[0] for a in node.names)
    return names


def _findings_lines(result) -> list[str]:
    rows = sorted((f.line, f.column, f.code, f.fix.safety.value if f.fix else "none") for f in result.findings)
    return [f"{line}:{col} {code} {safety}" for line, col, code, safety in rows]


def test_cases_discovered():
    assert len(POSITIVE) >= 8 and len(NEGATIVE) >= 3
    for case in POSITIVE:
        for suffix in (".out.py", ".findings.txt", ".drive.py"):
            assert (FIXTURES / f"{case}{suffix}").is_file(), case + suffix


@pytest.mark.parametrize("case", POSITIVE)
def test_golden_output_and_findings(case):
    source = (FIXTURES / f"{case}.in.py").read_text()
    result = analyze(source, f"{case}.in.py", _config(case), fix=True)
    assert result.error is None
    assert _findings_lines(result) == (FIXTURES / f"{case}.findings.txt").read_text().splitlines()
    expected = (FIXTURES / f"{case}.out.py").read_text()
    assert (result.fixed_source or source) == expected


@pytest.mark.parametrize("case", POSITIVE)
def test_output_is_stable_and_black_formatted(case):
    expected = (FIXTURES / f"{case}.out.py").read_text()
    again = analyze(expected, f"{case}.out.py", _config(case), fix=True)
    assert again.error is None
    assert again.fixed_source is None  # fixing the output changes nothing
    assert all(f.fix is None or not f.fix.applicable for f in again.findings)
    assert black.format_str(expected, mode=black.Mode()) == expected


@pytest.mark.parametrize("case", NEGATIVE)
def test_negative_cases_have_no_findings(case):
    source = (FIXTURES / f"{case}.ok.py").read_text()
    result = analyze(source, f"{case}.ok.py", FIELD, fix=True)
    assert result.error is None
    assert result.findings == []
    assert result.fixed_source is None


@pytest.mark.parametrize("case", POSITIVE)
def test_could_match_accepts_every_positive_case(case):
    tree = ast.parse((FIXTURES / f"{case}.in.py").read_text())
    reported = {line.split()[1] for line in (FIXTURES / f"{case}.findings.txt").read_text().splitlines()}
    assert reported
    for rule in (CachedPropertyOnPytreeRule, MethodCacheOnPytreeRule):
        assert rule.codes[0].code not in reported or rule().could_match(tree), rule.codes[0].code


@pytest.mark.slow
@pytest.mark.parametrize("case", quick_and_long(POSITIVE, keep=2))
def test_rewrite_behaves_like_original(case):
    drive = load_drive(FIXTURES / f"{case}.drive.py")
    original = drive.drive(load_module((FIXTURES / f"{case}.in.py").read_text(), case))
    rewritten = drive.drive(load_module((FIXTURES / f"{case}.out.py").read_text(), case))
    problems, improvements = compare(original, rewritten)
    assert problems == []
    # The closed-over instance: the original leaked a tracer, the rewrite does not.
    leak_keys = [k for k in original if "closure_then_eager" in k]
    assert leak_keys and all(original[k] == "CRASH:UnexpectedTracerError" for k in leak_keys)
    assert all(any(i.startswith(k) for i in improvements) for k in leak_keys), improvements


@pytest.mark.slow
@pytest.mark.parametrize("case", quick_and_long(POSITIVE, keep=2))
def test_property_style_is_safe_and_behaves_like_original(case):
    """The default style, cache-style = "property": every fix is safe, no new field, values equal
    on the same drive."""
    source = (FIXTURES / f"{case}.in.py").read_text()
    unproven = Config().with_options("pytree-cache", **{"unproven-pytrees": True})
    result = analyze(source, f"{case}.in.py", unproven, fix=True)
    assert result.error is None
    config = Config().with_options("pytree-cache", **{"cache-style": "property", "unproven-pytrees": True})
    assert analyze(source, f"{case}.in.py", config, fix=True).fixed_source == result.fixed_source
    assert {f.fix.safety.value for f in result.findings} == {"safe"}
    fixed = result.fixed_source
    body = "\n".join(_below_imports(fixed)) + "\n"
    assert "@cached_property\n" not in body and "@functools.cached_property\n" not in body
    assert "@cp\n" not in body and "lru_cache(" not in body
    assert "_cache:" not in fixed and "with_caches" not in fixed
    # below the imports only decorator lines changed: the same lines minus removed `@lru_cache`/`@cache`
    removed = sum(f.code == "JAX102" for f in result.findings)
    assert len(_below_imports(source)) - len(_below_imports(fixed)) == removed
    changed = [(a, b) for a, b in zip(_below_imports(source), _below_imports(fixed)) if a != b]
    assert removed or all(b.strip() == "@property" for _, b in changed)
    assert black.format_str(fixed, mode=black.Mode()) == fixed
    # an import the fix left unused is gone; the others stay
    loads = {n.id for n in ast.walk(ast.parse(fixed)) if isinstance(n, ast.Name)}
    assert _imported_names(fixed) <= loads
    assert _imported_names(source) & loads <= _imported_names(fixed)
    drive = load_drive(FIXTURES / f"{case}.drive.py")
    original = drive.drive(load_module(source, case))
    rewritten = drive.drive(load_module(fixed, case))
    problems, _ = compare(original, rewritten)
    assert problems == []
