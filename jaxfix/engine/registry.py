"""Every rule jaxfix knows, discovered from the modules of the `codemods` packages.

Adding a rule is adding a module (`codemods/<family>/<rule_name>.py`); nothing here lists rules
by hand. Modules whose name starts with `_` are skipped; a family's shared machinery holds no
rule class, so importing it finds nothing.

What the command line and the config need to know of the rules (their codes, options and what
they read: `catalog`) does not need the rules themselves, which import libcst and the analyses:
a run whose results all come from the cache never imports them. The catalog is then read from
the cache folder, keyed by jaxfix's code (`keep_catalog_in`).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from jaxfix.model import Code, Option

if TYPE_CHECKING:
    from jaxfix.rulebase import Rule


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    import codemods
    from jaxfix.rulebase import Rule

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


@dataclass(frozen=True)
class RuleCard:
    """What the engine knows of a rule without importing it: the attributes of `Rule` that
    config, selection and the project index read (`table()` as on the rule)."""

    name: str
    codes: tuple[Code, ...]
    options: tuple[Option, ...]
    options_table: str | None
    uses_project: bool
    follows_calls: bool
    sees_findings: bool

    def table(self) -> str:
        return self.options_table or self.name

    @classmethod
    def of(cls, rule: type[Rule]) -> "RuleCard":
        return cls(
            rule.name, tuple(rule.codes), tuple(rule.options), rule.options_table, rule.uses_project,
            rule.follows_calls, rule.sees_findings,
        )


_CATALOG_FILE = "rules.pickle"
_catalog_folder: list[Path] = []


def keep_catalog_in(folder: str | Path) -> None:
    """Read the catalog from, and write it to, `folder` (the result cache's); call before `catalog`."""
    _catalog_folder[:] = [Path(folder)]


@functools.cache
def catalog() -> tuple[RuleCard, ...]:
    """A card for every rule (as `all_rules`), from the cache folder when it holds the catalog of
    this very code, else from the rules (then kept there)."""
    if not _catalog_folder:
        return tuple(RuleCard.of(rule) for rule in all_rules())
    from jaxfix.engine.cache import load_for_this_code, store_for_this_code

    path = _catalog_folder[0] / _CATALOG_FILE
    cards = load_for_this_code(path)
    if isinstance(cards, tuple) and cards and all(isinstance(c, RuleCard) for c in cards):
        return cards
    cards = tuple(RuleCard.of(rule) for rule in all_rules())
    store_for_this_code(path, cards)
    return cards


def all_codes() -> tuple[tuple[type[Rule], Code], ...]:
    return tuple((rule, code) for rule in all_rules() for code in rule.codes)


def find_code(code: str) -> tuple[type[Rule], Code] | None:
    for rule, info in all_codes():
        if info.code == code.upper():
            return rule, info
    return None


def rule_by_name(name: str) -> type[Rule] | None:
    return next((r for r in all_rules() if r.name == name), None)


@functools.lru_cache(maxsize=1024)
def is_selected(code: str, select: tuple[str, ...], ignore: tuple[str, ...]) -> bool:
    """The most specific matching prefix wins, as in Ruff (`ALL` matches everything). Kept per
    (code, select, ignore): every file of a run asks the same questions."""

    def best(prefixes: tuple[str, ...]) -> int:
        lengths = [0 if p.upper() == "ALL" else len(p) for p in prefixes if p.upper() == "ALL" or code.startswith(p.upper())]
        return max(lengths, default=-1)

    chosen, dropped = best(select), best(ignore)
    return chosen >= 0 and chosen > dropped


def known_prefix(prefix: str) -> bool:
    p = prefix.upper()
    return p == "ALL" or any(info.code.startswith(p) for card in catalog() for info in card.codes)
