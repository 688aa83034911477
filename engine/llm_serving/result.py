"""Records of a served run and the one function that summarises them.

Simulated runs and measured ones (``engine.measured.read_request_records``) are
summarised by the same ``summarize``: TTFT, TPOT (vLLM's (e2e − TTFT)/(output − 1),
replies of 2 tokens or more), e2e and queueing, each with mean, p50/p90/p95/p99 and a
95 % confidence half-width of the mean (batch means over consecutive requests).
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math

import numpy as np
import pandas as pd

from ..core.records import QUANTILES, LatencySummary, mean_ci95, summary_of

__all__ = ["LatencySummary", "ServingRecords", "ServingResult", "Timeline", "summarize",
           "summary_of"]

def _frozen(a, dtype=float) -> np.ndarray:
    a = np.array(a, dtype=dtype)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class ServingRecords:
    """Per request, in send order: send time, first token and finish (s), prompt and
    reply tokens, preemptions, prompt tokens found in the prefix cache, and (simulated
    runs) when it was first scheduled (s)."""

    arrival_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    preemptions: np.ndarray
    cached_tokens: np.ndarray
    scheduled_s: np.ndarray | None = None

    @property
    def n_requests(self) -> int:
        return int(self.arrival_s.size)

    @property
    def ttft_ms(self) -> np.ndarray:
        return (self.first_token_s - self.arrival_s) * 1e3

    @property
    def e2e_ms(self) -> np.ndarray:
        return (self.finish_s - self.arrival_s) * 1e3

    @property
    def tpot_ms(self) -> np.ndarray:
        """(e2e − TTFT)/(output − 1); NaN for one-token replies (vLLM's convention)."""
        out = self.output_tokens.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(out >= 2, (self.finish_s - self.first_token_s) * 1e3
                            / np.maximum(out - 1, 1), np.nan)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({
            "arrival_s": self.arrival_s, "first_token_s": self.first_token_s,
            "finish_s": self.finish_s, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens, "preemptions": self.preemptions,
            "cached_tokens": self.cached_tokens,
            **({} if self.scheduled_s is None else {"scheduled_s": self.scheduled_s}),
            "ttft_ms": self.ttft_ms,
            "tpot_ms": self.tpot_ms, "e2e_ms": self.e2e_ms})


@dataclass(frozen=True, eq=False)
class Timeline:
    """One run, step by step (the first steps, as many as were kept): step start (s),
    requests running, waiting, KV blocks in use, preemptions so far."""

    time_s: np.ndarray
    running: np.ndarray
    waiting: np.ndarray
    kv_blocks: np.ndarray
    preemptions: np.ndarray
    kv_blocks_total: int | None


@dataclass(frozen=True, eq=False)
class ServingResult:
    """Summary of a served run (ms, per s; see ``summarize``).  ``prefix_cache``: the
    shared-prompt blocks cached at the end (pass as ``warm_prefix_cache`` to the next run
    on the same server)."""

    ttft_ms: LatencySummary
    tpot_ms: LatencySummary
    itl_ms: LatencySummary
    e2e_ms: LatencySummary
    queue_ms: LatencySummary
    throughput_requests_per_s: float
    output_tokens_per_s: float
    mean_running: float
    kv_peak_fraction: float | None
    preempted_fraction: float
    n_requests: int
    warmup_requests: int = 0
    mean_waiting: float = math.nan
    steps: int = 0
    records: ServingRecords | None = None
    timeline: Timeline | None = None
    notes: tuple = field(default=())
    prefix_cache: np.ndarray | None = field(default=None, repr=False)
    _ttft_tpot: tuple = field(default=(), repr=False)

    def goodput_fraction(self, *, ttft_ms=math.inf, tpot_ms=math.inf, percentile=None) -> float:
        """Share of the counted requests with TTFT ≤ ``ttft_ms`` and TPOT ≤ ``tpot_ms``
        (one-token replies meet any TPOT limit).  With ``percentile`` (e.g. 90): that
        share when it reaches ``percentile`` %, else 0 (DistServe's goodput: a load
        counts only while its SLO attainment holds)."""
        ttft, tpot = self._ttft_tpot
        ok = (ttft <= ttft_ms) & ~(tpot > tpot_ms)
        share = float(ok.mean()) if ok.size else math.nan
        if percentile is None:
            return share
        from ..core.domains import PERCENTILE
        q = float(PERCENTILE.check(percentile, "percentile"))
        return share if share * 100.0 >= q - 1e-9 else 0.0

    def table(self) -> pd.DataFrame:
        """Latencies (rows) by statistic (columns), in ms."""
        rows = {"TTFT": self.ttft_ms, "TPOT": self.tpot_ms, "ITL": self.itl_ms,
                "end-to-end": self.e2e_ms, "queue": self.queue_ms}
        return pd.DataFrame({k: v.as_dict() for k, v in rows.items()}).T


def _itl_summary(itl_hist, gaps_ms, tokens, edges_ms) -> LatencySummary:
    """ITL: exact mean Σ(finish − first)/Σ(output − 1), percentiles from the 1 %-wide
    histogram the simulator keeps (each at its bin's geometric middle)."""
    count = int(itl_hist.sum()) if itl_hist is not None else 0
    denom = tokens.sum()
    if denom <= 0:
        return LatencySummary(*(math.nan,) * 6, count=0)
    mean = float(gaps_ms.sum() / denom)
    if itl_hist is None or count == 0:
        return LatencySummary(mean, *(math.nan,) * 5, count=int(denom))
    cum = np.cumsum(itl_hist) / count
    mids = np.sqrt(edges_ms[:-1] * edges_ms[1:])
    qs = [float(mids[min(np.searchsorted(cum, q / 100.0), mids.size - 1)]) for q in QUANTILES]
    keep = tokens > 0
    ci = mean_ci95(gaps_ms[keep] / tokens[keep]) if keep.sum() > 1 else math.inf
    return LatencySummary(mean, *qs, ci95=ci, count=count)


def _per_s(count: float, span_s: float) -> float:
    """``count`` over ``span_s``: inf when everything finished at 0 s (steps of 0 ms)."""
    if span_s == 0:
        return math.inf if count > 0 else 0.0
    return count / span_s


def summarize(records: ServingRecords, *, warmup_requests: int = 0, queue_s=None,
              itl_hist=None, itl_edges_ms=None, mean_running=math.nan,
              mean_waiting=math.nan, kv_peak_fraction=None, steps=0, timeline=None,
              keep_records=False, notes=(), prefix_cache=None) -> ServingResult:
    """The one summary of a run's records (simulated or measured): requests from
    ``warmup_requests`` on are counted; throughput is all completed requests over the
    last finish; ``queue_s`` (send to first scheduling, s) when known."""
    w = int(warmup_requests)
    sl = slice(w, None)
    ttft = records.ttft_ms[sl]
    tpot = records.tpot_ms[sl]
    e2e = records.e2e_ms[sl]
    out = records.output_tokens[sl].astype(float)
    gaps = (records.finish_s[sl] - records.first_token_s[sl]) * 1e3
    end_s = float(np.max(records.finish_s)) if records.n_requests else math.nan
    span = end_s if end_s > 0 else (0.0 if end_s == 0 else math.nan)
    queue = (summary_of(np.asarray(queue_s)[sl] * 1e3) if queue_s is not None
             else LatencySummary(*(math.nan,) * 6, count=0))
    return ServingResult(
        ttft_ms=summary_of(ttft), tpot_ms=summary_of(tpot),
        itl_ms=_itl_summary(itl_hist, gaps, np.maximum(out - 1, 0), itl_edges_ms),
        e2e_ms=summary_of(e2e), queue_ms=queue,
        throughput_requests_per_s=_per_s(records.n_requests, span),
        output_tokens_per_s=_per_s(float(records.output_tokens.sum()), span),
        mean_running=float(mean_running), kv_peak_fraction=kv_peak_fraction,
        preempted_fraction=float(np.mean(records.preemptions[sl] > 0)) if ttft.size else 0.0,
        n_requests=int(ttft.size), warmup_requests=w, mean_waiting=float(mean_waiting),
        steps=int(steps), records=records if keep_records else None, timeline=timeline,
        notes=tuple(notes), prefix_cache=prefix_cache, _ttft_tpot=(_frozen(ttft), _frozen(tpot)))
