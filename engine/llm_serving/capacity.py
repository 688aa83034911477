"""The most a server carries (``max_rate_per_s``) and mean TTFT, TPOT and e2e without
simulation (``approximate_serving``).

Capacity (chunked prefill, renewal-reward per seat): at saturation R seats are always
full; a request holds its seat for o steps (its prompt step emits token 1, then o − 1
decode steps), so a step completes R/E[o] requests on average and, the step cost
being linear, the mean step is the cost of the mean step::

    s̄(R) = base + (R/E[o])·(a·E[l] + a₂·E[l²] + ctx·E[Σ_{g<o}(l + g)]) + d·R·E[o − 1]/E[o]
    λ_max = R / (E[o] · s̄(R)),   R = min(max_num_seqs, budget seats, KV seats)

with budget seats B·E[o]/(E[l] + E[o] − 1) (the tokens a step may compute) and KV
seats M·b/(mean tokens a seat holds + b/2).  Exact when neither the budget nor the KV
cache binds and every prompt fits one step; otherwise an approximation (prompts are
then chunked: Q is taken as l², an upper bound).  Derivation: docs/models/llm_serving.md.
"""
from __future__ import annotations

from dataclasses import dataclass
import math

import numpy as np

from ..core.domains import RATE_PER_S
from ..core.token_laws import EmpiricalTokens, grid_top, token_pmf
from .cost import StepCost
from .scheduler import Scheduler

__all__ = ["WorkloadMoments", "workload_moments", "max_rate_per_s", "capacity_limit", "ServingApproximation",
           "approximate_serving", "CapacityLimit", "approximate_percentiles", "ServingPercentiles"]


@dataclass(frozen=True)
class WorkloadMoments:
    """Moments of the prompt l and reply o token counts that the capacity needs."""

    mean_input: float           # E[l]
    mean_input_sq: float        # E[l²]
    mean_output: float          # E[o]
    context_sum: float          # E[Σ_{g=1}^{o−1} (l + g)]: context tokens read by decodes
    held_tokens: float          # E[Σ_{g=0}^{o−1} (l + g)]/E[o]: tokens a seat holds on average


def _pmf(law):
    if isinstance(law, EmpiricalTokens):
        return np.asarray(law.values, float), np.asarray(law.probs, float)
    k = np.arange(1.0, grid_top(law) + 1.0)
    p = np.asarray(token_pmf(law, k), dtype=float)
    return k, p / p.sum()


def _law_or_values(x, name):
    """(values, probabilities) of a token count: a number, a sample (one per request)
    or a law."""
    if callable(getattr(x, "rvs", None)):
        mean = float(x.mean())
        if not math.isfinite(mean):
            raise ValueError(f"{name}: the law's mean is {mean:g} tokens; a finite mean is "
                             f"needed")
        return _pmf(x)
    try:
        arr = np.asarray(x, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be token counts ≥ 1 (a number, one per request, or "
                         f"a law), got {x!r}") from None
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 1):
        raise ValueError(f"{name} must be token counts ≥ 1")
    arr = np.maximum(1.0, np.ceil(arr))
    return arr, np.full(arr.size, 1.0 / arr.size)


def workload_moments(input_tokens, output_tokens) -> WorkloadMoments:
    """The moments of a workload: numbers, samples (paired request by request when both
    are samples of the same length: a trace's prompts and replies) or independent laws."""
    lv, lp = _law_or_values(input_tokens, "input_tokens")
    ov, op = _law_or_values(output_tokens, "output_tokens")
    paired = (not callable(getattr(input_tokens, "rvs", None))
              and not callable(getattr(output_tokens, "rvs", None))
              and lv.size == ov.size and lv.size > 1)
    el, el2 = float(lp @ lv), float(lp @ lv ** 2)
    eo = float(op @ ov)
    tri = float(op @ ((ov - 1) * ov / 2))                 # E[Σ_{g<o} g]
    if paired:
        elo = float(np.mean(lv * (ov - 1)))
        elo_all = float(np.mean(lv * ov))
    else:
        elo = el * (eo - 1)
        elo_all = el * eo
    return WorkloadMoments(mean_input=el, mean_input_sq=el2, mean_output=eo,
                           context_sum=elo + tri,
                           held_tokens=(elo_all + tri) / eo)


@dataclass(frozen=True)
class CapacityLimit:
    """``max_rate_per_s`` with what sets it: the seats R, the step at saturation, and
    which limit binds ("max_num_seqs", "token budget", "KV cache")."""

    rate_per_s: float
    seats: float
    step_ms: float
    binding: str
    exact: bool


def _step_at(cost: StepCost, m: WorkloadMoments, seats: float) -> float:
    per = seats / m.mean_output
    return (cost.base_ms
            + per * (cost.prefill_ms_per_token * m.mean_input
                     + cost.prefill_ms_per_token_sq * m.mean_input_sq
                     + cost.context_ms_per_token * m.context_sum)
            + cost.decode_ms_per_seq * seats * (m.mean_output - 1) / m.mean_output)


def capacity_limit(cost: StepCost, scheduler: Scheduler, input_tokens,
                   output_tokens) -> CapacityLimit:
    """``max_rate_per_s`` with its parts (see the module's docstring)."""
    m = workload_moments(input_tokens, output_tokens)
    limits = {"max_num_seqs": float(scheduler.max_num_seqs),
              "token budget": scheduler.max_num_batched_tokens * m.mean_output
              / (m.mean_input + m.mean_output - 1)}
    if scheduler.kv_cache_tokens is not None:
        limits["KV cache"] = (scheduler.kv_blocks * scheduler.block_size
                              / (m.held_tokens + scheduler.block_size / 2))
    binding = min(limits, key=limits.get)
    seats = max(limits[binding], 1.0)
    if not scheduler.chunked_prefill:
        return _whole_prompt_limit(cost, scheduler, m, seats, binding)
    step = _step_at(cost, m, seats)
    rate = seats / (m.mean_output * step) * 1e3 if step > 0 else math.inf
    return CapacityLimit(rate, seats, step, binding, exact=binding == "max_num_seqs")


def _whole_prompt_limit(cost, scheduler, m, seats, binding) -> CapacityLimit:
    """Without chunked prefill a step is prompts only or decodes only.  A request costs
    its share of a prompt step and E[o − 1] decode steps shared by R seats: per decode
    step R/E[o − 1] requests finish (renewal per seat), a prompt step follows a decode
    step with at least one finish (taken as 1 − exp(−R/E[o − 1])) and holds the m
    prompts that freed seats let in (at most R, and the budget's B/E[l])."""
    decodes = m.mean_output - 1
    fit = max(1.0, min(seats, scheduler.max_num_batched_tokens / m.mean_input))
    if decodes > 1e-9:
        done = seats / decodes
        per_prompt_step = min(max(done / -math.expm1(-done), 1.0), fit)
    else:                                   # one-token replies: prompt steps only
        per_prompt_step = fit
    prompt = (cost.prefill_base_ms + per_prompt_step * (
        cost.prefill_ms_per_token * m.mean_input
        + cost.prefill_ms_per_token_sq * m.mean_input_sq))
    decode = (cost.base_ms + cost.decode_ms_per_seq * seats
              + cost.context_ms_per_token * seats * m.context_sum / max(decodes, 1e-300))
    per_request = prompt / per_prompt_step + (decode * decodes / seats if decodes > 1e-9
                                              else 0.0)
    rate = 1e3 / per_request if per_request > 0 else math.inf
    return CapacityLimit(rate, seats, decode, binding, exact=False)


def max_rate_per_s(cost: StepCost, scheduler: Scheduler, input_tokens, output_tokens) -> float:
    """The largest request rate (per s) the server carries; past it a load is unstable.
    Token counts: numbers, samples or laws (``workload_moments``)."""
    return capacity_limit(cost, scheduler, input_tokens, output_tokens).rate_per_s


@dataclass(frozen=True)
class ServingApproximation:
    """Mean TTFT, TPOT and e2e (ms) without simulation, and the mean running count;
    ``stable`` False (and inf latencies) at or past ``rate_limit_per_s``."""

    rate_per_s: np.ndarray
    ttft_ms: np.ndarray
    tpot_ms: np.ndarray
    e2e_ms: np.ndarray
    mean_running: np.ndarray
    stable: np.ndarray
    rate_limit_per_s: float
    method: str = ("birth-death chain of the requests in the server (completion rate "
                   "k/(E[o]·s̄(k)) with k running, seats beyond max_num_seqs wait), wait "
                   "scaled by (1 + SCV of the reply length)/2")


def _seat_chain(lam_per_ms, cost, m, limit):
    """Birth-death chain of the requests in the server (running and waiting): with k
    running, completions at rate k/(E[o]·s̄(k)), k below the seats R; from ⌈R⌉ − 1 on at
    the capacity λ_max (so the chain's capacity is ``max_rate_per_s``, R fractional or
    not).  Returns (P(k) up to the top state, the mean wait for a seat in ms, s̄(k)), or
    None at or past the capacity."""
    top_rate = limit.rate_per_s / 1e3
    if not lam_per_ms < top_rate:
        return None
    c = int(max(1, math.ceil(limit.seats - 1e-9)))
    k = np.arange(1, c + 1, dtype=float)
    step = _step_at(cost, m, k)                          # linear in k: one array expression
    mu = np.minimum(k / (m.mean_output * np.maximum(step, 1e-300)), top_rate)
    mu[-1] = top_rate
    log_ratio = np.log(lam_per_ms) - np.log(mu)
    log_p = np.concatenate([[0.0], np.cumsum(log_ratio)])
    rho = lam_per_ms / top_rate                         # beyond c: geometric
    tail_mass = np.exp(log_p[-1]) * rho / (1 - rho)
    top = log_p.max()
    p = np.exp(log_p - top)
    tail = tail_mass / math.exp(top)
    norm = p.sum() + tail
    p /= norm
    tail /= norm
    waiting = tail / (1 - rho)                          # Σ_{j≥1} j·P(c + j)
    return p, waiting / lam_per_ms, np.concatenate([[cost.base_ms], step])


def _approximate_one(lam_per_ms, cost, m, limit, scv_output, work, whole_prompts,
                     chain=None):
    """(TTFT, TPOT, e2e, mean running) at λ (per ms).  ``work``: (E[w], E[w²]) of one
    prompt's compute, w = a·l + a₂·l² (ms); ``chain``: ``_seat_chain``'s answer at λ if
    already computed."""
    own_decode = cost.decode_ms_per_seq + cost.context_ms_per_token * (
        m.context_sum / max(m.mean_output - 1, 1e-9))
    m1, m2 = work
    if lam_per_ms <= 0:
        ttft = cost.frontend_ms + cost.prefill_base_ms + m1
        tpot = cost.base_ms + own_decode
        return ttft, tpot, ttft + (m.mean_output - 1) * tpot, 0.0
    if chain is None:
        chain = _seat_chain(lam_per_ms, cost, m, limit)
    if chain is None:
        return math.inf, math.inf, math.inf, math.inf
    p, wait, step = chain
    k = np.arange(p.size, dtype=float)
    running = float(k @ p) + (1.0 - p.sum()) * (p.size - 1)
    # a decoding request sees k running, itself included: weight states by k
    tpot = float((k * p) @ step) / max(float(k @ p), 1e-300) + own_decode - (
        own_decode + m1) / m.mean_output
    wait *= (1.0 + scv_output) / 2.0                     # seat times are not exponential
    # TTFT: prompts arriving during a step are computed in the next one (gated), so a
    # step is s' = A + W(s): A the decoding part, W the prompt work that arrived in s
    busy = 1.0 - p[0]
    decode_part = cost.base_ms + k * (cost.decode_ms_per_seq * (m.mean_output - 1)
                                      + cost.context_ms_per_token * m.context_sum) / m.mean_output
    a = float(p[1:] @ decode_part[1:]) / max(busy, 1e-300)
    rho = lam_per_ms * m1
    if rho >= 1:
        return math.inf, tpot, math.inf, running
    if whole_prompts:                                    # a prompt step of its own
        a += cost.prefill_base_ms * -math.expm1(-lam_per_ms * a / (1 - rho))
    mean_s = a / (1 - rho)
    mean_s2 = (a * a + 2 * a * rho * mean_s + lam_per_ms * m2 * mean_s) / (1 - rho * rho)
    in_step = mean_s2 / (2 * mean_s) + a + rho * mean_s2 / mean_s + m1
    alone = cost.prefill_base_ms + m1
    ttft = cost.frontend_ms + wait + busy * in_step + (1 - busy) * alone
    return ttft, tpot, ttft + (m.mean_output - 1) * tpot, running


def _output_scv(output_tokens) -> float:
    v, p = _law_or_values(output_tokens, "output_tokens")
    mean = float(p @ v)
    return float(p @ (v - mean) ** 2) / mean ** 2


def _chain_inputs(cost, scheduler, input_tokens, output_tokens, rate_per_s):
    """What the chain needs, checked: the rates (per s), the capacity, the moments, the
    reply length's SCV, each prompt's work w = a·l + a₂·l² (ms) with its probabilities,
    and (E[w], E[w²])."""
    lam = np.asarray(RATE_PER_S.check(rate_per_s, "rate_per_s"), dtype=float)
    limit = capacity_limit(cost, scheduler, input_tokens, output_tokens)
    m = workload_moments(input_tokens, output_tokens)
    scv = _output_scv(output_tokens)
    values, probs = _law_or_values(input_tokens, "input_tokens")
    w = cost.prefill_ms_per_token * values + cost.prefill_ms_per_token_sq * values ** 2
    return lam, limit, m, scv, (w, probs), (float(probs @ w), float(probs @ w ** 2))


def approximate_serving(cost: StepCost, scheduler: Scheduler, *, input_tokens, output_tokens,
                        rate_per_s) -> ServingApproximation:
    """Mean TTFT, TPOT and e2e (ms) at Poisson ``rate_per_s`` (broadcasts) without
    simulation: a birth-death chain of the requests in the server (k running complete at
    k/(E[o]·s̄(k)); past the seats they wait) gives the running count, the wait for a
    seat and TPOT (the step a decoding request sees); TTFT adds gated prompt steps (the
    prompts that arrive during a step are computed in the next: s' = A + W(s)).  An
    approximation: its error against the simulator is tabled in
    docs/models/llm_serving.md; ``stable`` is False (inf latencies) at or past capacity."""
    lam, limit, m, scv, (w, probs), work = _chain_inputs(cost, scheduler, input_tokens,
                                                         output_tokens, rate_per_s)
    out = np.full((4,) + lam.shape, np.inf)
    stable = np.array(lam < limit.rate_per_s * (1 - 1e-9))
    for idx in np.ndindex(lam.shape):
        if stable[idx]:
            res = _approximate_one(lam[idx] / 1e3, cost, m, limit, scv, work,
                                   not scheduler.chunked_prefill)
            for k in range(4):
                out[(k,) + idx] = res[k]
            stable[idx] = bool(np.isfinite(res[0]) and res[0] >= 0 and res[1] >= 0)
    ro = []
    for a in (lam, out[0], out[1], out[2], out[3], stable):
        a = np.array(a)
        a.setflags(write=False)
        ro.append(a)
    return ServingApproximation(*ro, rate_limit_per_s=limit.rate_per_s)


@dataclass(frozen=True)
class ServingPercentiles:
    """Percentiles of TTFT, TPOT and e2e (ms) without simulation, at Poisson
    ``rate_per_s``; ``stable`` False (inf latencies) at or past ``rate_limit_per_s``.
    An approximation for screening (``method``); its error against the simulator is
    tabled in docs/models/llm_serving.md."""

    rate_per_s: np.ndarray
    percentile: float
    ttft_ms: np.ndarray
    tpot_ms: np.ndarray
    e2e_ms: np.ndarray
    stable: np.ndarray
    rate_limit_per_s: float
    method: str = ("the birth-death chain of approximate_serving: TPOT the percentile of the "
                   "step a decoding request sees (running count weighted by itself); TTFT the "
                   "seat wait's exponential tail, plus the in-step time as a gamma with the "
                   "step's SCV, plus the own prompt's work at the percentile (added as if "
                   "comonotone); e2e the larger of TTFT at the percentile plus mean decoding "
                   "and mean TTFT plus the reply length at the percentile times mean TPOT")


def _quantile(values, weights, q: float) -> float:
    """The q-quantile (0 < q < 1) of a discrete law (values, unnormalised weights)."""
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(np.asarray(weights, float)[order])
    return float(np.asarray(values, float)[order][min(int(np.searchsorted(cum, q * cum[-1])),
                                                      cum.size - 1)])


def _percentiles_one(lam_per_ms, q, cost, m, limit, scv_output, work, prompt_work,
                     output_law, whole_prompts):
    """(TTFT, TPOT, e2e) at the q-quantile, λ per ms (see ``ServingPercentiles``)."""
    from scipy import special
    chain = _seat_chain(lam_per_ms, cost, m, limit) if lam_per_ms > 0 else None
    ttft_mean, tpot_mean, _, _ = _approximate_one(lam_per_ms, cost, m, limit, scv_output,
                                                  work, whole_prompts, chain)
    if not math.isfinite(ttft_mean):
        return math.inf, math.inf, math.inf
    m1 = work[0]
    own_decode = cost.decode_ms_per_seq + cost.context_ms_per_token * (
        m.context_sum / max(m.mean_output - 1, 1e-9))
    w_q = _quantile(*prompt_work, q)
    o_q = _quantile(*output_law, q)
    if lam_per_ms <= 0:
        tpot_q, wait_q, wait_mean = tpot_mean, 0.0, 0.0
    else:
        p, wait_mean, step = chain
        k = np.arange(p.size, dtype=float)
        tail = max(1.0 - float(p.sum()), 0.0)
        values = step + own_decode - (own_decode + m1) / m.mean_output
        weights = k * p
        weights[-1] += k[-1] * tail
        tpot_q = _quantile(values[1:], weights[1:], q) if weights[1:].sum() > 0 else tpot_mean
        tpot_q = max(tpot_q, tpot_mean)
        waits = p[-1] + tail                             # an arrival finds every seat taken
        wait_mean *= (1.0 + scv_output) / 2.0
        wait_q = (wait_mean / waits * math.log(waits / (1.0 - q))
                  if waits > 1.0 - q and wait_mean > 0 else 0.0)
    in_step = max(ttft_mean - cost.frontend_ms - wait_mean - m1, 0.0)
    scv = min(max(m.mean_input_sq / m.mean_input ** 2 - 1.0, 0.05), 1.0) if in_step else 1.0
    # the gamma's quantile, scale × P⁻¹(shape, q) (scipy.stats.gamma.ppf without its checks)
    in_step_q = float(special.gammaincinv(1.0 / scv, q)) * in_step * scv if in_step else 0.0
    ttft_q = cost.frontend_ms + in_step_q + w_q + wait_q
    e2e_q = max(ttft_q + (m.mean_output - 1) * tpot_mean, ttft_mean + (o_q - 1) * tpot_mean)
    return ttft_q, tpot_q, e2e_q


def approximate_percentiles(cost: StepCost, scheduler: Scheduler, *, input_tokens,
                            output_tokens, rate_per_s, percentile) -> ServingPercentiles:
    """TTFT, TPOT and e2e at ``percentile`` % (ms) at Poisson ``rate_per_s`` (broadcasts)
    without simulation, for screening many configurations (the capacity planner); how
    each is built: ``ServingPercentiles.method``.  Exact at no load (TTFT the prompt's
    own step, TPOT one decode step) and never below ``approximate_serving``'s means for
    TPOT; near capacity where the KV cache binds it is optimistic like the means."""
    from ..core.domains import PERCENTILE
    pct = float(PERCENTILE.check(percentile, "percentile"))
    q = pct / 100.0
    lam, limit, m, scv, (w, probs), work = _chain_inputs(cost, scheduler, input_tokens,
                                                         output_tokens, rate_per_s)
    output_law = _law_or_values(output_tokens, "output_tokens")
    out = np.full((3,) + lam.shape, np.inf)
    stable = np.array(lam < limit.rate_per_s * (1 - 1e-9))
    for idx in np.ndindex(lam.shape):
        if stable[idx]:
            res = _percentiles_one(lam[idx] / 1e3, q, cost, m, limit, scv, work, (w, probs),
                                   output_law, not scheduler.chunked_prefill)
            for j in range(3):
                out[(j,) + idx] = res[j]
            stable[idx] = bool(np.isfinite(res[0]) and res[0] >= 0 and res[1] >= 0)
    ro = []
    for a in (lam, out[0], out[1], out[2], stable):
        a = np.array(a)
        a.setflags(write=False)
        ro.append(a)
    return ServingPercentiles(ro[0], pct, *ro[1:], rate_limit_per_s=limit.rate_per_s)
