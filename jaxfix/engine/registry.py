"""Every rule jaxfix knows, discovered from the modules of the `codemods` packages.

Adding a rule is adding a module (`codemods/<family>/<rule_name>.py`); nothing here lists rules
by hand. Modules whose name starts with `_` are skipped; a family's shared machinery holds no
rule class, so importing it finds nothing.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

import codemods
from jaxfix.rulebase import Code, Rule


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for info in pkgutil.walk_packages(codemods.__path__, "codemods."):
        if info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
                and getattr(value, "codes", None)
            ):
                found.append(value)
    return tuple(sorted(found, key=lambda r: r.codes[0].code))


def all_codes() -> tuple[tuple[type[Rule], Code], ...]:
    return tuple((rule, code) for rule in all_rules() for code in rule.codes)


def find_code(code: str) -> tuple[type[Rule], Code] | None:
    for rule, info in all_codes():
        if info.code == code.upper():
            return rule, info
    return None


def rule_by_name(name: str) -> type[Rule] | None:
    return next((r for r in all_rules() if r.name == name), None)


def is_selected(code: str, select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    """The most specific matching prefix wins, as in Ruff (`ALL` matches everything)."""

    def best(prefixes: tuple[str, ...]) -> int:
        lengths = [0 if p.upper() == "ALL" else len(p) for p in prefixes if p.upper() == "ALL" or code.startswith(p.upper())]
        return max(lengths, default=-1)

    chosen, dropped = best(select), best(ignore)
    return chosen >= 0 and chosen > dropped


def known_prefix(prefix: str) -> bool:
    p = prefix.upper()
    return p == "ALL" or any(info.code.startswith(p) for _, info in all_codes())
