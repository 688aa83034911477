"""The LLM serving page's answer at the current load: the results rows (shown on the page
and opening the report), the simulation-beside-approximation table, and the metrics a
pinned baseline is compared on.
"""
from __future__ import annotations

import math

from ui.export import format_number, format_percent

BINDING = {"max_num_seqs": "max_num_seqs (requests running at once)",
           "token budget": "the token budget (max_num_batched_tokens)",
           "KV cache": "the KV cache"}


def ms(x: float) -> str:
    return f"{format_number(x)} ms" if math.isfinite(x) else "n/a"


def rate(x: float) -> str:
    return f"{format_number(x)} requests/s"


def binding(cap) -> str:
    """Which limit sets the capacity, in words (and whether the capacity is exact)."""
    how = "" if cap.exact else ", approximate"
    return f"{BINDING.get(cap.binding, cap.binding)} ({format_number(cap.seats)} seats{how})"


def unstable_message(lam: float, cap) -> str:
    return (f"Unstable: the server carries at most {rate(cap.rate_per_s)} "
            f"(limit: {binding(cap)}); at {rate(lam)} the queue grows without bound, so "
            "TTFT has no steady value.")


def slo_answer(found) -> str:
    if found.rate_per_s <= 0:
        return f"none (fails even at {rate(found.fails_at_per_s)})"
    return rate(found.rate_per_s)


def rows(lam: float, cap, run, slo, found, arrivals: str = "Poisson arrivals") -> list:
    """(label, value with units) at load ``lam``: ``run`` the simulation there (None past
    capacity), ``found`` the largest load meeting the target (``engine.llm_serving.SloRate``);
    ``arrivals``: the arrival model the simulations assume, in words."""
    share = lam / cap.rate_per_s
    head = [("Load", f"{rate(lam)} ({format_percent(share, 0)} of capacity)")]
    if run is None:
        word = f"unstable (> {rate(cap.rate_per_s)})"
        latency = [(k, word) for k in ("TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99",
                                       "End-to-end p50", "End-to-end p99")]
        here = [("Requests meeting the target here", "none in steady state"),
                ("KV cache peak use", "n/a (unstable)"), ("Requests preempted", "n/a")]
    else:
        latency = [("TTFT p50", ms(run.ttft_ms.p50)), ("TTFT p99", ms(run.ttft_ms.p99)),
                   ("TPOT p50", ms(run.tpot_ms.p50)), ("TPOT p99", ms(run.tpot_ms.p99)),
                   ("End-to-end p50", ms(run.e2e_ms.p50)),
                   ("End-to-end p99", ms(run.e2e_ms.p99))]
        met = run.goodput_fraction(ttft_ms=slo.ttft_ms, tpot_ms=slo.tpot_ms)
        kv = ("unbounded" if run.kv_peak_fraction is None
              else format_percent(run.kv_peak_fraction, 0))
        here = [("Requests meeting the target here", format_percent(met, 1)),
                ("KV cache peak use", kv),
                ("Requests preempted", format_percent(run.preempted_fraction, 1))]
    return head + latency + [
        (f"Largest load meeting the target (p{slo.pct})", slo_answer(found)),
        *here,
        ("Capacity", rate(cap.rate_per_s)), ("Limit that binds", binding(cap)),
        ("Arrivals", arrivals)]


def comparison(run, approx, n: int) -> str:
    """Markdown: the simulated percentiles and mean (95 % CI) beside the approximation's
    mean, for TTFT, TPOT and end-to-end (ms)."""
    lines = ["| (ms) | p50 | p90 | p99 | mean ± 95 % CI, simulated | mean, approximation |",
             "|---|---:|---:|---:|---:|---:|"]
    for label, metric in (("TTFT", "ttft_ms"), ("TPOT", "tpot_ms"), ("end-to-end", "e2e_ms")):
        sim = getattr(run, metric)
        ap = float(getattr(approx, metric))
        mean = f"{format_number(sim.mean)} ± {format_number(sim.ci95, 2)}"
        lines.append(f"| {label} | {format_number(sim.p50)} | {format_number(sim.p90)} | "
                     f"{format_number(sim.p99)} | {mean} | "
                     f"{format_number(ap) if math.isfinite(ap) else 'unstable'} |")
    return "\n".join(lines) + (f"\n\nSimulated: {n:,} requests (the first 10 % left out as "
                               "warm-up).")


def metrics(lam: float, cap, run, found) -> dict:
    """What a pinned baseline is compared on (names carry units)."""
    out = {"capacity (requests/s)": cap.rate_per_s,
           "largest load meeting the target (requests/s)": found.rate_per_s}
    if run is not None:
        out.update({"TTFT p99 (ms)": run.ttft_ms.p99, "TPOT p99 (ms)": run.tpot_ms.p99,
                    "end-to-end p99 (ms)": run.e2e_ms.p99})
    return out

