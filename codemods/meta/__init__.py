"""Rules about jaxfix itself rather than about JAX code: JAX001 (`unused_noqa`, a `# noqa` code
that suppresses nothing)."""
