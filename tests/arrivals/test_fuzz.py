"""Fuzz tests of the arrival processes and trace statistics (engine.arrivals): the
contract of tests/fuzzing.py over every public name's declared domains (valid input: no
exception, no NaN, sorted times; one parameter out of its domain: ``ValueError`` naming
it); ``FUZZED`` maps each public name to the test that fuzzes it (checked by
tests/test_fuzz_contract.py).

Cost: a case is an object, a sample of up to 300 times, a trace of up to 2,000 (~2-5
ms; a fit: a closed form or up to 18 least-squares runs, ~1-400 ms; a thinned sample
draws up to 300/p parent times, p ≥ 1e-3), so each test draws
fewer than 2,000 cases (``fuzz``) to keep the folder within ~40 s on the shared 2-core
machine; ``FUZZ_FULL=1`` restores 2,000.
"""
from hypothesis import assume

from engine.arrivals import (fit as mmpp_fit, mmpp, processes, replay, stats as arrival_stats,
                             thinning)
from engine.core.domains import (ARRIVAL_RATE, ARRIVAL_SCV, COUNT_MAX, COUNT_TIME,
                                 COUNT_WINDOW, N_ARRIVALS, PHASE_RATE, SWITCH_RATE)
from tests.fuzzing import *  # noqa: F401,F403 (settings, checks, engine modules, domains)

SEEDS = st.integers(0, 2 ** 32 - 1)
COUNTS = valid(N_ARRIVALS, high=300)
BAD_TRACES = st.sampled_from([[1.0], [2.0, 1.0], [1.0, math.nan], [0.0, math.inf],
                              [3.0, 3.0], [[1.0, 2.0]], "times", [], None])


def check_times(t, n):
    """n sorted float64 times, no NaN."""
    assert isinstance(t, np.ndarray) and t.dtype == np.float64 and t.shape == (n,)
    assert_no_nan(t)
    assert np.all(np.diff(t) >= 0) and (n == 0 or t[0] >= 0)


@st.composite
def traces(draw):
    """Sorted arrival times with a positive span: drawn numbers (ties included), or a
    sample of a Poisson, bursty renewal or MMPP-2 process, at scales 1e-6 to 1e6."""
    kind = draw(st.sampled_from(["numbers", "poisson", "renewal", "mmpp"]))
    if kind == "numbers":
        values = draw(st.lists(st.floats(0.0, 1e4), min_size=2, max_size=80))
        base = draw(st.sampled_from([0.0, 1.0, 1e5]))
        t = np.sort(np.array(values + [values[0] + 1.0])) + base
    else:
        rng = np.random.default_rng(draw(SEEDS))
        n = draw(st.integers(2, 2000))
        if kind == "poisson":
            process = processes.Poisson(1.0)
        elif kind == "renewal":
            process = processes.Renewal(1.0, draw(st.floats(0.0, 200.0)))
        else:
            process = mmpp.MMPP2(draw(st.floats(0.1, 20.0)), draw(st.floats(0.0, 2.0)),
                                 draw(st.floats(1e-3, 1.0)), draw(st.floats(1e-3, 1.0)))
        t = process.sample(n, rng)
    scale = draw(st.sampled_from([1e-6, 1.0, 1e6]))
    t = t * scale
    assume(np.ptp(t) > 0)
    return t


# ============================================================ Poisson, Renewal

@fuzz(1000)
@given(valid(ARRIVAL_RATE), valid(ARRIVAL_SCV), COUNTS, SEEDS, st.data())
def test_renewal_processes(rate, scv, n, seed, data):
    """Poisson and Renewal: ``rate`` and ``scv`` as given, n sorted times, no NaN."""
    for p in (processes.Poisson(rate), processes.Renewal(rate, scv)):
        assert p.rate == rate and isinstance(p.label, str) and p.label
        t = p.sample(n, np.random.default_rng(seed))
        check_times(t, n)
        raises_naming("n", p.sample, data.draw(invalid(N_ARRIVALS), label="bad n"),
                      np.random.default_rng(seed))
        raises_naming("rng", p.sample, n, seed)
    assert processes.Renewal(rate, scv).scv == scv and processes.Poisson(rate).scv == 1
    assert np.all(processes.Poisson(rate).idc([1.0, 2.0]) == 1)
    tally(processes.Poisson)
    tally(processes.Renewal)
    params, bad = corrupt(data, {"rate": rate, "scv": scv},
                          {"rate": ARRIVAL_RATE, "scv": ARRIVAL_SCV})
    raises_naming(bad, processes.Renewal, **params)
    if bad == "rate":
        raises_naming("rate", processes.Poisson, params["rate"])


# ============================================================ MMPP2

MMPP_DOMAINS = {"rate_1": PHASE_RATE, "rate_2": PHASE_RATE, "switch_12": SWITCH_RATE,
                "switch_21": SWITCH_RATE}


@fuzz(600)
@given(valid(PHASE_RATE), valid(PHASE_RATE), valid(SWITCH_RATE), valid(SWITCH_RATE),
       sweep(valid(COUNT_WINDOW, high=1e6)), valid(COUNT_TIME, high=1e3),
       valid(COUNT_MAX, high=40), COUNTS, SEEDS, st.data())
def test_mmpp2(rate_1, rate_2, switch_12, switch_21, windows, t, n_max, n, seed, data):
    """MMPP2: exact moments with 1 ≤ SCV ≤ IDC(∞), 1 ≤ IDC(w) ≤ IDC(∞), Var N(t) ≥ 0,
    counting probabilities in [0, 1] summing to at most 1, n sorted times; both rates 0
    is a ValueError naming rate_1."""
    params = dict(rate_1=rate_1, rate_2=rate_2, switch_12=switch_12, switch_21=switch_21)
    if rate_1 == 0 and rate_2 == 0:
        raises_naming("rate_1", mmpp.MMPP2, **params)
        return
    p = mmpp.MMPP2(**params)
    idc = p.idc(windows)
    table = p.counting_probabilities(t, n_max)
    values = [p.rate, p.scv, p.idc_limit, idc, p.count_variance(t), table, p.D0, p.D1,
              p.stationary_phase, p.arrival_phase]
    assert_no_nan(values)
    assert 0 < p.rate < math.inf and 1 - 1e-12 <= p.scv <= p.idc_limit * (1 + 1e-12)
    assert np.all((idc >= 1 - 1e-12) & (idc <= p.idc_limit * (1 + 1e-12)))
    assert p.count_variance(t) >= 0 and table.shape == (n_max + 1, 2, 2)
    assert np.all((table >= 0) & (table <= 1)) and np.all(table.sum(axis=(0, 2)) <= 1 + 1e-9)
    check_times(p.sample(n, np.random.default_rng(seed)), n)
    tally(mmpp.MMPP2)
    bad_params, bad = corrupt(data, params, MMPP_DOMAINS)
    raises_naming(bad, mmpp.MMPP2, **bad_params)
    raises_naming("window", p.idc, data.draw(invalid(COUNT_WINDOW), label="bad window"))
    raises_naming("t", p.count_variance, data.draw(invalid(COUNT_TIME), label="bad t"))
    raises_naming("n_max", p.counting_probabilities, t,
                  data.draw(invalid(COUNT_MAX), label="bad n_max"))
    raises_naming("n", p.sample, data.draw(invalid(N_ARRIVALS), label="bad n"),
                  np.random.default_rng(seed))


# ============================================================ Replay

@fuzz(600)
@given(traces(), valid(ARRIVAL_RATE), COUNTS, BAD_TRACES, st.data())
def test_replay(times, rate, n, bad_trace, data):
    """Replay: rate (n − 1)/span, scaled(rate) at that rate (or a ValueError naming rate
    where the scaled times leave the floats), a deterministic sample of n sorted times."""
    r = replay.Replay(times)
    assert_no_nan([r.rate, r.scv, r.span])
    assert close(r.rate, (times.size - 1) / (times[-1] - times[0]), 1e-12)
    first = r.sample(n)
    check_times(first, n)
    assert np.array_equal(first, r.sample(n, np.random.default_rng(0)))
    try:
        s = r.scaled(rate)
    except ValueError as err:
        assert "rate" in str(err)
    else:
        assert close(s.rate, rate, 1e-9) and s.scv >= 0
    tally(replay.Replay)
    raises_naming("arrival_times", replay.Replay, bad_trace)
    raises_naming("arrival_times", replay.Replay, [-1.0, 2.0])
    raises_naming("rate", r.scaled, data.draw(invalid(ARRIVAL_RATE), label="bad rate"))
    raises_naming("n", r.sample, data.draw(invalid(N_ARRIVALS), label="bad n"))


# ============================================================ describe, rate_over_time

@fuzz(600)
@given(traces(), st.lists(st.floats(1e-4, 0.45), min_size=1, max_size=5),
       st.floats(1e-4, 0.999), BAD_TRACES, st.data())
def test_describe(times, fractions, fraction, bad_trace, data):
    """describe: IDC ≥ 0 and peak-to-mean ≥ 1 per window, no NaN, the default windows
    too; rate_over_time: non-negative rates over whole bins; bad windows, window and
    traces raise naming them."""
    span = times[-1] - times[0]
    for windows in (None, span * np.array(fractions)):
        s = arrival_stats.describe(times, windows=windows)
        assert_no_nan(s)
        assert s.n == times.size and s.mean_rate > 0 and s.scv >= 0
        assert np.all(s.idc >= 0) and np.all(s.peak_to_mean >= 1 - 1e-12)
    tally(arrival_stats.describe)
    for window in (None, span * fraction):
        r = arrival_stats.rate_over_time(times, window)
        assert_no_nan(r)
        assert r.edges.size == r.rate.size + 1 and np.all(r.rate >= 0)
    tally(arrival_stats.rate_over_time)
    bad = data.draw(st.one_of(invalid(COUNT_WINDOW), st.just(0.6 * span)), label="bad w")
    raises_naming("windows", arrival_stats.describe, times, [bad])
    raises_naming("window", arrival_stats.rate_over_time, times,
                  bad if bad != 0.6 * span else 1.5 * span)
    raises_naming("arrival_times", arrival_stats.describe, bad_trace)
    raises_naming("arrival_times", arrival_stats.rate_over_time, bad_trace)


# ============================================================ fit_mmpp2

@fuzz(100)
@given(traces(), st.one_of(st.none(), st.floats(0.01, 0.45)), BAD_TRACES, st.data())
def test_fit_mmpp2(times, fraction, bad_trace, data):
    """fit_mmpp2_report: a valid MMPP2 at the trace's mean rate, targets and achieved
    moments without NaN, notes in words; fit_mmpp2 returns the same process."""
    window = None if fraction is None else fraction * (times[-1] - times[0])
    report = mmpp_fit.fit_mmpp2_report(times, window)
    assert_no_nan([report, report.rate_error, report.scv_error, report.idc_error])
    assert abs(report.rate_error) < 1e-9 and report.notes
    assert report.windows.size == report.target_idc.size == report.achieved_idc.size
    assert mmpp_fit.fit_mmpp2(times, window) == report.process
    tally(mmpp_fit.fit_mmpp2_report)
    tally(mmpp_fit.fit_mmpp2)
    raises_naming("window", mmpp_fit.fit_mmpp2, times,
                  data.draw(invalid(COUNT_WINDOW), label="bad window"))
    raises_naming("arrival_times", mmpp_fit.fit_mmpp2_report, bad_trace)


# ============================================================ thinned, Thinned

FRACTIONS = st.one_of(st.floats(1e-3, 1.0), st.sampled_from([1.0, 0.5, 1e-3]))
BAD_FRACTIONS = st.sampled_from([0.0, -0.5, -1.0, 1.0 + 1e-9, 2.0, math.inf, -math.inf,
                                 math.nan, "half", True, False, None, [0.5]])
NOT_PROCESSES = st.sampled_from([None, 3.0, "poisson", [1.0, 2.0], {"rate": 1.0},
                                 np.array([0.0, 1.0])])


@fuzz(1000)
@given(valid(ARRIVAL_RATE), valid(ARRIVAL_SCV), valid(PHASE_RATE), valid(PHASE_RATE),
       valid(SWITCH_RATE), valid(SWITCH_RATE), traces(), FRACTIONS, valid(ARRIVAL_RATE),
       COUNTS, SEEDS, BAD_FRACTIONS, NOT_PROCESSES)
def test_thinning(rate, scv, rate_1, rate_2, switch_12, switch_21, times, fraction, scale,
                  n, seed, bad_fraction, not_process):
    """thinned: Poisson → Poisson(pλ) and MMPP2 → both phase rates × p, same switching
    (exact closed forms; a rate that underflows to 0 is the documented ValueError naming
    it); a Renewal or a Replay → ``Thinned`` with rate pλ and gap SCV p·c² + 1 − p, n
    sorted finite times; a bad ``fraction`` or a non-process is a ValueError naming it."""
    p = fraction
    try:
        thin = thinning.thinned(processes.Poisson(rate), p)
    except ValueError as err:                   # p·λ below the smallest float
        assert rate * p == 0 and "rate" in str(err)
    else:
        assert isinstance(thin, processes.Poisson) and thin.rate == rate * p
    phases = dict(rate_1=rate_1, rate_2=rate_2, switch_12=switch_12, switch_21=switch_21)
    if rate_1 > 0 or rate_2 > 0:
        m = mmpp.MMPP2(**phases)
        try:
            thin = thinning.thinned(m, p)
        except ValueError as err:               # both p·rates below the smallest float
            assert rate_1 * p == 0 and rate_2 * p == 0 and "rate_1" in str(err)
        else:
            assert isinstance(thin, mmpp.MMPP2)
            assert (thin.rate_1, thin.rate_2) == (rate_1 * p, rate_2 * p)
            assert (thin.switch_12, thin.switch_21) == (switch_12, switch_21)
            assert close(thin.rate, m.rate * p, 1e-9)
    rng = np.random.default_rng(seed)
    for parent in (processes.Renewal(scale, scv), replay.Replay(times)):
        thin = thinning.thinned(parent, p)
        assert isinstance(thin, thinning.Thinned) and thin == thinning.Thinned(parent, p)
        assert thin.rate == parent.rate * p and thin.fraction == p
        assert close(thin.scv, p * parent.scv + 1.0 - p, 1e-12)
        assert isinstance(thin.label, str) and parent.label in thin.label
        t = thin.sample(n, rng)
        check_times(t, n)
        assert np.all(np.isfinite(t))
    tally(thinning.thinned, 3)
    tally(thinning.Thinned, 2)
    raises_naming("fraction", thinning.thinned, processes.Poisson(rate), bad_fraction)
    raises_naming("fraction", thinning.thinned, processes.Renewal(scale, scv), bad_fraction)
    raises_naming("fraction", thinning.Thinned, processes.Poisson(rate), bad_fraction)
    raises_naming("process", thinning.thinned, not_process, p)
    raises_naming("process", thinning.Thinned, not_process, p)


def test_thinned_sample_arguments():
    """Thinned.sample(n, rng) checks its arguments like Poisson.sample: a non-whole,
    NaN, infinite or non-number n and a non-Generator rng are ValueErrors naming them."""
    thin = thinning.Thinned(processes.Renewal(2.0, 4.0), 0.5)
    rng = np.random.default_rng(0)
    for bad_n in (2.5, math.nan, math.inf, "a", None):
        raises_naming("n", thin.sample, bad_n, rng)
    for bad_rng in (0, None, "x"):
        raises_naming("rng", thin.sample, 3, bad_rng)


FUZZED = {
    processes: {"Poisson": test_renewal_processes, "Renewal": test_renewal_processes},
    mmpp: {"MMPP2": test_mmpp2},
    replay: {"Replay": test_replay},
    arrival_stats: {"describe": test_describe, "rate_over_time": test_describe,
                    "ArrivalStats": (test_describe, "describe"),
                    "RateOverTime": (test_describe, "rate_over_time")},
    mmpp_fit: {"fit_mmpp2": test_fit_mmpp2, "fit_mmpp2_report": test_fit_mmpp2,
          "Mmpp2Fit": (test_fit_mmpp2, "fit_mmpp2_report")},
    thinning: {"thinned": test_thinning, "Thinned": test_thinning},
}
