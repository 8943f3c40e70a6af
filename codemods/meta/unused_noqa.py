"""JAX001 unused-noqa

## What it does
Finds `# noqa: JAX...` codes on lines where no jaxfix finding of that code exists.

## Why is this bad?
A stale suppression hides nothing today but will silently hide a real problem the day one
appears on that line. Large codebases adopt jaxfix with `jaxfix check --add-noqa`; this rule
tells you which of those comments the code has since outgrown.

## Known problems
Only codes that are selected in this run are judged: with `--select JAX2`, a `# noqa: JAX101`
is left alone, and with `--select JAX001` alone nothing is (a `# noqa: JAX001` silences its own
report). Codes of other tools (`E501`) and a bare `# noqa` are never touched.

## Example
```python
step = jax.jit(update)  # noqa: JAX201
```

## Use instead
```python
step = jax.jit(update)
```

## Fix safety
Safe: the fix removes only the unused jaxfix codes (the whole comment when nothing else is
left in it); comments are not code, so values, gradients, tree structure and checkpoints
cannot change.

## References
- https://docs.astral.sh/ruff/rules/unused-noqa/
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from codemods._command import commands_for
from jaxfix.analysis.comments import Comment, comments_in, find_noqa_with_codes
from jaxfix.model import Edit, Finding, Fix, Safety
from jaxfix.rulebase import Code, Invalid, Rule, Valid

_JAX_CODE = re.compile(r"JAX[0-9]+$")
# Only a `noqa:` naming a jaxfix code can be reported: a text without one is not tokenized at all.
_NAMES_A_JAX_CODE = re.compile(r"noqa:[^\n]*?jax[0-9]", re.IGNORECASE)


class UnusedNoqaRule(Rule):
    __doc__ = __doc__

    name = "unused-noqa"
    codes = (Code("JAX001", "unused-noqa", "`# noqa` code that suppresses nothing", fix="always"),)
    prefilter = ("noqa", "NOQA")
    valid = (
        Valid(
            """
            import jax
            import jax.numpy as jnp


            def run(xs):
                total = jnp.zeros(())
                for x in xs:
                    total = total + jax.jit(lambda v: v * 2.0)(x)  # noqa: JAX201
                return total
            """
        ),
        Valid(
            """
            import jax

            step = jax.jit(lambda x: x + 1)  # noqa: E501
            scale = jax.jit(lambda x: x * 2)  # noqa
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax

            step = jax.jit(lambda x: x + 1)  # noqa: JAX201
            """,
            fixed="""
            import jax

            step = jax.jit(lambda x: x + 1)
            """,
        ),
        Invalid(
            """
            import jax

            step = jax.jit(lambda x: x + 1)  # noqa: E501, JAX101
            """,
            fixed="""
            import jax

            step = jax.jit(lambda x: x + 1)  # noqa: E501
            """,
        ),
    )
    sees_findings = True

    def check_findings(
        self,
        source: str,
        path: str,
        findings: list[Finding],
        code_filter: Callable[[str], bool],
        comments: Callable[[], list[Comment]] | None = None,
    ) -> Iterable[Finding]:
        if not _NAMES_A_JAX_CODE.search(source):
            return
        used: dict[int, set[str]] = {}
        for finding in findings:
            used.setdefault(finding.line, set()).add(finding.code)
        line_starts = [0]
        for line in source.splitlines(keepends=True):
            line_starts.append(line_starts[-1] + len(line))
        for row, col, comment in comments() if comments is not None else comments_in(source)[0]:
            match = find_noqa_with_codes(comment)
            if match is None:
                continue
            codes = [c.strip() for c in match.group("codes").split(",")]
            unused = [
                c for c in codes
                if _JAX_CODE.match(c.upper()) and code_filter(c.upper())
                and not any(u.startswith(c.upper()) for u in used.get(row, ()))
            ]
            if not unused:
                continue
            start = line_starts[row - 1] + col
            kept = [c for c in codes if c not in unused]
            if kept:
                new_comment = comment[: match.start("codes")] + ", ".join(kept) + comment[match.end("codes") :]
                edit = Edit(start, start + len(comment), new_comment)
            else:
                line_text = source[line_starts[row - 1] : start]
                trimmed = len(line_text) - len(line_text.rstrip(" \t"))
                rest = comment[: match.start()] + comment[match.end() :]
                edit = Edit(start - trimmed, start + len(comment), (" " * (trimmed > 0) + rest.strip()) if rest.strip() else "")
            yield Finding(
                code="JAX001",
                name="unused-noqa",
                path=path,
                line=row,
                column=col + 1,
                end_line=row,
                end_column=col + len(comment) + 1,
                message=f"Unused `noqa` code{'s' if len(unused) > 1 else ''}: {', '.join(unused)}",
                fix=Fix(title=f"Remove unused {', '.join(unused)}", safety=Safety.SAFE, edits=(edit,)),
            )


# `<Name>Command` for each rule: libcst codemod commands, made on first access
__getattr__ = commands_for(UnusedNoqaRule)
