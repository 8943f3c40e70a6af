"""The soundness property of `could_match` screens: a rule whose screen rejects a text finds
nothing in it when run anyway. Shared by the fixture test and the fuzz properties."""

from __future__ import annotations

import ast

from jaxfix.analysis.cstparse import parse_module
from jaxfix.engine import registry
from jaxfix.engine.config import Config
from jaxfix.rulebase import RuleContext


def screen_misses(source: str, path: str = "m.py") -> list[str]:
    """`CODE line:col` of every finding a rule reports although its screens (`passes_prefilter`,
    then `could_match`) reject the text."""
    tree = ast.parse(source)
    rejecting = [r() for r in registry.all_rules() if not r.sees_findings]
    rejecting = [r for r in rejecting if not (r.passes_prefilter(source) and r.could_match(tree))]
    if not rejecting:
        return []
    ctx = RuleContext(source, path, options=Config().options(), project=None, module=parse_module(source), tree=tree)
    misses = []
    for rule in rejecting:
        for finding in rule.check(ctx):
            misses.append(f"{finding.code} {finding.line}:{finding.column} ({rule.name})")
    return misses
