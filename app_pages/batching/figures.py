"""Figures of the GPU dynamic-batching page (Inoue 2021, Figs 2-8 and more).

Pure builders: arrays in, ``go.Figure`` out; tests read the curves as data.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from engine import batching as model
from engine.batching.profile import batch_size_grid

from ui.plotting import (COLORS, add_overlays, baseline_trace, finite, fit_log_range, hline,
                         line_label, new_figure, shade_unstable, unstable_overlay, vline)


def _line(x, y, name, color, dash=None, width=2.0):
    return dict(type="scatter", x=np.asarray(x, float).tolist(), y=finite(y), name=name,
                mode="lines", line=dict(color=color, dash=dash, width=width))


def _sla(sla_ms) -> tuple[list, list]:
    """The SLA as a dash-dotted horizontal line labelled at its top left (log y axis)."""
    if sla_ms is None:
        return [], []
    line = hline(sla_ms, color="#444", dash="dashdot", width=1)
    return [line], [line_label(line, f"SLA {sla_ms:g} ms", "top left", log_y=True)]


def throughput_fit_figure(batch_size, throughput_per_s, alpha_ms, tau0_ms, r2) -> go.Figure:
    """Fig 3: measured throughput and the fitted μ[b] = b/(αb + τ0) (eq 26)."""
    fig = new_figure("Throughput vs batch size (fit: eq 26)", "batch size b (requests)",
                     "throughput (requests/s)")
    b = batch_size_grid(max(batch_size))
    fig.add_traces([
        _line(b, model.throughput_per_s(b, alpha_ms, tau0_ms),
              f"fit α={alpha_ms:.4g} ms, τ0={tau0_ms:.4g} ms (R²={r2:.5f})", COLORS["exact"]),
        dict(type="scatter", x=list(batch_size), y=list(throughput_per_s), mode="markers",
             name="measured", marker=dict(size=9, color=COLORS["sim"]))])
    fig.update_xaxes(type="log")
    return fig


def energy_fit_figure(batch_size, energy_j, beta_j, c0_j, r2) -> go.Figure:
    """Fig 2: energy per batch c[b] = power·τ[b] and its fit βb + c0 (eq 17)."""
    fig = new_figure("Energy per batch (fit: eq 17)", "batch size b (requests)",
                     "energy per batch (J)")
    b = np.linspace(0, max(batch_size) * 1.05, 50)
    fig.add_traces([
        _line(b, model.batch_energy(b, beta_j, c0_j),
              f"fit β={beta_j:.4g} J, c0={c0_j:.4g} J (R²={r2:.5f})",
              COLORS["exact"]),
        dict(type="scatter", x=list(batch_size), y=list(energy_j), mode="markers",
             name="measured", marker=dict(size=9, color=COLORS["sim"]))])
    return fig


def residuals_figure(batch_size, residuals, unit: str) -> go.Figure:
    fig = new_figure("Fit residuals", "batch size b (requests)", f"measured − fit ({unit})")
    fig.add_traces([dict(type="bar", x=[str(int(b)) for b in batch_size], y=list(residuals),
                         name="residual", marker_color=COLORS["bound"])])
    fig.update_layout(height=260, hovermode="closest")
    return fig


def latency_figure(x, exact, phi0, phi1, phi, *, x_title, unstable_at, x_max,
                   sim=None, baseline=None, sla_ms=None, arrivals=None,
                   sim_name="simulation ±95% CI") -> go.Figure:
    """Fig 4: exact E[W] with the bounds φ0, φ1 and φ (eqs 41-43); optional
    simulation means with 95% CIs, a pinned baseline and the SLA line.

    ``arrivals``: (name, x, y) the exact mean under another arrival process (MMPP-2)
    drawn beside the Poisson one, or (name, None, None) for a process without one; the
    Poisson curve is then named so and its bounds (Poisson results) left out."""
    fig = new_figure("Mean latency vs load", x_title, "mean latency (ms)", log_y=True)
    if arrivals is None:
        traces = [_line(x, phi0, "φ0 bound (eq 41)", COLORS["phi0"], dash="dot", width=1.5),
                  _line(x, phi1, "φ1 bound (eq 42)", COLORS["phi1"], dash="dot", width=1.5),
                  _line(x, phi, "φ = min(φ0, φ1) (eq 43)", COLORS["phi"], dash="dash"),
                  _line(x, exact, "exact E[W]", COLORS["exact"], width=3)]
        series = [exact]
    else:
        name, ax, ay = arrivals
        traces = [_line(x, exact, "exact E[W], Poisson arrivals", COLORS["bound"], dash="dash",
                        width=2)]
        series = [exact]
        if ax is not None:
            traces.append(_line(ax, ay, f"exact E[W], {name}", COLORS["exact"], width=3)
                          | dict(mode="lines+markers", marker=dict(size=6)))
            series.append(ay)
    if sim is not None:
        sx, mean, ci = sim
        traces.append(dict(type="scatter", x=list(sx), y=finite(mean), mode="markers",
                           name=sim_name, marker=dict(color=COLORS["sim"], size=8),
                           error_y=dict(type="data", array=finite(ci), visible=True)))
        series.append(mean)
    if baseline is not None:
        traces.append(baseline_trace(*baseline, name="baseline (pinned)"))
    fig.add_traces(traces)
    fit_log_range(fig, *series)
    shapes, notes = _sla(sla_ms)
    band, band_notes = unstable_overlay(unstable_at, x_max, "unstable")
    return add_overlays(fig, shapes + band, notes + band_notes)


def traffic_figure(curves, *, x_title, sla_ms=None) -> go.Figure:
    """Poisson vs this traffic: simulated p99 latency against load, one curve per arrival
    process (``curves``: (label, x, p99 ms); inf where unstable)."""
    fig = new_figure("Poisson vs this traffic: p99 latency vs load (simulated)", x_title,
                     "p99 latency (ms)", log_y=True)
    palette = (COLORS["bound"], COLORS["exact"], COLORS["phi0"], COLORS["sim"])
    fig.add_traces([_line(x, y, label, color, dash="dash" if i == 0 else None)
                    | dict(mode="lines+markers", marker=dict(size=6))
                    for i, ((label, x, y), color) in enumerate(zip(curves, palette * 2))])
    fit_log_range(fig, *[y for _, _, y in curves])
    shapes, notes = _sla(sla_ms)
    return add_overlays(fig, shapes, notes)


def utilization_figure(x, util, bound, *, x_title, unstable_at, x_max) -> go.Figure:
    """Fig 5: server utilization 1 − π0 (eq 38) and its bound min(1, λ(α + τ0))."""
    fig = new_figure("Share of time the GPU is busy", x_title,
                     "GPU busy (share of time, 1 − π0)")
    fig.add_traces([_line(x, bound, "bound min(1, λ(α+τ0)) (Lemma 5)", COLORS["bound"],
                          dash="dash"),
                    _line(x, util, "exact", COLORS["exact"], width=3)])
    fig.update_yaxes(range=[0, 1.05])
    return shade_unstable(fig, unstable_at, x_max, "unstable")


def energy_efficiency_figure(x, eta, bound, *, x_title, unstable_at, x_max) -> go.Figure:
    """Fig 6: energy efficiency η (eq 19, jobs/J) and its lower bound (eq 40)."""
    fig = new_figure("Energy efficiency", x_title, "energy efficiency η (requests per joule)")
    fig.add_traces([_line(x, bound, "lower bound (eq 40)", COLORS["bound"], dash="dash"),
                    _line(x, eta, "exact", COLORS["exact"], width=3)])
    return shade_unstable(fig, unstable_at, x_max, "unstable")


def tradeoff_figure(latency, eta, approx_latency, approx_eta, point=None) -> go.Figure:
    """Fig 7: the energy-latency trade-off, parametric in the load; the
    approximation uses φ (eq 43) and the η bound (eq 40)."""
    fig = new_figure("Energy–latency trade-off (parameter: load)", "mean latency (ms)",
                     "energy efficiency η (requests per joule)")
    traces = [_line(approx_latency, approx_eta, "approximation (eqs 40, 43)", COLORS["phi"],
                    dash="dash"),
              _line(latency, eta, "exact", COLORS["exact"], width=3)]
    if point is not None:
        traces.append(dict(type="scatter", x=[point[0]], y=[point[1]], mode="markers",
                           name="operating point",
                           marker=dict(size=12, color=COLORS["sim"], symbol="star")))
    fig.add_traces(traces)
    fig.update_xaxes(type="log")
    fig.update_layout(hovermode="closest")
    return fig


def bmax_family_figure(curves, phi_x, phi_y, *, x_title) -> go.Figure:
    """Fig 8: exact E[W] for several finite b_max, with φ for b_max = ∞."""
    fig = new_figure("Batch-size limits b_max", x_title, "mean latency (ms)", log_y=True)
    palette = ["#08306b", "#2171b5", "#4292c6", "#6baed6", "#9ecae1", "#c6dbef", "#fd8d3c"]
    fig.add_traces([_line(x, y, label, color) for (label, x, y), color in zip(curves, palette * 3)]
                   + [_line(phi_x, phi_y, "φ (b_max = ∞, eq 43)", COLORS["phi"], dash="dash")])
    return fit_log_range(fig, *[y for _, _, y in curves])


def percentiles_figure(x, p50, p95, p99, ci_ok, exact_x, exact_mean, *, x_title, unstable_at,
                       x_max, sla_ms=None) -> go.Figure:
    """Simulated p50/p95/p99 latency vs load, with the exact mean for reference."""
    fig = new_figure("Latency percentiles vs load (simulation)", x_title, "latency (ms)", log_y=True)
    traces = [_line(exact_x, exact_mean, "exact mean", COLORS["exact"], dash="dash")]
    for name, y, color in (("p50", p50, "#9ecae1"), ("p95", p95, "#4292c6"), ("p99", p99, "#08306b")):
        traces.append(dict(type="scatter", x=list(x), y=finite(y), name=name,
                           mode="lines+markers", line=dict(color=color)))
    short = [xi for xi, ok in zip(x, ci_ok) if not ok]
    if short:
        traces.append(dict(type="scatter", x=short, y=[None] * len(short),
                           name="run too short at these loads", mode="markers",
                           marker=dict(symbol="x", color="#d62728")))
    fig.add_traces(traces)
    fit_log_range(fig, exact_mean, p99)
    shapes, notes = _sla(sla_ms)
    band, band_notes = unstable_overlay(unstable_at, x_max, "unstable")
    return add_overlays(fig, shapes + band, notes + band_notes)


def queue_delay_figure(delay_ms, p99, mean, best_delay, greedy_p99) -> go.Figure:
    """Triton-style batcher: p99 and mean latency vs the max queue delay."""
    fig = new_figure("Triton batcher: max queue delay (simulation)", "max queue delay (ms)",
                     "latency (ms)")
    fig.add_traces([_line(delay_ms, p99, "p99", "#08306b", width=3),
                    _line(delay_ms, mean, "mean", COLORS["exact"], dash="dash")])
    greedy = hline(greedy_p99, color=COLORS["sim"], dash="dot")
    best = vline(best_delay, color=COLORS["phi1"], dash="dash")
    return add_overlays(fig, [greedy, best],
                        [line_label(greedy, "greedy (paper) p99", "bottom right"),
                         line_label(best, f"best p99 at {best_delay:.3g} ms", "top")])


def online_comparison_figure(n_clients, measured, predicted, *, title: str, y_title: str,
                             model: str = "predicted from the offline table") -> go.Figure:
    """Model vs measurement over the concurrency N of a closed-loop run: the measured
    values as markers, the model's prediction (named ``model``) as a line
    (engine.measured.online)."""
    fig = new_figure(title, "concurrency N (clients)", y_title)
    fig.add_traces([
        _line(n_clients, predicted, model, COLORS["exact"], width=3)
        | dict(mode="lines+markers", marker=dict(size=5)),
        dict(type="scatter", x=np.asarray(n_clients, float).tolist(), y=finite(measured),
             mode="markers", name="measured", marker=dict(size=9, color=COLORS["sim"]))])
    fig.update_yaxes(rangemode="tozero")
    n = np.asarray(n_clients, float)
    if n.size and n.min() > 0 and n.max() / n.min() >= 20:      # 1, 2, 4, ... 256: log
        fig.update_xaxes(type="log")
    return fig
