"""The libcst command path JAX001 had before the rules were split into families
(`python -m libcst.tool codemod unused_noqa.UnusedNoqaCommand`); the rule is
`codemods/meta/unused_noqa.py`."""

from codemods._command import commands_in_modules

__getattr__ = commands_in_modules("codemods.meta", {"UnusedNoqaCommand": "unused_noqa"})
