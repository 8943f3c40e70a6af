"""Run a watched module's doctests and `__main__` blocks with the recorder on.

`python -m jaxfix.verify._recorder.run_main [--doctest Q1,Q2] [--no-main] FILE [ARGS...]`

Python runs `python train.py` as a module named `__main__`, which the recorder's import hook
never sees, so calls made by the script would be lost. This runner imports FILE under its own
import name instead (JAXFIX_RECORD's `module_name`; the recorder wraps its changed callables on
that import), runs the `>>>` examples of the docstrings of the named callables (labelled
"doctest"), then executes the bodies of FILE's top-level `if __name__ == "__main__":` blocks in
the module's namespace (labelled "__main__"), with `sys.argv = [FILE, *ARGS]`. The exit status is
1 when an example or the main block failed, else the main block's own.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import json
import os
import sys
import traceback


def _set_source(name: str) -> None:
    recorder = sys.modules.get("sitecustomize")
    if recorder is not None and hasattr(recorder, "set_source"):
        recorder.set_source(name)


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    test = node.test
    sides = [test.left, *test.comparators]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    strings = {s.value for s in sides if isinstance(s, ast.Constant)}
    return names == {"__name__"} and strings == {"__main__"} and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)


def main_blocks(source: str) -> list[ast.If]:
    """The top-level `if __name__ == "__main__":` statements of a module."""
    return [node for node in ast.parse(source).body if _is_main_guard(node)]


def _unwrap(value):
    return getattr(value, "__wrapped__", value)


def run_doctests(module, qualnames: list[str]) -> int:
    """Run the `>>>` examples of each callable's docstring; the number of failed examples."""
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(verbose=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    failed = 0
    for qualname in qualnames:
        owner = module
        try:
            for part in qualname.split("."):
                owner = owner.__dict__[part] if isinstance(owner, type) and part in owner.__dict__ else getattr(owner, part)
        except AttributeError:
            continue
        target = _unwrap(owner)
        target = getattr(target, "fget", None) or getattr(target, "func", None) or target
        doc = getattr(_unwrap(target), "__doc__", None)
        if not doc or ">>>" not in doc:
            continue
        test = parser.get_doctest(doc, dict(module.__dict__), f"{module.__name__}.{qualname}", module.__file__, 0)
        failed += runner.run(test, out=lambda text: sys.stderr.write(text)).failed
    return failed


def run_main_blocks(module, path: str, source: str) -> int:
    tree_flags = 0
    import __future__

    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                feature = getattr(__future__, alias.name, None)
                tree_flags |= getattr(feature, "compiler_flag", 0)
    for block in main_blocks(source):
        code = compile(ast.Module(body=block.body, type_ignores=[]), path, "exec", flags=tree_flags, dont_inherit=True)
        try:
            exec(code, module.__dict__)
        except SystemExit as exc:
            code_value = exc.code
            return code_value if isinstance(code_value, int) else (0 if code_value is None else 1)
    return 0


def main(argv: list[str]) -> int:
    doctest_names: list[str] = []
    run_main = True
    while argv and argv[0].startswith("--"):
        flag = argv.pop(0)
        if flag == "--doctest":
            doctest_names = [n for n in argv.pop(0).split(",") if n]
        elif flag == "--no-main":
            run_main = False
    path, args = os.path.abspath(argv[0]), argv[1:]
    config = json.loads(os.environ.get("JAXFIX_RECORD", "{}"))
    module_name = config.get("module_name")
    for folder in reversed(config.get("sys_path") or [os.path.dirname(path)]):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    sys.argv = [path, *args]
    if not module_name:
        sys.stderr.write("run_main: JAXFIX_RECORD names no module\n")
        return 2
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    status = 0
    try:
        module = importlib.import_module(module_name)
        if doctest_names:
            _set_source("doctest")
            status |= 1 if run_doctests(module, doctest_names) else 0
        if run_main:
            # zero configuration labels these calls "__main__"; a --record command keeps "recorded"
            _set_source("__main__" if config.get("source") in (None, "__main__") else config["source"])
            status = run_main_blocks(module, path, source) or status
    except Exception:  # noqa: BLE001 - the user's code failed: report like Python would
        traceback.print_exc()
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
