"""Triton Model Analyzer exports: ``metrics-model-inference.csv`` (and its
``metrics-model-gpu.csv`` for power).

Model Analyzer runs a closed-loop concurrency sweep (perf_analyzer) for each model
configuration it tries; a configuration's server cap ``Max Batch Size`` B is the batch
the server forms, the client's ``Batch`` is the inputs per request.  At saturation the
server runs full batches back to back, so the peak throughput X of a sweep gives the
time of one batch of B: τ[B] = 1000·B / X ms.  A sweep still rising at its last
concurrency has not saturated: it is dropped, with a note.
"""
from __future__ import annotations

import numpy as np

from .parsing import _decode, _frozen, _groups, _no_duplicates, _read_csv, _Table
from .results import MeasuredBatchProfile, MeasuredConcurrencySweep

RISE_TOLERANCE = 0.05     # a last step raising throughput by more: not saturated


def _columns(table: _Table) -> dict:
    """The inference CSV's columns, checked (concurrency, batches whole and positive)."""
    n = len(table.rows)
    j = {key: table.index(name, required=False) for key, name in (
        ("model", "Model"), ("batch", "Batch"), ("p99", "p99 Latency (ms)"),
        ("group", "Instance Group"))}
    j_concurrency, j_max_batch = table.index("Concurrency"), table.index("Max Batch Size")
    cols = dict(
        config=table.strings(table.index("Model Config Path")),
        concurrency=table.numbers(j_concurrency, whole=True),
        max_batch=table.numbers(j_max_batch, whole=True),
        throughput=table.numbers(table.index("Throughput (infer/sec)")),
        model=table.strings(j["model"]) if j["model"] is not None else ["model"] * n,
        batch=(table.numbers(j["batch"], whole=True) if j["batch"] is not None
               else np.ones(n)),
        p99=table.numbers(j["p99"]) if j["p99"] is not None else None,
        group=table.strings(j["group"]) if j["group"] is not None else None,
        j_max_batch=j_max_batch, j_concurrency=j_concurrency)
    return cols


def _sweeps(table: _Table, cols: dict) -> list:
    """One dict per (model, config, client batch): its rows sorted by concurrency."""
    keys = list(zip(cols["model"], cols["config"], cols["batch"]))
    out = []
    for (model, config, batch), rows in _groups(keys).items():
        rows = rows[np.argsort(cols["concurrency"][rows], kind="stable")]
        _no_duplicates(cols["concurrency"][rows], table, rows, cols["j_concurrency"],
                       f"concurrency of {config}")
        caps = cols["max_batch"][rows]
        if np.any(caps != caps[0]):
            i = int(rows[np.flatnonzero(caps != caps[0])[0]])
            raise ValueError(f"{table.where(i, cols['j_max_batch'])}: expected one Max Batch "
                             f"Size per model config ({config} has {caps[0]:g} and "
                             f"{cols['max_batch'][i]:g})")
        out.append(dict(model=model, config=config, batch=int(batch), rows=rows,
                        max_batch=int(caps[0])))
    return out


def _not_saturated(sweep: dict, cols: dict) -> str | None:
    """Why a sweep stopped before saturating (None if it saturated)."""
    conc, thr = cols["concurrency"][sweep["rows"]], cols["throughput"][sweep["rows"]]
    if np.argmax(thr) != thr.size - 1:
        return None
    head = f"dropped {sweep['config']} (max batch size {sweep['max_batch']})"
    if thr.size == 1:
        return (f"{head}: it ran one concurrency ({conc[0]:g}) only, which cannot show "
                f"that throughput saturated")
    rise = thr[-1] / thr[-2] - 1.0
    if rise <= RISE_TOLERANCE:
        return None
    return (f"{head}: its throughput was still rising at its highest concurrency "
            f"{conc[-1]:g} ({thr[-2]:g} -> {thr[-1]:g} infer/s, +{100 * rise:.0f} % over the "
            f"last step), so its peak is not the rate of full batches")


def _power(gpu_text, cols: dict, peaks: list) -> tuple:
    """GPU power (W) at each peak row, joined on (Model Config Path, Concurrency, Batch),
    summed over GPUs; (None, note) when a peak row has no power."""
    table = _read_csv(_decode(gpu_text, "gpu_metrics_text"), "gpu_metrics_text")
    try:
        config = table.strings(table.index("Model Config Path"))
        conc = table.numbers(table.index("Concurrency"), whole=True)
        jb = table.index("Batch", required=False)
        batch = table.numbers(jb, whole=True) if jb is not None else np.ones(conc.size)
        watts = table.numbers(table.index("GPU Power Usage (W)"), minimum="non-negative")
    except ValueError as err:
        raise ValueError(f"gpu_metrics_text: {err}") from None
    totals: dict = {}
    gpus: dict = {}
    for key, w in zip(zip(config, conc, batch), watts):
        totals[key] = totals.get(key, 0.0) + float(w)
        gpus[key] = gpus.get(key, 0) + 1
    power, notes = [], []
    for i in peaks:
        key = (cols["config"][i], cols["concurrency"][i],
               cols["batch"][i] if jb is not None else 1.0)
        if key not in totals:
            return None, (f"power_w left out: gpu_metrics_text has no row for "
                          f"{key[0]} at concurrency {key[1]:g}",)
        power.append(totals[key])
    if any(c > 1 for c in gpus.values()):
        notes.append("power_w: GPU Power Usage summed over the GPUs of each run")
    notes.append("power_w: GPU Power Usage (W) of the peak row of each max batch size")
    if not all(p > 0 for p in power):
        return None, ("power_w left out: a peak row's GPU power is 0 W",)
    return power, tuple(notes)


def _profiles(text: str, gpu_text=None) -> list:
    """One ``MeasuredBatchProfile`` per model of a metrics-model-inference.csv."""
    table = _read_csv(text)
    cols = _columns(table)
    out = []
    sweeps = _sweeps(table, cols)
    for model in dict.fromkeys(cols["model"]):
        notes = ["batch size = the server's Max Batch Size B (the client Batch is the "
                 "inputs per request); τ[B] = 1000·B / the peak throughput of the "
                 "concurrency sweep, where the server runs full batches back to back"]
        best: dict = {}                          # B -> (peak throughput, row, config)
        for sweep in (s for s in sweeps if s["model"] == model):
            why = _not_saturated(sweep, cols)
            if why:
                notes.append(why)
                continue
            i = int(sweep["rows"][np.argmax(cols["throughput"][sweep["rows"]])])
            best.setdefault(sweep["max_batch"], []).append((cols["throughput"][i], i,
                                                            sweep["config"]))
        for b, runs in sorted(best.items()):
            runs.sort(key=lambda r: -r[0])
            if len(runs) > 1:
                others = ", ".join(f"{c} ({x:g} infer/s)" for x, _, c in runs[1:])
                notes.append(f"max batch size {b}: {len(runs)} configs; the highest peak "
                             f"{runs[0][2]} ({runs[0][0]:g} infer/s) is taken over {others}")
        if len(best) < 2:
            raise ValueError(f"model {model}: fewer than 2 max batch sizes with a saturated "
                             f"sweep ({len(best)}); expected at least 2 to fit τ[b] "
                             f"({'; '.join(notes[1:]) or 'no sweeps'})")
        b = np.array(sorted(best), dtype=float)
        peaks = [best[int(x)][0][1] for x in b]
        thr = cols["throughput"][peaks]
        power = None
        if gpu_text is not None:
            power, extra = _power(gpu_text, cols, peaks)
            notes.extend(extra)
        p99 = cols["p99"][peaks] if cols["p99"] is not None else None
        if p99 is not None:
            notes.append("p99_latency_ms: Model Analyzer's p99 at each peak row (the "
                         "concurrencies of the peaks differ)")
        with np.errstate(all="ignore"):
            tau = 1000.0 * (b / thr)
        if not np.all(np.isfinite(tau) & (tau > 0)):
            raise ValueError(f"model {model}: throughputs too extreme for batch times")
        out.append(MeasuredBatchProfile(
            batch_size=_frozen(b), batch_time_ms=_frozen(tau),
            power_w=None if power is None else _frozen(power),
            p99_latency_ms=None if p99 is None else _frozen(p99),
            source_format="model_analyzer", notes=tuple(notes), label=model, tables=()))
    return out


def _concurrency_sweeps(text: str) -> list:
    """One ``MeasuredConcurrencySweep`` per (model config, client batch) of the file."""
    table = _read_csv(text)
    cols = _columns(table)
    sweeps = _sweeps(table, cols)
    several_batches = len({s["batch"] for s in sweeps}) > 1
    out = []
    for s in sweeps:
        rows, c = s["rows"], s["batch"]
        conc, thr = cols["concurrency"][rows], cols["throughput"][rows]
        notes = ["mean_latency_ms by Little's law, 1000·N·(client batch)/throughput: the "
                 "file has no mean latency (closed loop, N requests in flight)"]
        instances = None
        if cols["group"] is not None:
            notes.append(f"model_instances unknown: Model Analyzer's Instance Group column "
                         f"({cols['group'][rows[0]]!r}) does not reliably give the count")
        why = _not_saturated(s, cols)
        if why:
            notes.append("not saturated: " + why.split(": ", 1)[1])
        with np.errstate(all="ignore"):
            mean = 1000.0 * conc * c / thr
        if not np.all(np.isfinite(mean)):
            raise ValueError(f"{s['config']}: throughputs too extreme for latencies")
        label = s["config"] + (f" · client batch {c}" if several_batches else "")
        out.append(MeasuredConcurrencySweep(
            concurrency=_frozen(conc), throughput_per_s=_frozen(thr),
            mean_latency_ms=_frozen(mean),
            p99_latency_ms=None if cols["p99"] is None else _frozen(cols["p99"][rows]),
            breakdown_ms=None, model_instances=instances, max_batch_size=s["max_batch"],
            client_batch_size=c, source_format="model_analyzer", notes=tuple(notes),
            label=label, tables=()))
    return out
