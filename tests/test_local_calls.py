"""`local_calls.module_calls`: the module's calls of some names from one walk kept per file, the
same answer, in the same order, as `calls_named` over the module."""

from __future__ import annotations

import textwrap

import libcst as cst

from jaxfix.analysis.local_calls import calls_named, module_calls
from jaxfix.analysis.scopes import ScopeIndex

SOURCE = textwrap.dedent(
    """
    import jax

    def benchmark_throughput(env, n_envs_list=[1, 8, 32]):
        for n in n_envs_list:
            step = jax.jit(lambda s: env.step(s, n))
            step(env.reset())

    def main(env, runner):
        benchmark_throughput(env)
        runner.benchmark_throughput(env, [4])
        report(benchmark_throughput(env))
        self_check = report
        self_check(env)
    """
)


def test_module_calls_match_calls_named_in_source_order():
    module = cst.parse_module(SOURCE)
    idx = ScopeIndex(module)
    for names in ({"benchmark_throughput"}, {"report", "benchmark_throughput"}, {"step", "self_check"}, {"absent"}):
        for methods in (True, False):
            assert module_calls(idx, names, methods=methods) == calls_named(module, names, methods=methods)
    both = module_calls(idx, {"report", "benchmark_throughput"}, methods=False)
    assert [cst.Module([]).code_for_node(c.func) for c in both] == ["benchmark_throughput", "report", "benchmark_throughput"]
    # a second question is answered from the kept walk, and a new ScopeIndex walks its own module
    assert module_calls(idx, {"step"}) == calls_named(module, {"step"})
    other = cst.parse_module("step(1)\n")
    assert len(module_calls(ScopeIndex(other), {"step"})) == 1
