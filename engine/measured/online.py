"""Model against measurement: the online (closed-loop) run predicted from the offline table.

perf_analyzer measures a Triton server two ways.  Offline: one client sends a batch
of b inputs at a time (concurrency 1, one model instance); the latency includes
sending the b inputs one after another over HTTP.  Online: N clients each send one
input and the next when it returns (a closed loop), dynamic batching (``b_max``),
often several model instances sharing one queue.  ``predict_online`` is the lab's
model of the online run from the offline table alone (the GPU's batch time read off
the offline latency's knee where it has one: ``online_knee``); ``compare_online`` puts
it beside a measured online table.  Every assumption is listed in the result
(``assumptions``); the derivation and the measured errors: docs/models/measured.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..batching import closed_loop, simulate_closed_loop
from ..core.domains import ONLINE_TERMS, check_b_max
from .online_terms import (BREAKDOWN_ASSUMPTIONS, TRANSFER_BATCHES,  # noqa: F401
                           ServerBreakdown, _front_end_ms, identify_online_terms,
                           read_server_breakdown)
from .online_knee import _gpu_loop_per_ms
from .profiles import read_batch_profile, read_batch_profiles
from .results import MeasuredBatchProfile, MeasuredConcurrencySweep
from .sweeps import read_concurrency_sweeps

SIM_BATCHES = 20_000          # batches simulated per concurrency with several instances
SIM_SEED = 2024               # with the concurrency: the same prediction on every call
BAND_BATCHES = 5_000          # batches per concurrency for each end of the band
KNEE_BATCHES = 10_000         # batches per concurrency where the table's knee gives g(b)
TERMS = ONLINE_TERMS.values   # the model of issue 25 / the model of issue 15

_LOOP = (
    "The instances share one queue; a free instance takes every waiting request up to the "
    "batch-size limit (Triton's dynamic batcher without a queue delay).",
    "The front-end time varies from request to request (exponential): without that jitter a "
    "model with several instances locks into batches that never mix, which no real server "
    "shows.",
    "Mean latency is the client's view (front end + queue + batch), N / throughput by "
    "Little's law, as perf_analyzer's average latency is.",
    "One instance: the exact closed-loop chain. Several instances: the closed-loop simulator "
    f"({SIM_BATCHES:,} batches per concurrency, a fixed seed), because no exact method exists "
    "there and the flow-equivalent approximation errs by up to 20 % when the front-end time "
    "is short next to a batch (docs/models/batching.md).",
)
ASSUMPTIONS = (
    "Each model instance runs a batch of b requests in τ[b] = αb + τ0, the line fitted to the "
    "offline batch times 1000·b/throughput (ms) up to the batch where the offline throughput "
    "peaks: past it the offline latency grows by the serial transfer of one large request, "
    "which online requests of one input never pay.",
    "Each request also spends a front-end time outside the instances (sending its input, "
    "handling the reply), overlapped across connections: a delay, not a queue. Its mean: the "
    "offline latency's slope over b ≤ 4, or the breakdown run's client send + network + "
    "client receive.",
    "Several instances share one GPU: the part γ of a batch that holds the GPU runs one batch "
    "at a time, the rest overlaps the other instances' GPU work, so at saturation each "
    "instance's batch takes max(1, Kγ)·τ[b]. γ comes from a breakdown run; without one it is "
    "unknown and the capacity is averaged over γ uniform on [0, 1] (a factor K/(1 + ln K)).",
) + _LOOP
KNEE_ASSUMPTIONS = (
    "The offline latency is L(b) = f + t_x·b + g(b): a round trip f, the serial transfer of "
    "the b inputs t_x per input, and the GPU's batch time g(b) = max(g0, α_g·b), flat while "
    "a batch does not fill the GPU and proportional to the work once it does. Its two lines "
    "(below and above the knee b_s = g0/α_g) give every term; rows past the offline "
    "throughput's peak fit no such form and are left out.",
    "Online each request carries one input: f + t_x is its front-end time, overlapped "
    "across connections (a delay, exponential, not a queue).",
    "The instances share one queue and one GPU: a batch of b first spends max(0, g0 − α_g·b) "
    "overlapping other batches, then α_g·b holding the GPU alone (one saturated batch at a "
    "time, first come first served), so the GPU bounds the throughput at 1/α_g.",
    "Mean latency is the client's view, N / throughput by Little's law.",
    f"Solved by simulation ({KNEE_BATCHES:,} batches per concurrency, a seed fixed by N).",
)
WHOLE_TABLE_ASSUMPTIONS = (
    "Each model instance runs a batch of b requests in τ[b] = αb + τ0, the line fitted to "
    "the offline batch times 1000·b/throughput (ms); it keeps the time to copy the batch's "
    "inputs, which the server still spends per batch online.",
    "Each request also spends a front-end time outside the instances (sending its input over "
    "the network, handling the reply), overlapped across connections: a delay, not a queue. "
    "Its mean is one input's transfer time, read off the offline table as the latency's "
    "slope over the smallest batches (b ≤ 4), where the GPU time is still flat and the "
    "latency grows only by sending one more input.",
    "The instances run independently (no GPU sharing).",
) + _LOOP


@dataclass(frozen=True)
class OnlinePrediction:
    """The predicted online run at each concurrency ``n_clients`` (arrays, same shape)."""

    n_clients: np.ndarray
    throughput_per_s: np.ndarray        # requests per second
    mean_latency_ms: np.ndarray         # client's view: front end + queue + batch
    alpha_ms: float                     # instance batch time per request
    tau0_ms: float                      # instance batch time per batch
    r2: float                           # of the batch-time line on the offline table
    transfer_ms: float                  # mean front-end time per request
    instances: int
    b_max: int | None
    method: str                         # how the closed loop was solved
    label: str                          # which offline table
    assumptions: tuple = ASSUMPTIONS
    terms: str = "separated"            # which model (``TERMS``)
    sharing_factor: float = 1.0         # each instance's batch time × this (GPU sharing)
    gpu_share: float | None = None      # γ where measured (a breakdown run)
    saturation_batch: int | None = None  # the batch of peak offline throughput
    gpu_floor_ms: float | None = None   # g0 of g(b) = max(g0, α·b), where the knee shows it
    knee_batch: float | None = None     # b_s, where the GPU saturates (None: no knee)
    instance_ms_per_input: float = 0.0  # the instance's off-GPU work (breakdown run, knee)
    identified: tuple = ()              # plain sentences: terms read off the data
    assumed: tuple = ()                 # plain sentences: terms assumed
    throughput_low_per_s: np.ndarray | None = None   # γ = 1 (where γ is not measured)
    throughput_high_per_s: np.ndarray | None = None  # γ ≤ 1/K
    throughput_without_knee_per_s: np.ndarray | None = None  # the line's reading (a knee
    #                                   found, no breakdown run to confirm it)

    @property
    def band_fraction(self) -> np.ndarray | None:
        """(high − low) / predicted throughput at each concurrency: how wide the unknown
        GPU share leaves the prediction (None where γ is measured or K = 1)."""
        if self.throughput_low_per_s is None:
            return None
        return (self.throughput_high_per_s - self.throughput_low_per_s) / self.throughput_per_s


def transfer_time_ms(profile: MeasuredBatchProfile) -> float:
    """One input's transfer time (ms): the least-squares slope of the offline batch time
    over the batches b ≤ ``TRANSFER_BATCHES`` (the two smallest batches when fewer),
    floored at 0."""
    return _front_end_ms(profile)


def predict_profile_online(profile: MeasuredBatchProfile, n_clients, *, instances=1,
                           b_max=None, breakdown: ServerBreakdown | None = None,
                           terms: str = "separated", band: bool = False) -> OnlinePrediction:
    """``predict_online`` from a parsed offline profile (see there)."""
    n = np.asarray(n_clients, dtype=float)
    if n.size == 0 or not np.all(np.isfinite(n)) or np.any(n < 1) or np.any(n != np.round(n)):
        raise ValueError("n_clients must be whole numbers ≥ 1")
    if isinstance(instances, bool) or not float(instances).is_integer() or instances < 1:
        raise ValueError(f"instances must be a whole number ≥ 1, got {instances!r}")
    ONLINE_TERMS.check(terms)
    b_max = check_b_max(b_max)
    k = int(instances)
    if terms == "whole_table":
        fit = profile.fit()
        alpha, tau0 = fit.alpha_ms, fit.tau0_ms
        if alpha <= 0:
            raise ValueError(f"the offline batch time does not grow with the batch size "
                             f"(fitted α = {alpha:.4g} ms per request): no batching model "
                             f"fits it")
        tau0, theta = max(tau0, 0.0), transfer_time_ms(profile)
        extra = dict(assumptions=WHOLE_TABLE_ASSUMPTIONS, terms=terms)
        r2, factor = fit.r2, 1.0
    else:
        t = identify_online_terms(profile, k, breakdown)
        alpha, tau0, r2, theta, factor = (t.alpha_ms, t.tau0_ms, t.r2, t.transfer_ms,
                                          t.sharing_factor)
        extra = dict(terms=terms, sharing_factor=factor, gpu_share=t.gpu_share,
                     saturation_batch=t.saturation_batch, identified=t.identified,
                     assumed=t.assumed, gpu_floor_ms=t.gpu_floor_ms, knee_batch=t.knee_batch,
                     instance_ms_per_input=t.instance_ms_per_input)
        if t.gpu_floor_ms is not None:          # the GPU time identified: its own loop
            per_ms = np.array([_gpu_loop_per_ms(
                int(m), alpha, t.gpu_floor_ms, b_max, theta, k, KNEE_BATCHES,
                np.random.default_rng([SIM_SEED, int(m)]), t.instance_ms_per_input)
                for m in n])
            if breakdown is None and t.knee_batch is not None:   # the line's reading too
                line = identify_online_terms(profile, k, use_knee=False)
                s = line.sharing_factor
                extra["throughput_without_knee_per_s"] = 1000.0 * _throughput_per_ms(
                    n, line.alpha_ms * s, line.tau0_ms * s, b_max, line.transfer_ms, k,
                    BAND_BATCHES)[0]
            by = "the GPU's knee" if t.knee_batch is not None else "the breakdown run's terms"
            return OnlinePrediction(
                n_clients=n, throughput_per_s=1000.0 * per_ms,
                mean_latency_ms=n / per_ms, alpha_ms=alpha, tau0_ms=tau0, r2=r2,
                transfer_ms=theta, instances=k, b_max=b_max,
                method=f"simulation of {by} ({KNEE_BATCHES:,} batches per concurrency)",
                label=profile.label, assumptions=KNEE_ASSUMPTIONS
                if t.knee_batch is not None else BREAKDOWN_ASSUMPTIONS, **extra)
        if band and t.gpu_share is None and k > 1:
            extra["throughput_low_per_s"] = 1000.0 * _throughput_per_ms(
                n, alpha * k, tau0 * k, b_max, theta, k, BAND_BATCHES)[0]
            extra["throughput_high_per_s"] = 1000.0 * _throughput_per_ms(
                n, alpha, tau0, b_max, theta, k, BAND_BATCHES)[0]
    per_ms, method = _throughput_per_ms(n, alpha * factor, tau0 * factor, b_max, theta, k)
    per_s = 1000.0 * per_ms
    latency = 1000.0 * n / per_s
    return OnlinePrediction(n_clients=n, throughput_per_s=per_s, mean_latency_ms=latency,
                            alpha_ms=alpha, tau0_ms=tau0, r2=r2, transfer_ms=theta,
                            instances=k, b_max=b_max, method=method, label=profile.label,
                            **extra)


def _throughput_per_ms(n: np.ndarray, alpha, tau0, b_max, theta, instances,
                       batches: int = SIM_BATCHES) -> tuple:
    """Closed-loop throughput (per ms) at each concurrency and how it was found: the exact
    model wherever it is exact, the simulator (seeded by N) where ``closed_loop`` would
    only approximate (several instances with a front-end time)."""
    loop = closed_loop(n, alpha, tau0, b_max=b_max, think_time_ms=theta, instances=instances)
    per_ms = np.array(loop.throughput_per_ms, dtype=float)
    methods = np.broadcast_to(np.asarray(loop.method), n.shape)
    approximate = np.char.startswith(methods.astype(str), "approximation")
    for i in zip(*np.nonzero(approximate)):         # one simulation per concurrency
        run = simulate_closed_loop(
            int(n[i]), alpha, tau0, b_max, theta, instances, n_batches=batches,
            think="exponential", rng=np.random.default_rng([SIM_SEED, int(n[i])]))
        per_ms[i] = run.throughput_per_ms
    used = sorted(set(methods[~approximate].tolist()))
    if approximate.any():
        used.append(f"simulation ({batches:,} batches per concurrency)")
    return per_ms, "; ".join(used)


def predict_online(offline_text, n_clients, *, instances=1, b_max=None, table=None,
                   breakdown_text=None, terms: str = "separated",
                   band: bool = False) -> OnlinePrediction:
    """The online closed-loop run predicted from an offline batch sweep (the file's text).

    ``offline_text``: an offline table ``engine.measured.read_batch_profile`` reads
    (``table``: which one when the file holds several).  ``n_clients``: concurrencies
    (array-like of whole numbers).  ``instances``: model instances sharing the queue;
    ``b_max``: the dynamic batcher's max batch size (None: unlimited).
    ``breakdown_text``: optionally a concurrency-2 perf_analyzer run with its server-side
    breakdown (``read_server_breakdown``), which measures the front end and the GPU share.
    ``terms``: "separated" (issue 25: the terms of ``identify_online_terms``) or
    "whole_table" (issue 15: the line through the whole table, independent instances).
    ``band``: also the throughput at the two ends of the unknown GPU share (γ = 1 and
    γ ≤ 1/K) where no breakdown measures it.  Returns throughput (requests/s) and mean
    latency (ms) at each concurrency, the terms and the assumptions.
    """
    breakdown = None if breakdown_text is None else read_server_breakdown(breakdown_text)
    return predict_profile_online(read_batch_profile(offline_text, table=table), n_clients,
                                  instances=instances, b_max=b_max, breakdown=breakdown,
                                  terms=terms, band=band)


@dataclass(frozen=True)
class OnlineComparison:
    """Predicted against measured, row by row (errors: predicted / measured − 1)."""

    label: str                          # the online table
    concurrency: np.ndarray
    measured_throughput_per_s: np.ndarray
    predicted_throughput_per_s: np.ndarray
    throughput_error: np.ndarray
    measured_latency_ms: np.ndarray
    predicted_latency_ms: np.ndarray
    latency_error: np.ndarray
    prediction: OnlinePrediction

    median_abs_throughput_error = property(lambda self: _abs_median(self.throughput_error),
        doc="Median |throughput error| over the concurrencies.")
    max_abs_throughput_error = property(lambda self: _abs_max(self.throughput_error),
        doc="Max |throughput error| over the concurrencies.")
    median_abs_latency_error = property(lambda self: _abs_median(self.latency_error),
        doc="Median |latency error| over the concurrencies.")
    max_abs_latency_error = property(lambda self: _abs_max(self.latency_error),
        doc="Max |latency error| over the concurrencies.")

    @property
    def worst_throughput(self) -> tuple[float, float]:
        """(largest |throughput error|, the concurrency where it is)."""
        return _worst(self.concurrency, self.throughput_error)

    @property
    def worst_latency(self) -> tuple[float, float]:
        """(largest |mean latency error|, the concurrency where it is)."""
        return _worst(self.concurrency, self.latency_error)


def _abs_median(errors) -> float:
    return float(np.median(np.abs(errors)))


def _abs_max(errors) -> float:
    return float(np.max(np.abs(errors)))


def _worst(n, errors) -> tuple[float, float]:
    """(largest |error|, the concurrency where it is; the first on a tie)."""
    size = np.abs(np.asarray(errors, dtype=float))
    i = int(np.argmax(size))
    return float(size[i]), float(np.asarray(n)[i])


def compare_profile_online(profile: MeasuredBatchProfile, sweep: MeasuredConcurrencySweep,
                           *, instances=None, b_max=None, breakdown=None,
                           terms: str = "separated", band: bool = False) -> OnlineComparison:
    """Predict ``sweep`` (its concurrencies, and its model instances and max batch size
    unless given) from ``profile`` and compare row by row.  The prediction sees the
    sweep's concurrencies, instances and b_max only, never its measured numbers."""
    instances = instances if instances is not None else (sweep.model_instances or 1)
    b_max = b_max if b_max is not None else sweep.max_batch_size
    pred = predict_profile_online(profile, np.array(sweep.concurrency, dtype=float),
                                  instances=instances, b_max=b_max, breakdown=breakdown,
                                  terms=terms, band=band)
    return OnlineComparison(
        label=sweep.label, concurrency=sweep.concurrency,
        measured_throughput_per_s=sweep.throughput_per_s,
        predicted_throughput_per_s=pred.throughput_per_s,
        throughput_error=pred.throughput_per_s / sweep.throughput_per_s - 1.0,
        measured_latency_ms=sweep.mean_latency_ms, predicted_latency_ms=pred.mean_latency_ms,
        latency_error=pred.mean_latency_ms / sweep.mean_latency_ms - 1.0, prediction=pred)


def compare_online(offline_text, online_text, *, instances=None, b_max=None,
                   breakdown_text=None, terms: str = "separated",
                   band: bool = False) -> tuple[OnlineComparison, ...]:
    """Every online table of ``online_text`` beside the prediction from the offline table of
    the same deployment in ``offline_text`` (matched on the GPU and configuration; the
    online table's model instances and max batch size unless given).  ``ValueError``
    when no table of one file matches a table of the other.  ``breakdown_text``,
    ``terms``, ``band``: as ``predict_online``."""
    profiles = read_batch_profiles(offline_text)
    sweeps = read_concurrency_sweeps(online_text)
    breakdown = None if breakdown_text is None else read_server_breakdown(breakdown_text)
    out = []
    for sweep in sweeps:
        profile = _matching(profile_list=profiles, sweep=sweep)
        if profile is not None:
            out.append(compare_profile_online(profile, sweep, instances=instances, b_max=b_max,
                                              breakdown=breakdown, terms=terms, band=band))
    if not out:
        raise ValueError("no online table matches an offline table: expected the same GPU "
                         f"in both (offline: {', '.join(p.label for p in profiles)}; online: "
                         f"{', '.join(s.label for s in sweeps)})")
    return tuple(out)


def _matching(profile_list, sweep):
    """The offline profile of the same deployment as ``sweep``: the same label once the
    instance count is set aside, else the only profile."""
    key = _deployment(sweep.label)
    for p in profile_list:
        if _deployment(p.label) == key:
            return p
    return profile_list[0] if len(profile_list) == 1 else None


def _deployment(label: str) -> str:
    parts = [p.strip() for p in label.split("·")]
    return " · ".join(p for p in parts if "instance" not in p.lower())


# ---------------------------------------------------------------- Model Analyzer: p99 too

MA_ASSUMPTIONS = (
    "One model instance (the file's Instance Group column is not reliable) whose batch of b "
    "takes τ[b] = αb + τ0, the line fitted to the peak throughput at each max batch size.",
    "No time outside the server (perf_analyzer's client on the same machine): N requests "
    "always wait or run, so the server settles into a cycle of full batches of min(N, b_max); "
    "with N = k·b + r, a share r/b of the requests waits k + 1 batches and the rest k. The "
    "model's p99 is exact for that cycle.",
)


@dataclass(frozen=True)
class ModelAnalyzerComparison:
    """One Model Analyzer configuration's sweep: measured against the closed-loop model
    (errors: model / measured − 1)."""

    label: str                          # the model configuration
    max_batch_size: int | None
    concurrency: np.ndarray
    measured_throughput_per_s: np.ndarray
    predicted_throughput_per_s: np.ndarray
    throughput_error: np.ndarray
    measured_p99_ms: np.ndarray
    predicted_p99_ms: np.ndarray
    p99_error: np.ndarray
    alpha_ms: float
    tau0_ms: float
    assumptions: tuple = MA_ASSUMPTIONS

    median_abs_throughput_error = property(lambda self: _abs_median(self.throughput_error),
        doc="Median |throughput error| over the concurrencies.")
    max_abs_throughput_error = property(lambda self: _abs_max(self.throughput_error),
        doc="Max |throughput error| over the concurrencies.")
    median_abs_p99_error = property(lambda self: _abs_median(self.p99_error),
        doc="Median |p99 error| over the concurrencies.")
    max_abs_p99_error = property(lambda self: _abs_max(self.p99_error),
        doc="Max |p99 error| over the concurrencies.")

    @property
    def worst_throughput(self) -> tuple[float, float]:
        """(largest |throughput error|, the concurrency where it is)."""
        return _worst(self.concurrency, self.throughput_error)

    @property
    def worst_p99(self) -> tuple[float, float]:
        """(largest |p99 error|, the concurrency where it is)."""
        return _worst(self.concurrency, self.p99_error)


def cycle_latency_quantile_ms(n_clients, alpha_ms, tau0_ms, b_max, q):
    """The ``q`` quantile of request latency (ms) in the cycle of a closed loop with no
    time outside the server and one instance: batches of b = min(N, b_max); with
    N = k·b + r (0 ≤ r < b) a share r/b of the requests waits k + 1 batches, the rest k
    (each batch's b requests rejoin the back of the FIFO queue together)."""
    n = np.asarray(n_clients, dtype=float)
    b = n if b_max is None else np.minimum(n, b_max)
    k, r = np.floor_divide(n, b), np.remainder(n, b)
    tau = alpha_ms * b + tau0_ms
    return np.where(r / b > 1.0 - q, k + 1.0, k) * tau


def compare_model_analyzer(text, *, gpu_metrics_text=None) -> tuple[ModelAnalyzerComparison, ...]:
    """Each configuration of a Model Analyzer ``metrics-model-inference.csv`` against the
    closed-loop model built from the same file's batch profile (its peaks): throughput
    and p99 at every measured concurrency (``MA_ASSUMPTIONS``)."""
    profile = read_batch_profile(text, gpu_metrics_text=gpu_metrics_text)
    if profile.source_format != "model_analyzer":
        raise ValueError(f"expected a Model Analyzer metrics-model-inference.csv, got a "
                         f"{profile.source_format} table")
    fit = profile.fit()
    alpha, tau0 = fit.alpha_ms, max(fit.tau0_ms, 0.0)
    if alpha <= 0:
        raise ValueError(f"the batch time does not grow with the max batch size (fitted "
                         f"α = {alpha:.4g} ms per request): no batching model fits it")
    out = []
    for sweep in read_concurrency_sweeps(text):
        if sweep.p99_latency_ms is None:
            continue
        n = sweep.concurrency
        per_s = 1000.0 * np.asarray(closed_loop(n, alpha, tau0, b_max=sweep.max_batch_size)
                                    .throughput_per_ms, dtype=float)
        p99 = cycle_latency_quantile_ms(n, alpha, tau0, sweep.max_batch_size, 0.99)
        out.append(ModelAnalyzerComparison(
            label=sweep.label, max_batch_size=sweep.max_batch_size, concurrency=n,
            measured_throughput_per_s=sweep.throughput_per_s, predicted_throughput_per_s=per_s,
            throughput_error=per_s / sweep.throughput_per_s - 1.0,
            measured_p99_ms=sweep.p99_latency_ms, predicted_p99_ms=p99,
            p99_error=p99 / sweep.p99_latency_ms - 1.0, alpha_ms=alpha, tau0_ms=tau0))
    return tuple(out)
