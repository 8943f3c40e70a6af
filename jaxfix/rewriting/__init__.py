"""Fix builders that rules of more than one family share (above `jaxfix.rulebase`, below `codemods`).

`functions.FunctionRewrite`: rewriting inside one traced function (free helper names, generated
code in the file's style, branch functions). `loops.LoopRewriter`: a Python `while`/`for` turned
into `lax.while_loop`/`lax.fori_loop` with its carried variables (JAX302, JAX303 and JAX502).
"""
