"""The terms of the online prediction, separated: what each one is, where it comes from.

An offline perf_analyzer table (concurrency 1, one model instance, a request of b
inputs) mixes three costs in one latency per batch:

* the instance's **batch time** τ[b] = αb + τ0 (framework and GPU work on the batch),
  which dynamic batching amortises;
* the **serial transfer** of a large request: past the batch where the offline
  throughput peaks (the GPU is saturated), the latency grows faster than the GPU
  work, because the b inputs of one request travel and are unpacked one after
  another.  Online every request carries one input: that excess never occurs;
* the **per-request front end** (sending one input, handling the reply): a delay per
  request, overlapped across the clients' connections.

and one cost it shows only through its shape: how much of a batch's time holds the
GPU (the **GPU share** γ).  Where the offline latency has a knee (its slope grows where
the GPU saturates: ``online_knee``), the table itself separates the GPU's batch time
g(b) = max(g0, α_g·b) from the serial transfer t_x per input and the round trip f, and
those terms are used (``_knee_terms``); otherwise the terms below, with γ assumed.
Online, an instance's non-GPU work overlaps the other instances' GPU work; the GPU
work does not overlap.  ``identify_online_terms`` reads
each term off the offline table where the table shows it, says which terms are
assumed, and takes a concurrency-2 perf_analyzer run with its server-side breakdown
(``read_server_breakdown``) to measure what the table cannot: the front end, γ, and
(where the table has no knee) how much of the offline time is the instance's own
(``_breakdown_terms``: the rest is transfer, paid per request online); where the table
has a knee, the breakdown's compute infer checks it (``_knee_checked``).
Derivation and checks: docs/models/measured.md, "Offline to online".
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..core.domains import GPU_SHARE
from ..fit import fit_batch_profile
from .online_knee import _gpu_knee
from .results import MeasuredBatchProfile, MeasuredConcurrencySweep
from .sweeps import read_concurrency_sweep

TRANSFER_BATCHES = 4          # the front-end time is the latency's slope over b ≤ this
BREAKDOWN_MAX_CONCURRENCY = 4  # the breakdown row is read at the lowest concurrency ≤ this
SERVER_PARTS = ("server_compute_input", "server_compute_infer", "server_compute_output")
FRONT_PARTS = ("client_send", "network_server_send_recv", "client_recv")


@dataclass(frozen=True)
class ServerBreakdown:
    """One low-concurrency perf_analyzer row's breakdown (ms per request)."""

    concurrency: float
    front_end_ms: float                 # client send + network/server send-recv + client recv
    compute_input_ms: float
    compute_infer_ms: float
    compute_output_ms: float
    label: str

    @property
    def gpu_share(self) -> float:
        """γ = compute infer / (compute input + infer + output)."""
        total = self.compute_input_ms + self.compute_infer_ms + self.compute_output_ms
        return float(self.compute_infer_ms / total)


@dataclass(frozen=True)
class OnlineTerms:
    """The separated terms of one offline table (and, where given, a breakdown run)."""

    alpha_ms: float                     # instance batch time per input (up to saturation)
    tau0_ms: float                      # instance batch time per batch
    r2: float                           # of that line
    saturation_batch: int               # the batch of peak offline throughput
    excess_ms: float                    # serial transfer past saturation, per input at the largest b
    transfer_ms: float                  # mean front-end time per request
    gpu_share: float | None             # γ; None: not identified
    sharing_factor: float               # an instance's batch time stretched by GPU sharing
    identified: tuple                   # plain sentences: terms read off the data
    assumed: tuple                      # plain sentences: terms assumed
    gpu_floor_ms: float | None = None   # g0 where the table's knee identifies the GPU time
    knee_batch: float | None = None     # b_s: where the GPU saturates (the knee)
    knee_p_value: float | None = None   # F-test of two lines against one (NaN: no test)
    instance_ms_per_input: float = 0.0  # off-GPU work in the instance (breakdown run, knee)


def sharing_factor(instances: int, gpu_share: float | None = None) -> float:
    """How much K instances sharing one GPU stretch each one's batch time at saturation:
    max(1, K·γ) (the GPU runs one batch at a time; the rest of a batch overlaps the
    other instances' GPU work).  ``gpu_share`` None (unknown): the capacity averaged
    over γ uniform on [0, 1], E[1/max(1, Kγ)] = (1 + ln K)/K, as one factor K/(1 + ln K)."""
    k = int(instances)
    if k < 1:
        raise ValueError(f"instances must be a whole number ≥ 1, got {instances!r}")
    if gpu_share is None:
        return k / (1.0 + math.log(k))
    g = float(GPU_SHARE.check(gpu_share))
    return max(1.0, k * g)


def _saturation_line(profile: MeasuredBatchProfile) -> tuple:
    """(α ms, τ0 ms, R², saturation batch, excess ms per input at the largest batch):
    the line fitted to the offline batch times over b ≤ the batch of peak throughput
    (the two smallest batches at least), and how far above that line the largest
    batch's time per input lies (≥ 0: the serial transfer past saturation)."""
    b, tau, x = profile.batch_size, profile.batch_time_ms, profile.throughput_per_s
    peak = b[x >= x.max() * (1.0 - 1e-9)].max()   # ties (float noise): the largest batch
    keep = b <= peak
    if keep.sum() < 2:
        keep = np.isin(b, np.sort(b)[:2])
    fit = fit_batch_profile(b[keep], x[keep])
    top = int(np.argmax(b))
    excess = max(0.0, float((tau[top] - fit.alpha_ms * b[top] - fit.tau0_ms) / b[top]))
    return fit.alpha_ms, fit.tau0_ms, fit.r2, int(peak), excess


def _front_end_ms(profile: MeasuredBatchProfile) -> float:
    """One input's transfer time (ms): the least-squares slope of the offline batch time
    over the batches b ≤ ``TRANSFER_BATCHES`` (the two smallest batches when fewer),
    floored at 0."""
    b, tau = profile.batch_size, profile.batch_time_ms
    small = b <= TRANSFER_BATCHES
    if small.sum() < 2:
        small = np.argsort(b)[:2]
    slope = np.polyfit(b[small], tau[small], 1)[0]
    return float(max(slope, 0.0))


def read_server_breakdown(text) -> ServerBreakdown:
    """The lowest-concurrency row (≤ ``BREAKDOWN_MAX_CONCURRENCY``) of a perf_analyzer run
    with its server-side breakdown (``perf_analyzer -f`` CSV, µs; or a DeepLearningExamples
    online table, ms): ``ValueError`` when the file has no breakdown or no such row."""
    return _breakdown_of(read_concurrency_sweep(text))


def _breakdown_of(sweep: MeasuredConcurrencySweep) -> ServerBreakdown:
    """``read_server_breakdown`` of a parsed sweep."""
    parts = sweep.breakdown_ms
    if parts is None or any(k not in parts for k in SERVER_PARTS):
        raise ValueError("the run has no server-side breakdown (compute input, infer, "
                         "output): run perf_analyzer with -f and a Triton server")
    low = np.flatnonzero(sweep.concurrency <= BREAKDOWN_MAX_CONCURRENCY)
    if low.size == 0:
        raise ValueError(f"no row at concurrency ≤ {BREAKDOWN_MAX_CONCURRENCY} (the run's "
                         f"lowest is {sweep.concurrency.min():g}): the breakdown must come "
                         f"from a run where the instances rarely share the GPU")
    i = int(low[0])
    compute = [float(parts[k][i]) for k in SERVER_PARTS]
    if sum(compute) <= 0:
        raise ValueError("the breakdown's compute input + infer + output is 0 ms")
    front = sum(float(parts[k][i]) for k in FRONT_PARTS if k in parts)
    return ServerBreakdown(concurrency=float(sweep.concurrency[i]), front_end_ms=front,
                           compute_input_ms=compute[0], compute_infer_ms=compute[1],
                           compute_output_ms=compute[2], label=sweep.label)


def identify_online_terms(profile: MeasuredBatchProfile, instances: int = 1,
                          breakdown: ServerBreakdown | None = None, *,
                          use_knee: bool = True) -> OnlineTerms:
    """Each term of the online prediction from the offline ``profile`` (and ``breakdown``
    where given), with which were identified and which assumed.  ``use_knee`` False: the
    line's reading even where the table has a knee (the other reading the page shows)."""
    alpha, tau0, r2, peak, excess = _saturation_line(profile)
    if alpha <= 0:
        raise ValueError(f"the offline batch time does not grow with the batch size "
                         f"(fitted α = {alpha:.4g} ms per request): no batching model fits it")
    tau0 = max(tau0, 0.0)
    knee = _gpu_knee(profile.batch_size, profile.batch_time_ms, profile.throughput_per_s)
    largest = int(profile.batch_size.max())
    check = ""
    if knee.found and use_knee:
        if breakdown is None:
            return _knee_terms(knee, peak, excess, largest, None)
        kept, check = _knee_checked(knee, alpha, tau0, instances, breakdown)
        if kept:
            terms = _knee_terms(knee, peak, excess, largest, breakdown)
            return dataclasses.replace(terms, identified=terms.identified + (check,))
    if breakdown is not None:
        return _breakdown_terms(alpha, tau0, r2, peak, excess, instances, breakdown, check)
    theta = _front_end_ms(profile)
    identified = [
        f"Instance batch time τ[b] = {alpha:.4g}·b + {tau0:.4g} ms: the offline line up to "
        f"b = {peak}, where the offline throughput peaks (R² {r2:.4f})."
        + ("" if peak == largest else
           f" Past it the offline time per input grows by the serial transfer of the large "
           f"request ({excess:.3g} ms per input at b = {largest}), which online requests of "
           f"one input never pay: left out."),
        f"Front-end time per request {theta:.3g} ms: the offline latency's slope over "
        f"b ≤ {TRANSFER_BATCHES} (one more input sent).",
    ]
    factor = sharing_factor(instances)
    assumed = [] if instances <= 1 else [
        f"GPU share γ of an instance's batch time: not in the offline table (one instance "
        f"never shares the GPU, and its latency shows no knee where the GPU saturates: "
        f"{knee.reason}). Taken uniform on [0, 1]: the {instances} instances' capacity "
        f"averaged over it, as if each batch took {factor:.3g}× τ[b]. A concurrency-2 "
        f"perf_analyzer run with its server-side breakdown measures it."]
    return OnlineTerms(alpha_ms=alpha, tau0_ms=tau0, r2=r2, saturation_batch=peak,
                       excess_ms=excess, transfer_ms=theta, gpu_share=None,
                       sharing_factor=factor, identified=tuple(identified),
                       assumed=tuple(assumed), knee_p_value=knee.p_value)


BREAKDOWN_ASSUMPTIONS = (
    "The offline latency is the request's transfer and round trip plus the instance's own "
    "time of the batch; the breakdown run measures the instance's time (compute input + "
    "infer + output) and the front end (client send + network + client receive) at a low "
    "concurrency, and the offline table gives the rest.",
    "The instance's time grows in proportion to the batch (the offline table shows no "
    "knee, so no floor), at most the offline slope; its GPU share γ (compute infer over "
    "the three) is the same at every batch.",
    "Online each request carries one input: its front end is a delay per request, "
    "overlapped across connections (exponential, not a queue).",
    "The instances share one queue and one GPU: a batch first spends (1 − γ) of its time "
    "in its instance, overlapping other batches, then γ holding the GPU alone (one batch "
    "at a time, first come first served).",
    "Mean latency is the client's view, N / throughput by Little's law.",
)


def _breakdown_batch(breakdown: ServerBreakdown, instances: int) -> float:
    """b̄ = ⌈N/K⌉: the batch of the breakdown run's low concurrency N on K instances."""
    return max(1.0, math.ceil(breakdown.concurrency / max(int(instances), 1)))


def _breakdown_terms(alpha: float, tau0: float, r2: float, peak: int, excess: float,
                     instances: int, breakdown: ServerBreakdown, check: str) -> OnlineTerms:
    """The terms of a table without a (kept) knee, split by a breakdown run.  The offline
    latency L(b) = αb + τ0 holds the request's transfer and round trip as well as the
    instance's work; the breakdown measures the instance's own time of a batch of b̄,
    c = compute input + infer + output, and the front end θ per request.  With no knee
    the instance's time has no floor: c(b) = c₁·b, c₁ = min(c/b̄, α) (at most the whole
    offline slope); of it γ·c₁ per input holds the GPU, (1 − γ)·c₁ overlaps the other
    instances' GPU work.  The rest of the offline time (transfer, round trip) is the
    per-request front end online, measured as θ."""
    b = _breakdown_batch(breakdown, instances)
    gamma = breakdown.gpu_share
    own = breakdown.compute_input_ms + breakdown.compute_infer_ms + breakdown.compute_output_ms
    c1 = min(own / b, alpha)
    theta = breakdown.front_end_ms
    at = f"at concurrency {breakdown.concurrency:g} (the breakdown run)"
    identified = [
        f"Front-end time per request {theta:.3g} ms: client send + network + client receive "
        f"{at}.",
        f"The instance's own time per request {c1:.3g} ms: compute input + infer + output, "
        f"{own:.3g} ms for a batch of {b:g} {at}"
        + ("" if c1 == own / b else f", at most the offline slope α = {alpha:.4g} ms")
        + f". The rest of the offline line τ[b] = {alpha:.4g}·b + {tau0:.4g} ms (up to "
        f"b = {peak}, R² {r2:.4f}) is the request's transfer and round trip, paid per "
        f"request online: {max(alpha - c1, 0.0):.3g} ms of each input's offline time.",
        f"GPU share γ = {gamma:.3g}: compute infer / (compute input + infer + output) {at}. "
        f"Of each request's {c1:.3g} ms, {gamma * c1:.3g} ms hold the GPU (one batch at a "
        f"time), {(1 - gamma) * c1:.3g} ms overlap the other instances' GPU work.",
    ]
    if check:
        identified.append(check)
    assumed = (f"The instance's time grows in proportion to the batch, c(b) = {c1:.3g}·b ms "
               f"(the offline table shows no knee, so no floor), and its GPU share stays "
               f"γ = {gamma:.3g} at every batch.",)
    return OnlineTerms(alpha_ms=gamma * c1, tau0_ms=0.0, r2=r2, saturation_batch=peak,
                       excess_ms=excess, transfer_ms=theta, gpu_share=gamma,
                       sharing_factor=1.0, identified=tuple(identified), assumed=assumed,
                       gpu_floor_ms=0.0, instance_ms_per_input=(1 - gamma) * c1)


def _knee_checked(knee, alpha: float, tau0: float, instances: int,
                  breakdown: ServerBreakdown) -> tuple:
    """(keep the knee?, the sentence saying why): the two readings of the offline table
    against the breakdown run's compute infer, the GPU time of one batch at its low
    concurrency (batches of b = ⌈N/K⌉ requests).  The knee says g(b) = max(g0, α_g·b);
    the line says γ·τ[b] = γ·(αb + τ0).  The reading nearer the measurement (by the
    ratio) is kept."""
    b = _breakdown_batch(breakdown, instances)
    infer = breakdown.compute_infer_ms
    by_knee = max(knee.gpu_floor_ms, knee.gpu_alpha_ms * b)
    by_line = breakdown.gpu_share * (alpha * b + tau0)
    if infer <= 0 or by_line <= 0:
        return True, ""
    kept = abs(math.log(infer / by_knee)) <= abs(math.log(infer / by_line))
    said = (f"The breakdown run's compute infer, {infer:.3g} ms per batch of {b:g} at "
            f"concurrency {breakdown.concurrency:g}, ")
    if kept:
        return True, said + (f"confirms the knee's GPU time ({by_knee:.3g} ms; the line's "
                             f"reading would be {by_line:.3g} ms): the knee is kept.")
    return False, said + (f"matches the line's reading ({by_line:.3g} ms), not the knee's "
                          f"GPU time g0 = {by_knee:.3g} ms: the knee (b ≈ {knee.knee_batch:.3g}) "
                          f"is set aside, its slope below b_s being GPU work, not transfer.")


def _knee_terms(knee, peak: int, excess: float, largest: int,
                breakdown: ServerBreakdown | None) -> OnlineTerms:
    """The terms where the offline latency's knee identifies the GPU's batch time."""
    a, g0, bs = knee.gpu_alpha_ms, knee.gpu_floor_ms, knee.knee_batch
    identified = [
        f"GPU batch time g(b) = max({g0:.4g}, {a:.4g}·b) ms: the offline latency is two "
        f"lines meeting at b ≈ {bs:.3g}, where the GPU saturates (two lines beat one: "
        f"F-test p = {knee.p_value:.2g}, {knee.rows} rows up to b = {peak}). α_g is the "
        f"slope's growth at the knee, g0 the intercept's drop."
        + ("" if peak == largest else
           f" Past b = {peak} the offline throughput falls (the serial transfer of a large "
           f"request, {excess:.3g} ms per input at b = {largest}): those rows are left out."),
        f"Serial transfer t_x = {knee.transfer_ms:.3g} ms per input: the latency's slope "
        f"below the knee, where the GPU time is flat. Online each request carries one input, "
        f"so it is paid per request, outside the batch.",
        f"GPU share γ(b) = α_g·b / g(b): 1 past the knee (the instances take the GPU one "
        f"saturated batch at a time), α_g·b/g0 below it (the rest overlaps other batches).",
    ]
    if breakdown is None:
        theta = knee.front_ms + knee.transfer_ms
        identified.append(f"Front-end time per request θ = {theta:.3g} ms: the round trip "
                          f"{knee.front_ms:.3g} ms (the large-batch line's intercept) + one "
                          f"input's transfer.")
        own, assumed = 0.0, (
            f"The GPU's batch time is flat (g0) below the knee, so the slope there, t_x, is "
            f"transfer, not GPU work. Where a GPU's time still grows below b_s, the knee "
            f"reads that growth as transfer and puts the GPU's capacity (1/α_g = "
            f"{1000.0 / a:,.0f}/s) too high: on NVIDIA's framework tables, which carry no "
            f"transfer, 4 of the 5 knees found put it 2.2-15× above the table's own peak "
            f"(docs/models/measured.md). The line's reading is shown beside it; a breakdown "
            f"run's compute infer (the GPU time of a small batch) tells the two apart.",
            "The serial transfer t_x runs outside the GPU and overlaps across the clients' "
            "connections online (a delay per request, not a queue); any part of it the "
            "instance itself spends (compute input) would also bound the capacity. A "
            "breakdown run's compute input says how much.",)
    else:
        theta = breakdown.front_end_ms
        own = breakdown.compute_input_ms + breakdown.compute_output_ms
        identified.append(f"Front-end time per request {theta:.3g} ms: client send + network "
                          f"+ client receive at concurrency {breakdown.concurrency:g} "
                          f"(the breakdown run).")
        identified.append(f"The instance's own work off the GPU {own:.3g} ms per input: "
                          f"compute input + output at concurrency {breakdown.concurrency:g} "
                          f"(the breakdown run), overlapping the other instances' GPU work.")
        assumed = ()
    return OnlineTerms(alpha_ms=a, tau0_ms=0.0, r2=knee.r2, saturation_batch=peak,
                       excess_ms=excess, transfer_ms=theta, gpu_share=None,
                       sharing_factor=1.0, identified=tuple(identified), assumed=assumed,
                       gpu_floor_ms=g0, knee_batch=bs, knee_p_value=knee.p_value,
                       instance_ms_per_input=own)
