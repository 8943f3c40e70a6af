"""One module per anti-pattern family: a rule (metadata + check) and its libcst codemod command."""
