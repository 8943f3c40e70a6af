"""The explain report: a text table for people, a stable JSON object for tools (docs/explain.md)."""

from __future__ import annotations

import json
import shlex

from jaxfix.explain.events import Collected, Function, at, display_path
from jaxfix.explain.join import Cause
from jaxfix.explain.run import RunOutcome

JSON_VERSION = 1


def _status(run: RunOutcome) -> str:
    command = shlex.join(run.argv)
    if run.returncode is None:
        return f"`{command}` did not run: {run.problem}"
    text = f"`{command}` exited with status {run.returncode} after {run.seconds:.1f} s"
    return text + (f" ({run.problem})" if run.problem else "")


def _fix(finding) -> str:
    return finding.fix.safety.value if finding.fix is not None else "none"


def _cause_lines(cause: Cause, cwd: str | None) -> list[str]:
    miss = cause.first
    count = len(cause.misses)
    where = miss.site.show(cwd) if miss.site else "an unknown call site"
    nested = " (inside another function's trace)" if miss.nested else ""
    lines = [f"  {count}× at {where}{nested}: {miss.reason}"]
    if cause.matches:
        for match in cause.matches:
            f = match.finding
            off = (
                "; not selected by your config" if not match.selected
                else "; shown by `check --preview`" if not match.shown else ""
            )
            lines.append(
                f"    -> {f.code} {f.name} (fix: {_fix(f)}{off}) at {at(f.path, f.cell, f.line, cwd)}:{f.column}"
            )
    else:
        lines.append("    -> no rule matches" + (f" ({cause.note})" if cause.note else "") + "; JAX's reason is above")
    return lines


def render_text(
    run: RunOutcome,
    collected: Collected,
    causes: dict[tuple, list[Cause]],
    *,
    show_all: bool = False,
    cwd: str | None = None,
) -> str:
    out = [f"jaxfix explain: {_status(run)}"]
    if run.returncode is not None and not run.monitored:
        out.append(
            "No Python process of the command loaded jaxfix's monitor: it started no Python, or Python "
            "ignored PYTHONPATH (python -I or -E). Nothing was observed."
        )
        return "\n".join(out) + "\n"
    if run.returncode is not None and not run.used_jax:
        out.append("The command never imported jax: nothing was traced or compiled.")
        return "\n".join(out) + "\n"
    shown = [f for f in collected.functions if show_all or f.shown_by_default]
    hidden = [f for f in collected.functions if f not in shown]
    if not shown:
        out.append("No jitted function of yours was traced.")
    else:
        rows = [("function", "defined at", "traces", "compiles", "compile s")]
        for f in shown:
            name = f.name + (f" #{f.ordinal + 1}" if f.ordinal else "")
            if f.kind != "jit":
                name += f" [{f.kind}]"
            rows.append(
                (name, at(f.path, f.cell, f.line, cwd), str(f.traces), str(f.compiles), f"{f.compile_seconds:.3f}")
            )
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        out.append("")
        for r in rows:
            out.append(
                f"  {r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]:>{widths[3]}}  {r[4]:>{widths[4]}}".rstrip()
            )
    if hidden:
        compiles = sum(f.compiles for f in hidden)
        seconds = sum(f.compile_seconds for f in hidden)
        out.append(
            f"  ({len(hidden)} more: JAX's own functions and bodies traced inside jit, {compiles} compiles, "
            f"{seconds:.3f} s; --all shows them)"
        )
    recompiled = [f for f in shown if f.recompiled]
    if recompiled:
        out.append("")
        out.append("Recompilations:")
        for f in recompiled:
            name = f.name + (f" #{f.ordinal + 1}" if f.ordinal else "")
            out.append(f"{name} ({at(f.path, f.cell, f.line, cwd)}): traced {f.traces} times, compiled {f.compiles} times")
            for cause in causes.get(f.key, []):
                out.extend(_cause_lines(cause, cwd))
            if not f.retraces:
                out.append("  compiled more than once without a new trace (new shardings or devices?)")
    elif shown:
        out.append("")
        out.append("No function of yours was traced or compiled more than once per process.")
    for line in collected.errors[:5]:
        out.append(f"warning: {line}")
    if collected.truncated:
        out.append("warning: a process wrote more events than the limit; counts after it are missing")
    return "\n".join(out) + "\n"


def _finding_dict(match, cwd: str | None) -> dict:
    f = match.finding
    return {
        "code": f.code,
        "name": f.name,
        "path": display_path(f.path, cwd),
        "line": f.line,
        "cell": f.cell,
        "column": f.column,
        "end_line": f.end_line,
        "end_column": f.end_column,
        "message": f.message,
        "fix": None if f.fix is None else f.fix.safety.value,
        "selected": match.selected,
        "preview": f.preview,  # `check` shows it only with --preview (when `shown` is false)
        "shown": match.shown,
    }


def _function_dict(f: Function, causes: list[Cause], cwd: str | None) -> dict:
    return {
        "name": f.name,
        "path": display_path(f.path, cwd),
        "line": f.line,
        "cell": f.cell,
        "ordinal": f.ordinal,
        "kind": f.kind,
        "user": f.user,
        "traces": f.traces,
        "compiles": f.compiles,
        "trace_seconds": round(f.trace_seconds, 6),
        "lower_seconds": round(f.lower_seconds, 6),
        "compile_seconds": round(f.compile_seconds, 6),
        "processes": len(f.pids),
        "recompiled": f.recompiled,
        "recompiles": [
            {
                "path": display_path(c.first.site.path, cwd) if c.first.site else None,
                "line": c.first.site.line if c.first.site else None,
                "cell": c.first.site.cell if c.first.site else None,
                "column": c.first.site.column if c.first.site else None,
                "function": c.first.site.function if c.first.site else None,
                "count": len(c.misses),
                "kind": c.first.kind,
                "reason": c.first.reason,
                "reasons": sorted({m.reason for m in c.misses})[:10],
                "nested": c.first.nested,
                "jax_explanation": c.first.detail,
                "findings": [_finding_dict(m, cwd) for m in c.matches],
                "note": c.note,
            }
            for c in causes
        ],
    }


def render_json(
    run: RunOutcome,
    collected: Collected,
    causes: dict[tuple, list[Cause]],
    *,
    show_all: bool = False,
    cwd: str | None = None,
) -> str:
    shown = [f for f in collected.functions if show_all or f.shown_by_default]
    hidden = [f for f in collected.functions if f not in shown]
    data = {
        "version": JSON_VERSION,
        "command": run.argv,
        "exit_status": run.returncode,
        "seconds": round(run.seconds, 3),
        "problem": run.problem,
        "monitored": run.monitored,
        "used_jax": run.used_jax,
        "processes": collected.processes,
        "functions": [_function_dict(f, causes.get(f.key, []), cwd) for f in shown],
        "hidden": {
            "functions": len(hidden),
            "compiles": sum(f.compiles for f in hidden),
            "compile_seconds": round(sum(f.compile_seconds for f in hidden), 6),
        },
        "warnings": collected.errors[:20] + (["event limit reached; counts incomplete"] if collected.truncated else []),
    }
    return json.dumps(data, indent=2) + "\n"
