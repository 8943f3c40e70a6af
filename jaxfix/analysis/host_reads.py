"""Calls that read state of the host process rather than compute from their arguments: the clock
and the global random state. Under a trace such a call runs once, when the function is traced, and
its value is a constant of the compiled program (JAX405).

Plain data, by qualified name (`ImportMap.qualify`), for the rule and its stdlib screen:
- the clocks are `timers.CLOCKS`, the one place the timing rules (JAX501-JAX505) read them from;
- the host's random state: the functions of Python's `random` module and NumPy's legacy
  `numpy.random` functions that draw from the hidden global generator. What makes or seeds a
  generator (`random.Random`, `random.seed`, `numpy.random.default_rng`, `RandomState`,
  `Generator`, `SeedSequence`, `numpy.random.seed`) is left out: with an explicit seed it is
  deterministic, and a call that draws from a generator object is a method, not one of these.
"""

from __future__ import annotations

from jaxfix.analysis.timers import CLOCKS

# Python's `random`: the module functions bound to its hidden `Random()` instance
_PYTHON_RANDOM = frozenset(
    {
        "betavariate",
        "binomialvariate",
        "choice",
        "choices",
        "expovariate",
        "gammavariate",
        "gauss",
        "getrandbits",
        "lognormvariate",
        "normalvariate",
        "paretovariate",
        "randbytes",
        "randint",
        "random",
        "randrange",
        "sample",
        "shuffle",
        "triangular",
        "uniform",
        "vonmisesvariate",
        "weibullvariate",
    }
)
# NumPy's legacy module functions: methods of the global `RandomState` (numpy/random/mtrand.pyx)
_NUMPY_RANDOM = frozenset(
    {
        "beta",
        "binomial",
        "bytes",
        "chisquare",
        "choice",
        "dirichlet",
        "exponential",
        "f",
        "gamma",
        "geometric",
        "gumbel",
        "hypergeometric",
        "laplace",
        "logistic",
        "lognormal",
        "logseries",
        "multinomial",
        "multivariate_normal",
        "negative_binomial",
        "noncentral_chisquare",
        "noncentral_f",
        "normal",
        "pareto",
        "permutation",
        "poisson",
        "power",
        "rand",
        "randint",
        "randn",
        "random",
        "random_integers",
        "random_sample",
        "ranf",
        "rayleigh",
        "sample",
        "shuffle",
        "standard_cauchy",
        "standard_exponential",
        "standard_gamma",
        "standard_normal",
        "standard_t",
        "triangular",
        "uniform",
        "vonmises",
        "wald",
        "weibull",
        "zipf",
    }
)
HOST_RANDOM = frozenset({f"random.{name}" for name in _PYTHON_RANDOM} | {f"numpy.random.{name}" for name in _NUMPY_RANDOM})

# the last dotted part of every name above: the screen's cheap test before it qualifies a call
HOST_READ_IDENTS = frozenset(q.rsplit(".", 1)[-1] for q in CLOCKS | HOST_RANDOM)

CLOCK = "clock"
RANDOM = "random"


def host_read(qualified: str | None) -> str | None:
    """`CLOCK` for a clock, `RANDOM` for a draw from the host's global random state, else None."""
    if qualified in CLOCKS:
        return CLOCK
    if qualified in HOST_RANDOM:
        return RANDOM
    return None
