"""`path:line:col: CODE [*] message`, one line per finding, as Ruff and flake8 print them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from jaxfix.model import Finding, Safety


def fix_mark(finding: Finding) -> str:
    fix = finding.fix
    if fix is None or not fix.applicable:
        return ""
    return "[*] " if fix.safety is Safety.SAFE else "[-] "


def format_finding(finding: Finding) -> str:
    """The finding's line. A manual fix (no automatic one: no `[*]`/`[-]`) is said to be manual
    once: its guidance behind "manual:" when the message does not carry it, else the one word
    "(manual)" after a message that reads like a fix ("...; hoist it (...)") without saying so."""
    line = f"{where(finding)}: {finding.code} {fix_mark(finding)}{finding.message}"
    fix = finding.fix
    if fix is not None and fix.safety is Safety.MANUAL:
        if not _said(fix.title, finding.message):
            line += f" (manual: {fix.title})"
        elif "manual" not in finding.message.lower():
            line += " (manual)"
    return line


def where(finding: Finding) -> str:
    """`path:line:col`, or in a notebook `path:cell N:line:col` (Ruff's notebook style)."""
    cell = f"cell {finding.cell}:" if finding.cell is not None else ""
    return f"{finding.path}:{cell}{finding.line}:{finding.column}"


def _said(guidance: str, message: str) -> bool:
    """Whether the message already carries the manual guidance, so it is printed once.

    Most rules put the reason in the message; a title such as "Hoist by hand: <reason>" repeats it
    behind a lead-in, which counts as said.
    """
    reason = guidance.partition(": ")[2]
    return guidance in message or bool(reason) and reason in message


def render(findings: Iterable[Finding], show_fixes: bool = False) -> str:
    """One line per finding; with `show_fixes`, the fix `jaxfix fix` would apply under it (the
    same title `fix` reports: one finding, one fix)."""
    if not show_fixes:
        return "".join(format_finding(f) + "\n" for f in findings)
    return "".join(format_finding(f) + "\n" + fix_line(f) for f in findings)


def fix_line(finding: Finding) -> str:
    fix = finding.fix
    if fix is None:
        return ""
    kind = fix.safety.value if fix.applicable else "manual"
    return f"    fix ({kind}): {fix.title}\n"


def statistics(findings: Iterable[Finding]) -> str:
    counts = Counter((f.code, f.name) for f in findings)
    fixable = Counter(f.code for f in findings if fix_mark(f) == "[*] ")
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return "".join(
        f"{count:>5}  {code:<7} {'[*]' if fixable[code] else '   '} {name}\n" for (code, name), count in rows
    )


def summary(
    findings: list[Finding],
    errors: int = 0,
    unsafe_enabled: Callable[[Finding], bool] = lambda finding: False,
    hidden_preview: int = 0,
) -> str:
    """The closing line; never "passed" when a file could not be checked. "In full": a notebook
    with a cell that does not parse is still checked in its other cells, and its findings are shown.
    The fixes, in Ruff's words: those `check --fix` applies, and the unsafe ones it leaves
    (`unsafe_enabled` is False for their file) as hidden fixes `--unsafe-fixes` enables. Then, in
    the same words, the preview findings the run left out (`FileResult.hidden_preview`), if any."""
    return _found(findings, errors, unsafe_enabled) + (
        f"{hidden_preview} hidden finding{'s' if hidden_preview != 1 else ''} can be shown with the "
        "`--preview` option (docs/preview.md).\n"
        if hidden_preview else ""
    )


def _found(findings: list[Finding], errors: int, unsafe_enabled: Callable[[Finding], bool]) -> str:
    if errors:
        unchecked = f"{errors} file{'s' if errors != 1 else ''} could not be checked in full"
        return f"Found {len(findings)} problem{'s' if len(findings) != 1 else ''}; {unchecked} (errors above).\n"
    if not findings:
        return "All checks passed!\n"
    unsafe = [f for f in findings if fix_mark(f) == "[-] "]
    hidden = sum(1 for f in unsafe if not unsafe_enabled(f))
    fixable = sum(1 for f in findings if fix_mark(f) == "[*] ") + len(unsafe) - hidden
    text = f"Found {len(findings)} problem{'s' if len(findings) != 1 else ''}."
    enable = f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option"
    if fixable:
        text += f" [*] {fixable} fixable with `jaxfix check --fix`" + (f" ({enable})." if hidden else ".")
    elif hidden:
        text += f" No fixes available ({enable})."
    return text + "\n"
