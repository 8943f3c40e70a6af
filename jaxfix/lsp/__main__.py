from jaxfix.lsp import serve

serve()
