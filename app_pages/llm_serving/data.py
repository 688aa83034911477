"""Memoised engine calls of the LLM serving page (hashable arguments only).

A ``Scenario`` (``inputs.Scenario``: step cost, scheduler, workload, arrivals) is the
key.  Simulations are small (a few thousand requests, well under a second each; the
compiled simulator is cached on disk) and each is memoised on its own, so a slider move
or a new latency target reruns only what changed.  The load sweep runs its points on
``ui.budget.WORKERS`` threads (the compiled loop releases the GIL), each holding a slot.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
import numpy as np

from engine import llm_serving as ls
from ui.budget import WORKERS, heavy
from ui.memo import memo

CACHE_SIZE = 64
SEED = 2024                      # one seed for every load: common random numbers
SWEEP = (0.2, 0.4, 0.6, 0.75, 0.85, 0.95)        # simulated loads, × capacity
N_SWEEP = 3000                   # requests per simulated load (10 % warm-up left out)
N_AT = 4000                      # requests of the run at the what-if load
TIMELINE_STEPS = 20_000          # steps of that run kept for the timeline
BISECT_STEPS = 4                 # simulations refining the largest load meeting the target
N_APPROX = 80                    # points of the approximation's curve
TOP = 1.2                        # the load axis and slider end, × capacity
PERCENTILES = (50, 90, 99)
_TRACE_STREAM = 7                # seed stream of the draw of whole requests from a trace


@memo(4)
def presets() -> dict:
    return ls.serving_presets()


@memo(CACHE_SIZE)
def capacity(s) -> ls.CapacityLimit:
    """The most the server carries (requests/s) and which limit binds."""
    inp, out = s.workload.tokens()
    return ls.capacity_limit(s.cost, s.scheduler, inp, out)


@memo(256)
def axis_top(cap: float) -> float:
    """The end of the load axis: ``TOP`` × capacity, rounded up to 2 significant digits."""
    return ls.load_axis_top_per_s(cap, TOP)


@memo(256)
def slider_step(top: float) -> float:
    """A round step giving about 100-1000 positions up to ``top``."""
    return ls.rate_step_per_s(top)


@memo(CACHE_SIZE)
def _trace_draw(trace, n: int) -> tuple:
    """``n`` whole requests drawn from a trace (prompt and reply together)."""
    return trace.draw(n, [SEED, _TRACE_STREAM])


def _tokens(s, n: int) -> tuple:
    if s.workload.trace is not None:
        return _trace_draw(s.workload.trace, n)
    return s.workload.tokens()


def _run(s, rate: float, n: int, timeline_steps: int = 0) -> ls.ServingResult:
    inp, out = _tokens(s, n)
    load = ({"rate_per_s": rate} if s.arrivals.is_poisson
            else {"arrivals": s.arrivals.process(rate)})
    prefix = ({"prefix_stream": 0, "prefix_tokens": s.shared_prefix} if s.shared_prefix
              else {})
    return ls.simulate_serving(s.cost, s.scheduler, input_tokens=inp, output_tokens=out,
                               n_requests=n, seed=SEED, timeline_steps=timeline_steps,
                               **load, **prefix)


@memo(512)
@heavy
def sim_point(s, rate: float, n: int = N_SWEEP) -> ls.ServingResult:
    """One simulated run of ``n`` requests at ``rate`` (requests/s)."""
    return _run(s, rate, n)


@memo(CACHE_SIZE)
@heavy
def at_load(s, rate: float) -> ls.ServingResult:
    """The run at the what-if load, its first ``TIMELINE_STEPS`` steps kept."""
    return _run(s, rate, N_AT, TIMELINE_STEPS)


@dataclass(frozen=True, eq=False)
class Sweep:
    """Simulated runs over the load axis (``SWEEP`` × capacity)."""

    rate: np.ndarray
    results: tuple               # ServingResult per load

    def stat(self, metric: str, what) -> np.ndarray:
        """``what`` ("mean", "ci95" or a percentile 50/90/95/99) of ``metric`` ("ttft_ms",
        "tpot_ms", "e2e_ms") at each load."""
        pick = (lambda x: getattr(x, what)) if isinstance(what, str) else (
            lambda x: x.percentile(what))
        return np.array([pick(getattr(r, metric)) for r in self.results])


@memo(CACHE_SIZE)
def sweep(s, bar=None) -> Sweep:
    """The simulated loads of the charts (memoised per point), ``WORKERS`` at a time."""
    rates = [float(capacity(s).rate_per_s * f) for f in SWEEP]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = [pool.submit(sim_point, s, r) for r in rates]
        for i, f in enumerate(futures):
            f.result()                                   # re-raises a ValueError here
            if bar is not None:
                bar.progress((i + 1) / len(futures), "Simulating the server over load…")
    return Sweep(np.array(rates), tuple(f.result() for f in futures))


def meets(result: ls.ServingResult, slo) -> bool:
    """Whether ``slo.pct`` % of the run's requests meet both limits."""
    return ls.meets_target(result, ttft_ms=slo.ttft_ms, tpot_ms=slo.tpot_ms,
                           percentile=slo.pct)


@memo(CACHE_SIZE)
def slo_rate(s, slo, bar=None) -> ls.SloRate:
    """The largest load meeting the target (``engine.llm_serving.largest_rate_meeting``
    over the memoised runs of the sweep, then ``BISECT_STEPS`` more)."""
    sw = sweep(s, bar)
    if bar is not None:
        bar.progress(1.0, "Searching the largest load meeting the target…")
    return ls.largest_rate_meeting(
        lambda rate: sim_point(s, rate), capacity_per_s=capacity(s).rate_per_s,
        ttft_ms=slo.ttft_ms, tpot_ms=slo.tpot_ms, percentile=slo.pct, shares=SWEEP,
        refine=BISECT_STEPS, results=sw.results)


@memo(CACHE_SIZE)
def approximation(s) -> ls.ServingApproximation:
    """Mean TTFT, TPOT and e2e without simulation over the load axis (Poisson)."""
    inp, out = s.workload.tokens()
    top = axis_top(capacity(s).rate_per_s)
    rates = np.linspace(top / N_APPROX, top, N_APPROX)
    return ls.approximate_serving(s.cost, s.scheduler, input_tokens=inp, output_tokens=out,
                                  rate_per_s=rates)


@memo(256)
def approximation_at(s, rate: float) -> ls.ServingApproximation:
    inp, out = s.workload.tokens()
    return ls.approximate_serving(s.cost, s.scheduler, input_tokens=inp, output_tokens=out,
                                  rate_per_s=rate)
