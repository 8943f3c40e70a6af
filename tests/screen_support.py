"""The soundness property of `could_match` screens: a rule whose screen rejects a text finds
nothing in it when run anyway. Shared by the fixture test and the fuzz properties."""

from __future__ import annotations

import ast

from jaxfix.analysis.cstparse import parse_module
from jaxfix.engine import registry
from jaxfix.engine.config import Config
from jaxfix.engine.fixing import screens_admit
from jaxfix.rulebase import RuleContext


def screen_misses(source: str, path: str = "m.py", project=None) -> list[str]:
    """`CODE line:col` of every finding a rule reports although its screens (`passes_prefilter`,
    `could_match`, then `could_match_in`, asked before the module is parsed, as the engine does:
    `fixing.screens_admit`) reject the text."""
    tree = ast.parse(source)
    ctx = RuleContext(source, path, options=Config().options(), project=project, tree=tree)
    rejecting = [r() for r in registry.all_rules() if not r.sees_findings]
    rejecting = [r for r in rejecting if not screens_admit(r, ctx)]
    if not rejecting:
        return []
    ctx.set_module(parse_module(source))
    misses = []
    for rule in rejecting:
        for finding in rule.check(ctx):
            misses.append(f"{finding.code} {finding.line}:{finding.column} ({rule.name})")
    return misses
