"""``Choice``: a parameter drawn from a fixed set of words, checked like a ``Domain``
(the value back, or ``ValueError`` naming the parameter and listing the words), and the
engine's word parameters routed through it."""
import numpy as np
import pytest

from engine import batching, sla
from engine.core import domains as dom, jit, service_laws
from engine.core.domains import Choice
from engine.pipeline.checks import blocking_rule

BLOCKING = Choice("blocking", ("before", "after"))


def test_a_listed_value_comes_back_unchanged():
    assert BLOCKING.check("before") == "before"
    assert BLOCKING.check("after", "rule") == "after"
    assert "after" in BLOCKING and "later" not in BLOCKING


def test_the_message_names_the_parameter_and_every_word():
    with pytest.raises(ValueError) as err:
        BLOCKING.check("later")
    assert str(err.value) == "blocking must be one of 'before', 'after', got 'later'"
    with pytest.raises(ValueError) as err:
        BLOCKING.check("later", "sim.blocking")
    assert str(err.value).startswith("sim.blocking must be one of")


@pytest.mark.parametrize("value", [None, 1, 1.5, ["before"], ("before",), b"before",
                                   np.array(["before"]), np.array("before"), {"before": 1}])
def test_other_types_are_not_words(value):
    with pytest.raises(ValueError, match="blocking must be one of"):
        BLOCKING.check(value)


def test_numbers_match_by_value_and_print_as_numbers():
    q = Choice("percentile", (50.0, 90.0, 95.0, 99.0))
    assert q.check(99) == 99 and q.check(np.float64(95.0)) == 95.0
    assert q.describe() == "one of 50, 90, 95, 99"
    for bad in ("99", 97, float("nan"), True):
        with pytest.raises(ValueError, match="percentile must be one of 50, 90, 95, 99"):
            q.check(bad)


def test_none_may_be_one_of_the_values():
    backend = Choice("backend", (None, "numba", "numpy"))
    assert backend.check(None) is None
    assert backend.describe() == "one of None, 'numba', 'numpy'"


@pytest.mark.parametrize("choice, call", [
    (dom.PIPE_BLOCKING, blocking_rule),
    (dom.LOAD_UNIT, lambda v: batching.rate_from_load(0.5, 1.0, v)),
    (dom.DISPATCH_POLICY, lambda v: sla.simulate_dispatch(v, 10.0, 0.05, 2, n_requests=100)),
    (dom.SERVICE_LAW, lambda v: service_laws.service_law(v, 1.0)),
    (dom.JIT_BACKEND, lambda v: jit.choose(v, 1, 2)),
])
def test_engine_word_parameters_answer_through_their_choice(choice, call):
    """Each routed check: an unlisted word gets the Choice's message (the parameter
    named, the words listed)."""
    with pytest.raises(ValueError) as err:
        call("no-such-word")
    assert str(err.value) == f"{choice.name} must be {choice.describe()}, got 'no-such-word'"


def test_the_engine_tuples_are_the_declared_words():
    """The engine's public word tuples are the declarations' (one list of each)."""
    from engine import llm_batching, llm_serving, pipeline
    from engine.measured import online
    from engine.planner import spec
    assert pipeline.BLOCKING == ("before", "after") == dom.PIPE_BLOCKING.values
    assert pipeline.METHODS == ("auto", "full", "reference") == dom.PIPE_METHOD.values
    assert pipeline.LOAD_MODES == ("frac", "rate") == dom.PIPE_LOAD_MODE.values
    assert batching.LOAD_UNITS == ("rho", "per_s") == dom.LOAD_UNIT.values
    assert sla.POLICIES == ("random_retry", "jsq", "central_queue")
    assert service_laws.SERVICE_LAWS == ("exponential", "lognormal", "deterministic")
    assert llm_serving.DISPATCH == ("random", "round_robin", "least_outstanding")
    assert llm_batching.STRATEGIES == ("dynamic", "fixed", "elastic", "continuous")
    assert online.TERMS == ("separated", "whole_table")
    assert jit.BACKENDS == (None, "numba", "numpy")
    assert spec.ARRIVAL_KINDS == ("poisson", "bursty", "mmpp2", "replay")
