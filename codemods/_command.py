"""Expose a rule as a libcst codemod, for `python -m libcst.tool codemod <module>.<Command>`.

The command runs the same scan-and-fix loop as `jaxfix fix` for its rule (or a family's
rules), so both paths produce identical text.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import libcst as cst

from jaxfix.rulebase import Rule


def commands_for(*rules: type[Rule]) -> Callable[[str], type]:
    """A module `__getattr__` that makes `<Name>Command` for each `<Name>Rule` on first access.

    Lazy because `libcst.codemod` imports `libcst.matchers` (~0.4 s), which `jaxfix check`
    never needs; `python -m libcst.tool codemod module.XCommand` and pickling by reference
    both look the name up with `getattr`, and get the same class every time.
    """
    wanted = {rule.__name__.removesuffix("Rule") + "Command": rule for rule in rules}
    made: dict[str, type] = {}

    def __getattr__(name: str) -> type:
        if name not in wanted:
            raise AttributeError(name)
        if name not in made:
            made[name] = command_for(wanted[name])
        return made[name]

    return __getattr__


def command_for(*rules: type[Rule], name: str | None = None) -> type:
    """A codemod command running `rules` (one rule: `<Name>Command`; several, e.g. a family's:
    `name`, which must be the attribute the command is bound to in the first rule's package)."""
    from libcst.codemod import CodemodContext, SkipFile, VisitorBasedCodemodCommand

    from jaxfix.fixing import fix_until_stable, scan  # the engine sits above the rules: bound late

    rule = rules[0]

    class RuleCommand(VisitorBasedCodemodCommand):
        DESCRIPTION = "; ".join(f"{r.codes[0].code}: {r.codes[0].summary}" for r in rules)

        def __init__(self, context: CodemodContext, unsafe_fixes: bool = False) -> None:
            super().__init__(context)
            self.unsafe_fixes = unsafe_fixes

        @staticmethod
        def add_args(arg_parser: argparse.ArgumentParser) -> None:
            arg_parser.add_argument("--unsafe-fixes", action="store_true", help="also apply unsafe fixes")

        def transform_module_impl(self, tree: cst.Module) -> cst.Module:
            path = self.context.filename or "<module>"
            run = lambda text: scan(text, path, [r() for r in rules])  # noqa: E731
            source = tree.code
            outcome = fix_until_stable(source, run(source), run, unsafe_fixes=self.unsafe_fixes)
            if outcome.error:
                raise SkipFile(outcome.error)
            if outcome.text == source:
                raise SkipFile("nothing to fix")
            return cst.parse_module(outcome.text)

    # Bound in the rule's module as `<Name>Command` (for `<Name>Rule`), or in the family's package
    # as `name`: the class must carry that name so libcst.tool's worker processes can pickle it
    # by reference.
    RuleCommand.__name__ = RuleCommand.__qualname__ = name or rule.__name__.removesuffix("Rule") + "Command"
    RuleCommand.__module__ = rule.__module__ if name is None else rule.__module__.rpartition(".")[0]
    RuleCommand.__doc__ = "\n\n".join(r.doc() for r in rules)
    return RuleCommand
