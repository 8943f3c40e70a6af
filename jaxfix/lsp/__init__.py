"""`jaxfix lsp`: diagnostics, quick fixes, `# noqa` and fix-all in any LSP editor.

The server runs the same `jaxfix.engine.analyze` as the CLI on the editor's
in-memory text. Modules: `server` (wiring), `positions` (code points <-> UTF-16
or UTF-8 positions), `diagnostics`, `actions` (quick fix, noqa, fix-all),
`settings` (`[tool.jaxfix]`, reloaded on change) and `verification`.
"""

from __future__ import annotations


def serve() -> None:
    """Run the language server over stdio until the client says exit."""
    from jaxfix.engine.runner import tune_gc
    from jaxfix.lsp.server import create_server

    tune_gc()
    create_server().start_io()
