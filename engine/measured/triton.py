"""Triton perf_analyzer results: its own ``-f`` CSV (times in µs) and the tables the
NVIDIA DeepLearningExamples publish from it (times in ms, one row per configuration
and batch or concurrency).

perf_analyzer drives the server in a closed loop: N requests in flight, each client
sending its next request when the last returns.  Its latency breakdown (client send,
network, server queue, compute input/infer/output, client receive) sums to the mean
request latency.
"""
from __future__ import annotations

import numpy as np

from .parsing import _frozen, _groups, _no_duplicates, _read_csv, _Table
from .results import MeasuredBatchProfile, MeasuredConcurrencySweep

BREAKDOWN = ("client_send", "network_server_send_recv", "server_queue",
             "server_compute_input", "server_compute_infer", "server_compute_output",
             "client_recv")
# perf_analyzer -f column of each breakdown component (µs)
_PA_BREAKDOWN = ("Client Send", "Network+Server Send/Recv", "Server Queue",
                 "Server Compute Input", "Server Compute Infer", "Server Compute Output",
                 "Client Recv")
US_PER_MS = 1000.0


def _positive_times(values: np.ndarray, what: str) -> np.ndarray:
    """``values`` unless one is not finite and positive (a sum of huge cells)."""
    if not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(f"{what}: values too extreme (the result is not a finite positive time)")
    return values


def _perf_analyzer_columns(table: _Table) -> dict:
    """perf_analyzer -f columns, sorted by concurrency; times converted µs -> ms."""
    jc = table.index("Concurrency")
    conc = table.numbers(jc, whole=True)
    order = np.argsort(conc, kind="stable")
    _no_duplicates(conc[order], table, order, jc, "concurrency")
    thr = table.numbers(table.index("Inferences/Second"))
    jp = table.index("p99 latency", required=False)
    parts = [table.index(n, required=False) for n in _PA_BREAKDOWN]
    breakdown = None
    if all(j is not None for j in parts):
        breakdown = {k: table.numbers(j, minimum="non-negative")[order] / US_PER_MS
                     for k, j in zip(BREAKDOWN, parts)}
    return dict(concurrency=conc[order], throughput=thr[order],
                p99=None if jp is None else table.numbers(jp)[order] / US_PER_MS,
                breakdown=breakdown)


def _perf_analyzer_profile(text: str) -> list:
    """perf_analyzer -f CSV as a batch profile: concurrency N taken as a batch of N."""
    cols = _perf_analyzer_columns(_read_csv(text))
    b, thr = cols["concurrency"], cols["throughput"]
    if np.unique(b).size < 2:
        raise ValueError("perf_analyzer CSV: expected at least 2 concurrencies to fit τ[b], "
                         f"got {b.size}")
    with np.errstate(all="ignore"):
        tau = _positive_times(1000.0 * (b / thr), "Inferences/Second")
    notes = ("the file holds no batch size: each concurrency N is taken as a batch of N "
             "(a closed loop with one model instance and dynamic batching, where every "
             "batch holds the N requests in flight); τ[N] = 1000·N / throughput (with several "
             "model instances, or batches split by a queue delay, this over-states τ)",
             "p99_latency_ms: perf_analyzer's p99 latency, µs -> ms")
    return [MeasuredBatchProfile(
        batch_size=_frozen(b), batch_time_ms=_frozen(tau), power_w=None,
        p99_latency_ms=None if cols["p99"] is None else _frozen(cols["p99"]),
        source_format="perf_analyzer", notes=notes if cols["p99"] is not None else notes[:1],
        label="perf_analyzer", tables=())]


def _perf_analyzer_sweep(text: str) -> list:
    """perf_analyzer -f CSV as one concurrency sweep (µs -> ms)."""
    cols = _perf_analyzer_columns(_read_csv(text))
    conc, thr, parts = cols["concurrency"], cols["throughput"], cols["breakdown"]
    notes = ["times converted from µs to ms",
             "client_batch_size 1 assumed: the -f CSV does not record perf_analyzer's -b",
             "model_instances and max_batch_size unknown: the file does not record them"]
    with np.errstate(all="ignore"):
        if parts is not None:
            mean = sum(parts.values())
            notes.insert(0, "mean_latency_ms: the sum of the 7 latency components")
        else:
            mean = 1000.0 * conc / thr
            notes.insert(0, "mean_latency_ms by Little's law, 1000·N/throughput (the file "
                            "has no latency breakdown)")
    mean = _positive_times(mean, "mean latency")
    return [MeasuredConcurrencySweep(
        concurrency=_frozen(conc), throughput_per_s=_frozen(thr), mean_latency_ms=_frozen(mean),
        p99_latency_ms=None if cols["p99"] is None else _frozen(cols["p99"]),
        breakdown_ms=None if parts is None else {k: _frozen(v) for k, v in parts.items()},
        model_instances=None, max_batch_size=None, client_batch_size=1,
        source_format="perf_analyzer", notes=tuple(notes), label="perf_analyzer", tables=())]


# ------------------------------------------------------------ DeepLearningExamples tables

_CONFIG = ("gpu", "backend", "backend_accelerator", "precision", "model_format",
           "model_instances")


def _config_label(values: dict) -> str:
    """'NVIDIA A40 · ONNX Runtime + TensorRT · FP16 · ONNX · 2 instances'."""
    backend = values["backend"]
    if values.get("backend_accelerator") not in (None, "", "-"):
        backend += " + " + values["backend_accelerator"]
    n = values["model_instances"]
    parts = [values["gpu"], backend, values["precision"], values.get("model_format"),
             f"{n} instance{'s' if n != '1' else ''}"]
    return " · ".join(p for p in parts if p)


def _dle_configs(table: _Table, extra: dict | None = None) -> dict:
    """Rows of each configuration (label -> row indices), in order of appearance;
    ``extra`` (name -> column) adds columns to the label ('· max_batch_size 128')."""
    j = {k: table.index(k, required=k in ("gpu", "backend", "precision", "model_instances"))
         for k in _CONFIG}
    table.numbers(j["model_instances"], whole=True)
    cells = {k: table.strings(v) if v is not None else None for k, v in j.items()}
    more = {k: table.strings(v) for k, v in (extra or {}).items()}
    labels = [_config_label({k: (c[i] if c is not None else None) for k, c in cells.items()})
              + "".join(f" · {k} {c[i]}" for k, c in more.items())
              for i in range(len(table.rows))]
    return _groups(labels)


def _dle_profiles(text: str) -> list:
    """DLE Triton offline table: one profile per configuration, the client batch at
    concurrency 1 as the batch."""
    table = _read_csv(text)
    jb = table.index(("client_batch_size", "batch"), required=False)
    if jb is None:
        raise ValueError(f"line {table.header_line}: no client_batch_size or batch column: "
                         f"this is an online (concurrency) table; read it with "
                         f"read_concurrency_sweep")
    batch = table.numbers(jb, whole=True)
    thr = table.numbers(table.index("inferences_per_second"))
    jp = table.index("p99_latency_ms", required=False)
    p99 = table.numbers(jp) if jp is not None else None
    jn = table.index(("concurrency", "concurrent_client_requests"), required=False)
    conc = table.numbers(jn, whole=True) if jn is not None else np.ones(batch.size)
    dropped = int(np.sum(conc != 1))
    out = []
    for label, rows in _dle_configs(table).items():
        notes = ["batch size = the client batch at concurrency 1 (static batching: one "
                 "request of b inputs at a time); τ[b] = 1000·b / inferences_per_second",
                 "this batch time includes sending the b inputs over the network and "
                 "receiving the outputs, not only the GPU's compute"]
        if dropped:
            notes.append(f"{int(np.sum(conc[rows] != 1))} rows at a concurrency other than 1 "
                         f"dropped (the batch is the client batch at concurrency 1 only)")
        rows = rows[conc[rows] == 1]
        rows = rows[np.argsort(batch[rows], kind="stable")]
        _no_duplicates(batch[rows], table, rows, jb, "batch size")
        if rows.size < 2:
            raise ValueError(f"{label}: expected at least 2 batch sizes at concurrency 1, "
                             f"got {rows.size}")
        with np.errstate(all="ignore"):
            tau = _positive_times(1000.0 * (batch[rows] / thr[rows]), "inferences_per_second")
        out.append(MeasuredBatchProfile(
            batch_size=_frozen(batch[rows]), batch_time_ms=_frozen(tau), power_w=None,
            p99_latency_ms=None if p99 is None else _frozen(p99[rows]),
            source_format="triton_dle_table", notes=tuple(notes), label=label, tables=()))
    return out


def _dle_sweeps(text: str) -> list:
    """DLE Triton online table: one concurrency sweep per configuration (times in ms)."""
    table = _read_csv(text)
    jn = table.index("concurrent_client_requests", required=False)
    if jn is None:
        jn = table.index("concurrency", required=False)
        if jn is None or np.unique(table.numbers(jn, whole=True)).size < 2:
            raise ValueError(f"line {table.header_line}: no concurrency sweep (no "
                             f"concurrent_client_requests column, one concurrency only): "
                             f"this is an offline batch table; read it with "
                             f"read_batch_profile")
    conc = table.numbers(jn, whole=True)
    thr = table.numbers(table.index("inferences_per_second"))
    jcap = table.index("max_batch_size", required=False)
    caps = table.numbers(jcap, whole=True) if jcap is not None else None
    jcb = table.index(("client_batch_size", "batch"), required=False)
    client = table.numbers(jcb, whole=True) if jcb is not None else np.ones(conc.size)
    jp, ja = (table.index(n, required=False) for n in ("p99_latency_ms", "avg_latency_ms"))
    parts = {k: table.index(k + "_ms", required=False) for k in BREAKDOWN}
    parts = ({k: table.numbers(j, minimum="non-negative") for k, j in parts.items()}
             if all(j is not None for j in parts.values()) else None)
    extra = {k: j for k, j in (("max_batch_size", jcap), ("client_batch_size", jcb))
             if j is not None}
    instances = table.numbers(table.index("model_instances"), whole=True)
    extra = {k: j for k, j in extra.items() if np.unique(table.strings(j)).size > 1}
    out = []
    for label, rows in _dle_configs(table, extra).items():
        rows = rows[np.argsort(conc[rows], kind="stable")]
        _no_duplicates(conc[rows], table, rows, jn, "concurrency")
        notes = []
        with np.errstate(all="ignore"):
            if ja is not None:
                mean = table.numbers(ja)[rows]
                notes.append("mean_latency_ms: the table's avg_latency_ms")
            elif parts is not None:
                mean = sum(v[rows] for v in parts.values())
                notes.append("mean_latency_ms: the sum of the 7 latency components")
            else:
                mean = 1000.0 * conc[rows] * client[rows] / thr[rows]
                notes.append("mean_latency_ms by Little's law (the table has no latency)")
        if jcb is None:
            notes.append("client_batch_size 1: the table has no client batch column (the "
                         "DeepLearningExamples online runs send one input per request)")
        out.append(MeasuredConcurrencySweep(
            concurrency=_frozen(conc[rows]), throughput_per_s=_frozen(thr[rows]),
            mean_latency_ms=_frozen(_positive_times(mean, "mean latency")),
            p99_latency_ms=None if jp is None else _frozen(table.numbers(jp)[rows]),
            breakdown_ms=None if parts is None else {k: _frozen(v[rows])
                                                     for k, v in parts.items()},
            model_instances=int(instances[rows[0]]),
            max_batch_size=None if caps is None else int(caps[rows[0]]),
            client_batch_size=int(client[rows[0]]), source_format="triton_dle_table",
            notes=tuple(notes), label=label, tables=()))
    return out
