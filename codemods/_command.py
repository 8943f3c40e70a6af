"""Expose a rule as a libcst codemod, for `python -m libcst.tool codemod <module>.<Command>`.

The command runs the same scan-and-fix loop as `jaxfix fix` for its rule (or for all the rules
of a family, under the family's old command name), so both paths produce identical text.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import libcst as cst

from jaxfix.rulebase import Rule


def commands_for(*rules: type[Rule], family: str | None = None) -> Callable[[str], type]:
    """A module `__getattr__` that makes `<Name>Command` for each `<Name>Rule` on first access,
    or, given `family`, the one command of that name that runs all `rules` (bound in the
    family's package, the parent of the rules' modules).

    Lazy because `libcst.codemod` imports `libcst.matchers` (~0.4 s), which `jaxfix check`
    never needs; `python -m libcst.tool codemod module.XCommand` and pickling by reference
    both look the name up with `getattr`, and get the same class every time.
    """
    if family is not None:
        wanted = {family: rules}
    else:
        wanted = {rule.__name__.removesuffix("Rule") + "Command": (rule,) for rule in rules}
    made: dict[str, type] = {}

    def __getattr__(name: str) -> type:
        if name not in wanted:
            raise AttributeError(name)
        if name not in made:
            made[name] = command_for(*wanted[name], name=name if family is not None else None)
        return made[name]

    return __getattr__


def command_for(*rules: type[Rule], name: str | None = None) -> type:
    """A codemod command running `rules`: named `<Name>Command` in the module of its one
    `<Name>Rule`, or `name` in the package that holds the modules of several."""
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

    # Bound in the rule's module as `<Name>Command` (for `<Name>Rule`), or in the family's package
    # as `name`: the class must carry that name so libcst.tool's worker processes can pickle it by
    # reference.
    if name is None:
        (rule,) = rules
        name, module, doc = rule.__name__.removesuffix("Rule") + "Command", rule.__module__, rule.doc()
    else:
        module = rules[0].__module__.rpartition(".")[0]
        doc = f"Runs {', '.join(rule.codes[0].code for rule in rules)}, the rules of `{module}`."
    RuleCommand.__name__ = RuleCommand.__qualname__ = name
    RuleCommand.__module__ = module
    RuleCommand.__doc__ = doc
    return RuleCommand
