"""The LLM batching page's answer at the current load: the results rows (shown on the page
and opening the report) and the metrics a pinned baseline is compared on.

The exact rows (fixed batching's M/D^b/1 latency, the best fixed batch size and cap)
assume Poisson arrivals; beside another arrival process their labels say so and, with
the simulation on, fixed batching's latency simulated under that process stands beside
them.  The last row names the arrival model.
"""
from __future__ import annotations

from ui.export import plain_number

from . import data


def _seconds(x: float) -> str:
    return f"{plain_number(x)} s" if x < float("inf") else "∞ (cannot keep up)"


def rate(x: float, digits: int = 4) -> str:
    return f"{plain_number(x, digits, 1e-9)} requests/s"


def rows(s, lam: float, lims: dict, ok: list) -> list:
    """(label, value with units) of scenario ``s`` at load ``lam`` (requests/s);
    ``lims``: capacity per strategy, ``ok``: the strategies that keep up at ``lam``."""
    labels = data.LABELS
    bc = data.batch_curve(s.times)
    b_star, soj_star = data.best_fixed(lam, s.times)
    rec, soj_rec = data.recommended_b_max(lam, s.times)
    fixed = data.fixed_latency(lam, s.times, s.b)
    x = "" if s.poisson else ", Poisson"
    out = [
        ("Load", rate(lam)),
        (f"Mean latency, fixed b = {s.b}{x}", _seconds(fixed)),
        ("Best fixed batch size" + x, f"{b_star}" if b_star else "none keeps up"),
        ("Mean latency with it" + x, _seconds(soj_star) if b_star else "n/a"),
        ("Best batch-size cap" + x, f"{rec}" if rec else "none keeps up"),
        ("Mean latency with that cap" + x, _seconds(soj_rec) if rec else "n/a"),
        ("Batch size with the most throughput", f"{bc.b_throughput_opt}"),
        ("Most throughput", rate(bc.peak_throughput_per_s, 3)),
        ("Mean output length", f"{plain_number(bc.mean_tokens, 4)} tokens"),
    ] + [(f"{labels[k]}: capacity", f"{rate(lims[k])}, "
          + ("keeps up here" if k in ok else "cannot keep up here")) for k in data.STRATEGIES]
    if not s.poisson:
        out.insert(2, (f"Mean latency, fixed b = {s.b}, simulated", simulated_fixed(s, lam, ok)))
    return out + [("Arrivals", s.arrivals.label)]


def simulated_fixed(s, lam: float, ok: list) -> str:
    """Fixed batching's mean latency simulated under the scenario's arrivals at ``lam``
    (with its 95% CI), or why there is none."""
    if not s.simulate:
        return "simulation off"
    if "fixed" not in ok:
        return "∞ (cannot keep up)"
    r = data.fixed_sim_at(lam, s.times, s.b, s.n_jobs, s.arrivals)
    return f"{plain_number(r.mean_latency_s)} s ± {r.ci95_s:.2g}"


def metrics(s, lam: float, lims: dict) -> dict:
    """What a pinned baseline is compared on (names carry units where they have one)."""
    b_star, _ = data.best_fixed(lam, s.times)
    rec, _ = data.recommended_b_max(lam, s.times)
    return {"best fixed batch size": float(b_star), "best batch-size cap": float(rec),
            "capped dynamic capacity (requests/s)": lims["capped"]}
