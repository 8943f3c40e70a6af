"""Rule documentation produced from the rule modules themselves (docstring, examples, options).

`jaxfix rule CODE` prints a page; `python -m jaxfix.ruledocs` regenerates
docs/rules/<CODE>.md and the index, and a test fails when those files are stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxfix.engine import registry
from jaxfix.rulebase import Code, Rule

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs" / "rules"


def render_rule_doc(rule: type[Rule], info: Code) -> str:
    """One page per code: the rule's docstring (Ruff's sections), its examples, its options."""
    lines = [f"# {info.code}: {info.name}", "", info.summary, "", f"Fix availability: {info.fix}.", ""]
    others = [c.code for c in rule.codes if c.code != info.code]
    if others:
        lines += [f"Rule `{rule.name}` also reports: {', '.join(others)}.", ""]
    doc = rule.doc()
    options = _option_lines(rule)
    if options and "\n## Options\n" in f"\n{doc}\n":
        doc, options = _into_options_section(doc, options), []  # one `## Options` per page
    lines += [doc, ""]
    for number, example in enumerate(rule.invalid, 1):
        lines += [f"## Reported ({number})", "", "```python", example.code.rstrip(), "```", ""]
        if example.fixed is not None:
            lines += ["Fixed (`jaxfix fix --unsafe-fixes`):", "", "```python", example.fixed.rstrip(), "```", ""]
        else:
            lines += ["No automatic fix: the finding says what to do.", ""]
    for number, example in enumerate(rule.valid, 1):
        lines += [f"## Not reported ({number})", "", "```python", example.code.rstrip(), "```", ""]
    if options:
        lines += ["## Options", "", *options, ""]
    return "\n".join(lines).rstrip() + "\n"


def _option_lines(rule: type[Rule]) -> list[str]:
    lines = []
    for opt in rule.options:
        choices = f" (one of {', '.join(map(repr, opt.choices))})" if opt.choices else ""
        lines.append(f"- `[tool.jaxfix.{rule.table()}] {opt.name}` = `{opt.default!r}`{choices}: {opt.doc}")
    return lines


def _into_options_section(doc: str, options: list[str]) -> str:
    """`doc` with the option list at the end of its own `## Options` section."""
    lines = doc.split("\n")
    start = lines.index("## Options")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    return "\n".join([*lines[:end], "", *options, *([""] if end < len(lines) else []), *lines[end:]])


def render_index() -> str:
    lines = ["# jaxfix rules", "", "| code | name | fix | summary |", "| --- | --- | --- | --- |"]
    for _rule, info in registry.all_codes():
        lines.append(f"| [{info.code}]({info.code}.md) | {info.name} | {info.fix} | {info.summary} |")
    return "\n".join(lines) + "\n"


def expected_files() -> dict[str, str]:
    files = {f"{info.code}.md": render_rule_doc(rule, info) for rule, info in registry.all_codes()}
    files["README.md"] = render_index()
    return files


def write_docs(folder: Path = DOCS_DIR) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    expected = expected_files()
    for stale in folder.glob("*.md"):
        if stale.name not in expected:
            stale.unlink()
    for name, text in expected.items():
        (folder / name).write_text(text, encoding="utf-8")
    return sorted(expected)


if __name__ == "__main__":
    written = write_docs()
    print(f"wrote {len(written)} files to {DOCS_DIR}", file=sys.stderr)
