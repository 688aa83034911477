"""Which tool wrote a CSV, told from its header (column names compared loosely:
case, surrounding spaces and inner spaces vs underscores ignored).

``_detect`` returns one of the kinds below, or None.  The readers map each kind to a
parser or to a message saying which reader takes that file.
"""
from __future__ import annotations

from .parsing import _first_line, _header, _normal, _shown_header

# column names each kind needs (loose names), in the order tried
_MA_INFERENCE = ("Model Config Path", "Concurrency", "Max Batch Size", "Throughput (infer/sec)")
_MA_GPU = ("Model Config Path", "Concurrency", "GPU Power Usage (W)")
_PERF_ANALYZER = ("Concurrency", "Inferences/Second")
_TRITON_DLE = ("gpu", "backend", "precision", "model_instances", "inferences_per_second")
_DLE_BATCH = ("gpu", "table", "batch_size")
_AZURE = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")

# accepted names of the plain CSVs' columns (the batching page's upload names plus times)
BATCH_SIZE_NAMES = ("batch_size", "batch", "b")
THROUGHPUT_NAMES = ("throughput_per_s", "throughput", "throughput_images_per_s",
                    "images_per_s", "jobs_per_s")
BATCH_TIME_NAMES = ("batch_time_ms", "latency_ms")
POWER_NAMES = ("power_w", "power", "board_power_w", "watts")
P99_NAMES = ("p99_latency_ms", "p99_ms")
ARRIVAL_NAMES = ("timestamp_s", "timestamp", "arrival_s", "arrival", "time_s")
INPUT_TOKEN_NAMES = ("input_tokens", "prompt_tokens", "context_tokens")
OUTPUT_TOKEN_NAMES = ("output_tokens", "generated_tokens", "completion_tokens")

DESCRIPTIONS = {
    "model_analyzer": "Model Analyzer metrics-model-inference.csv (Model Config Path, "
                      "Concurrency, Max Batch Size, Throughput (infer/sec), p99 Latency (ms))",
    "model_analyzer_gpu": "Model Analyzer metrics-model-gpu.csv (Model Config Path, "
                          "Concurrency, GPU Power Usage (W))",
    "perf_analyzer": "perf_analyzer -f CSV (Concurrency, Inferences/Second, Client Send, ..., "
                     "p99 latency; times in µs)",
    "triton_dle_table": "DeepLearningExamples Triton table (gpu, backend, precision, "
                        "model_instances, client_batch_size or batch or "
                        "concurrent_client_requests, inferences_per_second, ..._ms)",
    "dle_batch_table": "DeepLearningExamples by-batch table (gpu, table, batch_size, a "
                       "throughput column, latency columns in ms)",
    "plain_csv": "plain CSV: batch_size plus throughput_per_s (per s) or batch_time_ms (ms), "
                 "optional power_w",
    "azure_llm_csv": "Azure LLM trace CSV (TIMESTAMP, ContextTokens, GeneratedTokens)",
    "plain_trace_csv": "plain trace CSV: timestamp_s (s) and optional input_tokens, "
                       "output_tokens",
}


def _has(header, names) -> bool:
    loose = {_normal(h) for h in header}
    return all(_normal(n) in loose for n in names)


def _has_any(header, names) -> bool:
    loose = {_normal(h) for h in header}
    return any(_normal(n) in loose for n in names)


def _detect(header) -> str | None:
    """The kind of CSV whose header is ``header`` (a tuple of names), or None."""
    if _has(header, _MA_INFERENCE):
        return "model_analyzer"
    if _has(header, _MA_GPU):
        return "model_analyzer_gpu"
    if _has(header, _PERF_ANALYZER):
        return "perf_analyzer"
    if _has(header, _TRITON_DLE):
        return "triton_dle_table"
    if _has(header, _DLE_BATCH):
        return "dle_batch_table"
    if _has(header, _AZURE):
        return "azure_llm_csv"
    if _has_any(header, BATCH_SIZE_NAMES) and _has_any(header, THROUGHPUT_NAMES
                                                       + BATCH_TIME_NAMES):
        return "plain_csv"
    if _has_any(header, ARRIVAL_NAMES):
        return "plain_trace_csv"
    return None


def _expected(kinds) -> str:
    """The formats ``kinds`` in words, for an error message."""
    return "; ".join(DESCRIPTIONS[k] for k in kinds)


def _kind(text: str, kinds: tuple, elsewhere: dict) -> str:
    """The format of ``text`` among ``kinds``; ``ValueError`` naming line 1's problem
    and the expected formats otherwise."""
    number, line = _first_line(text)
    if line.lstrip()[:1] in ("{", "["):
        raise ValueError(f"line {number}: JSON (a vllm bench result or a JSON-lines trace: "
                         f"read_vllm_bench, read_trace), not a CSV table; expected "
                         f"{_expected(kinds)}")
    number, header = _header(text)
    kind = _detect(header)
    if kind in kinds:
        return kind
    if kind in elsewhere:
        raise ValueError(f"line {number}: {elsewhere[kind]}")
    raise ValueError(f"line {number}: unknown columns ({_shown_header(header)}); expected "
                     f"one of these formats: {_expected(kinds)}")
