"""Expose rules as libcst codemods, for `python -m libcst.tool codemod <module>.<Command>`.

A command runs the same scan-and-fix loop as `jaxfix fix` for its rule (or, for a family's
command, its rules together), so both paths produce identical text.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import libcst as cst

from jaxfix.rulebase import Rule


def commands_for(*rules: type[Rule], family: str | None = None) -> Callable[[str], type]:
    """A module `__getattr__` that makes `<Name>Command` for each `<Name>Rule` on first access;
    with `family`, instead one command of that name running all `rules` together (for a family
    package: its old command name, e.g. `pytree_cache.PytreeCacheCommand`).

    Lazy because `libcst.codemod` imports `libcst.matchers` (~0.4 s), which `jaxfix check`
    never needs; `python -m libcst.tool codemod module.XCommand` and pickling by reference
    both look the name up with `getattr`, and get the same class every time.
    """
    if family is None:
        wanted = {rule.__name__.removesuffix("Rule") + "Command": (rule,) for rule in rules}
    else:
        wanted = {family: rules}
    made: dict[str, type] = {}

    def __getattr__(name: str) -> type:
        if name not in wanted:
            raise AttributeError(name)
        if name not in made:
            made[name] = command_for(*wanted[name], name=name if name == family else None)
        return made[name]

    return __getattr__


def command_for(*rules: type[Rule], name: str | None = None) -> type:
    """The command for one rule (`<Name>Command`, in the rule's module) or, given `name`, for
    several rules of one family (in the family package, the rule modules' parent)."""
    from libcst.codemod import CodemodContext, SkipFile, VisitorBasedCodemodCommand

    from jaxfix.fixing import fix_until_stable, scan

    class RuleCommand(VisitorBasedCodemodCommand):
        DESCRIPTION = "; ".join(f"{rule.codes[0].code}: {rule.codes[0].summary}" for rule in rules)

        def __init__(self, context: CodemodContext, unsafe_fixes: bool = False) -> None:
            super().__init__(context)
            self.unsafe_fixes = unsafe_fixes

        @staticmethod
        def add_args(arg_parser: argparse.ArgumentParser) -> None:
            arg_parser.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes")

        def transform_module_impl(self, tree: cst.Module) -> cst.Module:
            path = self.context.filename or "<module>"
            run = lambda text: scan(text, path, [rule() for rule in rules])  # noqa: E731
            source = tree.code
            outcome = fix_until_stable(source, run(source), run, unsafe_fixes=self.unsafe_fixes)
            if outcome.error:
                raise SkipFile(outcome.error)
            if outcome.text == source:
                raise SkipFile("nothing to fix")
            return cst.parse_module(outcome.text)

    # Bound in the rule's module as `<Name>Command` (for `<Name>Rule`), or in the family package
    # under `name`: the class must carry that name so libcst.tool's worker processes can pickle it
    # by reference.
    first = rules[0]
    if name is None:
        RuleCommand.__name__ = RuleCommand.__qualname__ = first.__name__.removesuffix("Rule") + "Command"
        RuleCommand.__module__ = first.__module__
        RuleCommand.__doc__ = first.doc()
    else:
        RuleCommand.__name__ = RuleCommand.__qualname__ = name
        RuleCommand.__module__ = first.__module__.rpartition(".")[0]
        RuleCommand.__doc__ = "\n\n".join(rule.doc() for rule in rules)
    return RuleCommand
