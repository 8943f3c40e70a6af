"""Turn the monitor's event lines into one record per traced function, with its recompilations.

Counting rules (see docs/explain.md):
- `traces`: the tracing-cache misses JAX explained for the function (each is a real trace,
  nested ones included). JAX explains misses only for functions outside its own files; for those
  (eager ops such as `jit(add)`) the count is of `jax.monitoring` trace events instead.
- `compiles`: `backend_compile_duration` events attributed to the function (an eager
  `lax.scan`/`cond`/`while_loop` compile is attributed to the user's body traced just before).
- A recompilation is every trace of a function after its first in the same process; its cause is
  where the call happened (JAX's call site) and JAX's reason, shortened to its key line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

JIT_KINDS = (None, "jit", "pjit")


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    column: int  # 0 when JAX did not give one
    function: str
    cell: int | None = None  # in a notebook: the cell, and `line` is the line in it

    def show(self, cwd: str | None = None) -> str:
        where = at(self.path, self.cell, self.line, cwd) + (f":{self.column}" if self.column else "")
        return f"{where} in {self.function}"


@dataclass
class Miss:
    """One retrace: where it was triggered and why (JAX's reason, shortened)."""

    pid: int
    site: Site | None
    kind: str  # redefined | static | pytree | types | context | debug | unknown | unrecorded
    reason: str
    detail: str  # JAX's full explanation ("" when not kept)
    nested: bool  # traced inside another function's trace
    classes: dict[str, tuple[str, int, int] | None] = field(default_factory=dict)  # class -> file, first, last line
    class_files: tuple[str, ...] = ()  # the files of those classes and of their (user) base classes


@dataclass
class Function:
    name: str
    path: str
    line: int
    ordinal: int
    user: bool
    traced_for: set[str] = field(default_factory=set)
    misses: int = 0
    trace_events: int = 0
    compiles: int = 0
    trace_seconds: float = 0.0
    lower_seconds: float = 0.0
    compile_seconds: float = 0.0
    top_level: bool = False  # some trace happened outside any other trace
    retraces: list[Miss] = field(default_factory=list)
    compiles_by_pid: dict[int, int] = field(default_factory=dict)
    pids: set[int] = field(default_factory=set)
    cell: int | None = None  # defined in a notebook: its cell, and `line` is the line in it

    @property
    def key(self) -> tuple[str, int, str, int]:
        return (self.path, self.line, self.name, self.ordinal)

    @property
    def traces(self) -> int:
        return self.misses if self.misses else self.trace_events

    @property
    def kind(self) -> str:
        """jit | eager-body (lax control flow run outside jit) | nested-body | library."""
        if not self.user:
            return "library"
        if not self.traced_for or self.traced_for & {"jit", "pjit"}:
            return "jit"
        return "eager-body" if self.top_level else "nested-body"

    @property
    def shown_by_default(self) -> bool:
        return self.kind in ("jit", "eager-body")

    @property
    def recompiled(self) -> bool:
        """Traced or compiled more than once in one process (the user's functions only: JAX's
        eager ops compile once per new shape and dtype by design)."""
        return self.user and (bool(self.retraces) or any(n > 1 for n in self.compiles_by_pid.values()))


def at(path: str, cell: int | None, line: int, cwd: str | None = None) -> str:
    """`path:line`, or `path:cell N:line` in a notebook (as `check` prints it)."""
    return f"{display_path(path, cwd)}:" + (f"cell {cell}:" if cell else "") + f"{line}"


def display_path(path: str, cwd: str | None = None) -> str:
    if not path:
        return "?"
    if path.startswith("<"):
        return path
    for marker in ("site-packages", "dist-packages"):
        head, sep, tail = path.partition(os.sep + marker + os.sep)
        if sep:
            return tail
    try:
        rel = os.path.relpath(path, cwd or os.getcwd())
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


# -- JAX's explanation text -> (kind, short reason) ------------------------------------------------

_TREE_LINE = re.compile(r"^\s*\* at input path (.*?), now (.*) and before (.*), so (.*)$")
_TYPE_LINE = re.compile(r"^\s*\* at (.*?), now (.*) and before (.*)$")
_STATIC = re.compile(r"^<class 'jax\._src\.tree_util\.Static'> with pytree metadata Static\(val=(.*)\)$", re.S)
_CLASS = re.compile(r"^<class '([\w.]+)'> with pytree metadata (.*)$", re.S)
_PATH = re.compile(r"^\[(0|1)\]\[(\d+|'[^']*'|\"[^\"]*\")\](.*)$")


def _shorten(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def argument_name(path: str, params: list[str] | None) -> str:
    """`[0][1]` -> the second positional parameter's name; `[1]['n']` -> n; else the path."""
    match = _PATH.match(path)
    if not match:
        return path
    group, index, rest = match.groups()
    if group == "1":
        return index.strip("'\"") + rest
    i = int(index)
    if params and i < len(params):
        return params[i] + rest
    return f"positional argument {i}" + rest


def classify(text: str, params: list[str] | None = None) -> tuple[str, str]:
    """The kind of a tracing-cache miss and its key line, from JAX's explanation."""
    lines = text.splitlines()
    body = [line for line in lines[1:] if line.strip()]
    joined = "\n".join(body)
    if "never seen function" in joined:
        name = lines[2].split()[0] if len(lines) > 2 and lines[2].strip() else "the function"
        return "redefined", (
            f"never seen function `{name}`: a new function object for the same definition "
            "(JAX: maybe the function is being re-defined repeatedly)"
        )
    if "different input pytree" in joined:
        parts, all_static = [], True
        for line in body:
            match = _TREE_LINE.match(line)
            if not match:
                continue
            path, now, before, _why = match.groups()
            name = argument_name(path, params)
            s_now, s_before = _STATIC.match(now), _STATIC.match(before)
            if s_now and s_before:
                parts.append(f"`{name}` now {_shorten(s_now.group(1), 40)}, before {_shorten(s_before.group(1), 40)}")
                continue
            all_static = False
            c_now, c_before = _CLASS.match(now), _CLASS.match(before)
            if c_now and c_before and c_now.group(1) == c_before.group(1):
                cls = c_now.group(1).rpartition(".")[2]
                parts.append(
                    f"`{name}`: {cls} pytree metadata now {_shorten(c_now.group(2), 50)}, before {_shorten(c_before.group(2), 50)}"
                )
            else:
                parts.append(f"`{name}` now {_shorten(now, 50)}, before {_shorten(before, 50)}")
        if parts and all_static:
            return "static", "static argument changed: " + "; ".join(parts[:3])
        return "pytree", "different input pytree: " + ("; ".join(parts[:3]) or _shorten(joined, 120))
    if "different input types" in joined:
        parts = []
        for line in body:
            match = _TYPE_LINE.match(line)
            if match:
                parts.append(f"`{match.group(1)}` now {match.group(2)}, before {match.group(3)}")
        more = f" (+{len(parts) - 3} more)" if len(parts) > 3 else ""
        return "types", "different input types: " + "; ".join(parts[:3]) + more
    if "Tracing context doesn't match" in joined:
        star = next((line.strip(" *") for line in body if line.strip().startswith("*")), "")
        return "context", "tracing context differs (config or context manager)" + (f": {star}" if star else "")
    if "Debug info doesn't match" in joined:
        return "debug", "debug info differs (e.g. other argument names or static_argnames for the same function)"
    return "unknown", "JAX: cache miss explanation unavailable"


# -- aggregation -----------------------------------------------------------------------------------


@dataclass
class Collected:
    functions: list[Function]
    processes: int  # processes that imported jax
    errors: list[str]
    truncated: bool


def collect(events_by_pid: dict[int, list[dict]]) -> Collected:
    functions: dict[tuple, Function] = {}
    errors: list[str] = []
    truncated = False
    processes = 0

    def function(event: dict) -> Function:
        path, line, name, ordinal = event["key"]
        key = (path, int(line), name, int(ordinal))
        found = functions.get(key)
        if found is None:
            found = functions[key] = Function(name, path, int(line), int(ordinal), bool(event.get("user")))
        return found

    for pid, events in sorted(events_by_pid.items()):
        seen_here: set[tuple] = set()
        processes += any(e.get("k") == "jax" for e in events)
        for event in events:
            kind = event.get("k")
            if kind == "error":
                errors.append(f"monitor ({event.get('where')}): {event.get('error')}")
                continue
            if kind == "truncated":
                truncated = True
                continue
            if kind not in ("miss", "trace", "lower", "compile") or "key" not in event:
                continue
            try:
                fn = function(event)
            except (TypeError, ValueError) as exc:
                errors.append(f"unreadable {kind} event: {exc}")
                continue
            fn.pids.add(pid)
            if kind == "miss":
                fn.misses += 1
                fn.traced_for.add(event.get("for") or "jit")
                fn.top_level |= bool(event.get("top"))
                if fn.key in seen_here:
                    fn.retraces.append(_miss(pid, event))
                seen_here.add(fn.key)
            elif kind == "trace":
                fn.trace_events += 1
                fn.trace_seconds += float(event.get("dur") or 0.0)
            elif kind == "lower":
                fn.lower_seconds += float(event.get("dur") or 0.0)
            else:
                fn.compiles += 1
                fn.compile_seconds += float(event.get("dur") or 0.0)
                fn.compiles_by_pid[pid] = fn.compiles_by_pid.get(pid, 0) + 1
    ordered = sorted(functions.values(), key=lambda f: (not f.user, f.path, f.line, f.name, f.ordinal))
    return Collected(ordered, processes, errors, truncated)


def _miss(pid: int, event: dict) -> Miss:
    site = event.get("site")
    where = Site(str(site[0]), int(site[1]), int(site[2]), str(site[3])) if site else None
    text = event.get("msg")
    if text:
        kind, reason = classify(text, event.get("params"))
    elif event.get("never_seen"):
        kind, reason = "redefined", "never seen function: a new function object for the same definition"
        text = ""
    else:
        kind, reason, text = "unrecorded", "JAX's explanation not kept (more than 20 for this function)", ""
    classes: dict[str, tuple[str, int, int] | None] = {}
    files: list[str] = []
    for name, spot in (event.get("classes") or {}).items():
        classes[name] = (str(spot[0]), int(spot[1]), int(spot[2])) if spot else None
        if spot:
            files.extend([str(spot[0]), *(spot[3] if len(spot) > 3 else [])])
    return Miss(pid, where, kind, reason, text, not event.get("top", True), classes, tuple(dict.fromkeys(files)))
