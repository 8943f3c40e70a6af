"""Expose a rule as a libcst codemod, for `python -m libcst.tool codemod <module>.<Command>`.

The command runs the same scan-and-fix loop as `jaxfix fix` for its one rule,
so both paths produce identical text.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping

import libcst as cst

from jaxfix.rulebase import Rule


def commands_for(*rules: type[Rule]) -> Callable[[str], type]:
    """A module `__getattr__` that makes `<Name>Command` for each `<Name>Rule` on first access.

    Lazy because `libcst.codemod` imports `libcst.matchers` (~0.4 s), which `jaxfix check`
    never needs; `python -m libcst.tool codemod module.XCommand` and pickling by reference
    both look the name up with `getattr`, and get the same class every time.
    """
    return commands_named(rules[0].__module__, {_default_name(rule): (rule,) for rule in rules})


def commands_named(module: str, commands: Mapping[str, tuple[type[Rule], ...]]) -> Callable[[str], type]:
    """A module `__getattr__` for `module` making each named command from its rules on first access
    (a family package keeps its old name, e.g. `jit_placement.JitPlacementCommand`, for all its rules)."""
    made: dict[str, type] = {}

    def __getattr__(name: str) -> type:
        if name not in commands:
            raise AttributeError(name)
        if name not in made:
            made[name] = command_for(*commands[name], name=name, module=module)
        return made[name]

    return __getattr__


def commands_in_modules(package: str, modules: Mapping[str, str]) -> Callable[[str], type]:
    """A package `__getattr__` serving, under the names they had before a family was split, the
    commands its rule modules make (`compile_cost.UnblockedTimingCommand` is the one of
    `compile_cost.unblocked_timing`): the same class, so it pickles by reference the same way."""

    def __getattr__(name: str) -> type:
        if name not in modules:
            raise AttributeError(name)
        return getattr(importlib.import_module(f"{package}.{modules[name]}"), name)

    return __getattr__


def _default_name(rule: type[Rule]) -> str:
    return rule.__name__.removesuffix("Rule") + "Command"


def command_for(*rules: type[Rule], name: str | None = None, module: str | None = None) -> type:
    """A libcst codemod command running `rules` (one rule, or a family's under its old name).

    The engine's fix loop is imported here, when a command is made, not with the module: rules
    sit below the engine, and only `python -m libcst.tool` asks for a command.
    """
    from libcst.codemod import CodemodContext, SkipFile, VisitorBasedCodemodCommand

    from jaxfix.engine.fixing import fix_until_stable, scan


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
            run = lambda text, tree=None: scan(text, path, [rule() for rule in rules], tree=tree)  # noqa: E731
            source = tree.code
            outcome = fix_until_stable(source, run(source), run, unsafe_fixes=self.unsafe_fixes)
            if outcome.error:
                raise SkipFile(outcome.error)
            if outcome.text == source:
                raise SkipFile("nothing to fix")
            return cst.parse_module(outcome.text)

    # Bound in the module that asked for it under `command_name`: the class must carry that name
    # so libcst.tool's worker processes can pickle it by reference.
    RuleCommand.__name__ = RuleCommand.__qualname__ = name or _default_name(rules[0])
    RuleCommand.__module__ = module or rules[0].__module__
    RuleCommand.__doc__ = "\n\n".join(rule.doc() for rule in rules)
    return RuleCommand
