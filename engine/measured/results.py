"""What the readers return: frozen results with units in their names.

Arrays in these results are read-only copies.  ``notes`` holds every assumption a
reader made and every row it dropped, in plain words; ``label`` names the table read
and ``tables`` every table of the file (a file may hold several: one per GPU and
precision, one per model configuration).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..fit import BatchProfileFit, fit_batch_profile


@dataclass(frozen=True)
class MeasuredBatchProfile:
    """Time of one batch by (server) batch size, as measured by a tool.

    ``batch_size``: the server's batch b (increasing); ``batch_time_ms``: τ[b], the
    time of one batch in ms (1000·b / throughput at that batch); ``power_w``: board
    power in W at each batch (or None); ``p99_latency_ms``: the tool's p99 request
    latency in ms at each batch (or None).  ``source_format`` is one of
    "model_analyzer", "perf_analyzer", "dle_batch_table", "triton_dle_table",
    "plain_csv".
    """

    batch_size: np.ndarray
    batch_time_ms: np.ndarray
    power_w: np.ndarray | None
    p99_latency_ms: np.ndarray | None
    source_format: str
    notes: tuple
    label: str
    tables: tuple

    @property
    def throughput_per_s(self) -> np.ndarray:
        """Jobs per second at each batch size: 1000·b / τ[b] (Inoue 2021, eq 26)."""
        return 1000.0 * self.batch_size / self.batch_time_ms

    def fit(self) -> BatchProfileFit:
        """τ[b] = αb + τ0 (ms) and, with power, c[b] = βb + c0 (J): exactly
        ``engine.fit.fit_batch_profile(batch_size, throughput_per_s, power_w)``."""
        return fit_batch_profile(self.batch_size, self.throughput_per_s, self.power_w)


@dataclass(frozen=True)
class MeasuredConcurrencySweep:
    """A closed-loop run: N clients, each sending its next request when the last returns.

    ``concurrency``: N (increasing); ``throughput_per_s``: inferences per second;
    ``mean_latency_ms``, ``p99_latency_ms`` (or None): request latency in ms;
    ``breakdown_ms``: the mean latency's components in ms (client_send,
    network_server_send_recv, server_queue, server_compute_input,
    server_compute_infer, server_compute_output, client_recv), or None;
    ``model_instances`` and ``max_batch_size`` of the server where the file says;
    ``client_batch_size``: inputs per request.
    """

    concurrency: np.ndarray
    throughput_per_s: np.ndarray
    mean_latency_ms: np.ndarray
    p99_latency_ms: np.ndarray | None
    breakdown_ms: dict | None
    model_instances: int | None
    max_batch_size: int | None
    client_batch_size: int
    source_format: str
    notes: tuple
    label: str
    tables: tuple


@dataclass(frozen=True)
class RequestTrace:
    """Arrival times of requests (s, sorted, the first at 0) and their token counts.

    ``input_tokens`` (prompt) and ``output_tokens`` (generated) are integer arrays
    aligned with ``arrival_s``, or None where the file has none.  ``source_format`` is
    one of "azure_llm_csv", "mooncake_jsonl", "plain_csv".
    """

    arrival_s: np.ndarray
    input_tokens: np.ndarray | None
    output_tokens: np.ndarray | None
    source_format: str
    notes: tuple

    @property
    def n_requests(self) -> int:
        """Number of requests in the trace."""
        return int(self.arrival_s.size)

    @property
    def duration_s(self) -> float:
        """Time from the first arrival to the last, s."""
        return float(self.arrival_s[-1])

    @property
    def mean_rate_per_s(self) -> float:
        """Mean arrival rate, requests/s: (n − 1) / duration, the inverse of the mean
        inter-arrival time (inf when every request arrives at one instant)."""
        gaps = self.n_requests - 1
        return float(gaps / self.duration_s) if self.duration_s > 0 else float("inf")


@dataclass(frozen=True)
class VllmBenchResult:
    """Summary of one ``vllm bench serve --save-result`` run (times in ms, rates per s).

    ``max_concurrency``: the client's cap on requests in flight (None: no cap);
    ``completed`` requests; ``request_throughput_per_s``; time to first token
    (``*_ttft_ms``) and time per output token after the first (``*_tpot_ms``),
    mean, median and p99; inter-token latency (``*_itl_ms``); token totals;
    ``duration_s`` of the run; ``request_rate_per_s`` offered (inf: all at once);
    ``percentiles_ms``: every ``{mean,median,std,pNN}_{ttft,tpot,itl,e2el}_ms`` of the file;
    ``date``: the file's ``date`` string as written (e.g. "20250708-103711"), or None.
    """

    max_concurrency: int | None
    completed: int
    request_throughput_per_s: float
    mean_ttft_ms: float
    p99_ttft_ms: float
    mean_tpot_ms: float
    p99_tpot_ms: float
    total_input_tokens: int
    total_output_tokens: int
    median_ttft_ms: float | None
    median_tpot_ms: float | None
    mean_itl_ms: float | None
    median_itl_ms: float | None
    p99_itl_ms: float | None
    duration_s: float | None
    num_prompts: int | None
    request_rate_per_s: float | None
    output_throughput_per_s: float | None
    model_id: str | None
    percentiles_ms: dict
    notes: tuple
    date: str | None = None


_REQUEST_COLUMNS = ("arrival_s", "input_tokens", "output_tokens", "ttft_ms", "e2e_ms",
                    "tpot_ms", "first_token_s", "finish_s")


@dataclass(frozen=True)
class RequestRecords:
    """A measured serving run, request by request, sorted by send time.

    ``arrival_s``: when each request was sent, s after the first send (the first is 0;
    NaN for every request where the file saved no send times); ``input_tokens``
    (prompt) and ``output_tokens`` (generated), int64; ``ttft_ms``: time to the first
    token; ``e2e_ms``: send to last token; ``tpot_ms``: (e2e − ttft)/(output − 1) for
    outputs of 2 tokens or more, NaN for one token (vLLM's convention);
    ``first_token_s`` = arrival + ttft and ``finish_s`` = arrival + e2e, s after the
    first send.  ``source`` is one of "distserve", "vllm-bench-detailed", "csv";
    ``summary``: the file's own summary numbers by key (may be empty).
    """

    arrival_s: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    ttft_ms: np.ndarray
    e2e_ms: np.ndarray
    tpot_ms: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    source: str
    summary: dict
    notes: tuple

    @property
    def n_requests(self) -> int:
        """Number of requests."""
        return int(self.arrival_s.size)

    def to_frame(self):
        """The requests as a pandas DataFrame, one row each, columns ``arrival_s``,
        ``input_tokens``, ``output_tokens``, ``ttft_ms``, ``e2e_ms``, ``tpot_ms``,
        ``first_token_s``, ``finish_s`` (copies: the frame may be edited)."""
        import pandas as pd
        return pd.DataFrame({name: np.array(getattr(self, name))
                             for name in _REQUEST_COLUMNS})
