"""Functions of a script that run once: a jitted wrapper built in one compiles once, not per call.

An example or training script (`if __name__ == "__main__":`) is a chain of set-up functions:
`main` calls `train_and_evaluate` once, which calls `initialize_model` once, which builds
`jax.jit(init)` and calls it. "A fresh wrapper compiles again on every call of the function"
(JAX202) needs a second call, and a script's call chain says there is none. Found on jaxopt's
`examples/deep_learning/distributed_flax_imagenet.py` and haiku's `examples/impala_lite.py`.

Outside a script only a chain from a function that runs once by convention counts
(`sites.runs_once`: `main`, flax's `train_and_evaluate`): a module-level call in a library runs
at import, but whoever imports a function may call it again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from jaxfix.analysis.walk import children

MODULE = "<module>"


@dataclass(frozen=True)
class _Reference:
    owner: str  # the module-level function whose own body holds it, MODULE, or "" (elsewhere)
    called: bool
    in_loop: bool


def functions_run_once(
    module: cst.Module, once_by_name=lambda name: name == "main", source: str = ""
) -> frozenset[str]:
    """Module-level functions referenced exactly once, by a call outside any loop, in the own body
    of a function that runs once (`once_by_name`: `main` by convention, or one found here), or,
    in a script, in the module's own statements. A function passed on (`app.run(main)`), stored,
    called twice or from a nested def or a class is not. `source`: the module's text, which
    says whether it is a notebook (`is_notebook_text`), a script too."""
    script = _is_script(module) or is_notebook_text(source)
    functions = {stmt.name.value for stmt in module.body if isinstance(stmt, cst.FunctionDef)}
    refs: dict[str, list[_Reference]] = {name: [] for name in functions}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            _collect(stmt.body, stmt.name.value, False, functions, refs)
            for part in (*stmt.decorators, stmt.params):
                _collect(part, MODULE, False, functions, refs)
        else:
            _collect(stmt, MODULE, False, functions, refs)
    once: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name in functions - once:
            found = refs[name]
            if len(found) != 1 or not found[0].called or found[0].in_loop:
                continue
            owner = found[0].owner
            if (owner == MODULE and script) or owner in once or (owner in functions and once_by_name(owner)):
                once.add(name)
                changed = True
    return frozenset(once)


_CELL_MARK = re.compile(r"^# ?%%", re.MULTILINE)
# jupytext's header, in any of its `.py` formats (the light format marks cells with `# +` or
# nothing at all): `# ---` / `# jupyter:` / `#   jupytext:` in the file's leading comments
_JUPYTEXT_HEADER = re.compile(r"^# jupyter:[ \t]*\r?\n#[ \t]+jupytext:", re.MULTILINE)


def is_notebook_text(source: str) -> bool:
    """A notebook, as jaxfix reads one (its code cells joined with `# %%` markers) or as jupytext
    writes one (`.py` percent format, or any format under jupytext's `# jupyter:` header,
    google/learned_optimization's docs/notebooks/*.py): its top level runs once, cell after cell,
    and every call of its functions is in it (google/evojax's tutorial notebooks call
    `render(...)` once)."""
    return bool(_CELL_MARK.search(source)) or bool(_JUPYTEXT_HEADER.search(source[:4000]))


def starts_cell(stmt: cst.CSTNode) -> bool:
    """`stmt` (a top-level statement of a notebook read as one module) is the first of its cell:
    a cell marker (`# %%`) is among the comment lines above it."""
    lines = getattr(stmt, "leading_lines", ())
    return any(line.comment is not None and _CELL_MARK.match(line.comment.value) for line in lines)


def _is_script(module: cst.Module) -> bool:
    for stmt in module.body:
        if isinstance(stmt, cst.If) and isinstance(stmt.test, cst.Comparison):
            left = stmt.test.left
            if isinstance(left, cst.Name) and left.value == "__name__":
                return True
    return False


_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})
_LOOPS = frozenset({cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})


def _collect(node: cst.CSTNode, owner: str, in_loop: bool, functions: set[str], refs: dict) -> None:
    """References to the module's functions under `node`; `owner` "" once inside a nested scope.
    Exact type tests and a stack: libcst's node classes are ABCs, whose `isinstance` is slow."""
    stack = [(node, owner, in_loop)]
    while stack:
        n, owner, in_loop = stack.pop()
        kind = type(n)
        if kind is cst.Call and type(n.func) is cst.Name and n.func.value in functions:
            refs[n.func.value].append(_Reference(owner, True, in_loop))
            stack.extend((arg, owner, in_loop) for arg in n.args)
            continue
        if kind is cst.Name:
            if n.value in functions:
                refs[n.value].append(_Reference(owner, False, in_loop))
            continue
        if kind is cst.Attribute:  # `obj.main` names an attribute, not the function
            stack.append((n.value, owner, in_loop))
            continue
        if kind in _SCOPES:
            owner = ""
        elif kind in _LOOPS:
            in_loop = True
        stack.extend((child, owner, in_loop) for child in children(n))
