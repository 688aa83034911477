"""Figure builders of the LLM token-limit page (Yang et al. §V-B, Fig 4, and more).

Pure builders: arrays in, ``go.Figure`` out; tests read the curves as data.
Waits are in seconds, limits in output tokens.  ``arrivals``: the label of a
non-Poisson arrival process (None: Poisson, the figures as the paper draws them); the
exact curves then say they assume Poisson arrivals, the simulated points name the
process, and the mean-wait chart adds Kingman's GI/G/1 approximation.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ui.plotting import (COLORS, add_overlays, baseline_trace, finite, hline, line_label,
                         new_figure, unstable_overlay, vline)

X_TITLE = "token limit n_max (output tokens)"


def _line(x, y, name, color, dash=None, width=2.0, **kw):
    return dict(type="scatter", x=np.asarray(x, float).tolist(), y=finite(y), name=name,
                mode="lines", line=dict(color=color, dash=dash, width=width), **kw)


def _points(x, y, ci, name, color, symbol):
    return dict(type="scatter", x=np.asarray(x, float).tolist(), y=finite(y), name=name,
                mode="markers", marker=dict(color=color, size=9, symbol=symbol),
                error_y=dict(type="data", array=finite(ci), visible=True))


def _limit_mark(limit) -> tuple[list, list]:
    """The chosen limit as a dash-dotted vertical line labelled at its top left."""
    if limit is None:
        return [], []
    line = vline(float(limit), color="#444", dash="dashdot", width=1)
    return [line], [line_label(line, f"limit {int(limit)}", "top left")]


def _sim_name(arrivals, name="simulation ±95% CI") -> str:
    return name if arrivals is None else f"{arrivals}, {name}"


def _poisson(name, arrivals) -> str:
    """An exact curve's name, saying it assumes Poisson arrivals beside another process."""
    return name if arrivals is None else f"{name}, Poisson arrivals"


def _unstable(stable_limit, x_max) -> tuple[list, list]:
    return unstable_overlay(float(stable_limit) + 1.0, float(x_max), "unstable (ρ ≥ 1)")


def wait_figure(n, mean_wait, *, stable_limit, sim=None, limit=None, baseline=None,
                arrivals=None, approx=None) -> go.Figure:
    """Fig 4a: M/G/1 mean queueing delay E[W] (eq 1) vs the token limit.  Under another
    arrival process (``arrivals``, its label) the exact curve is the Poisson reference
    and ``approx`` (Kingman's GI/G/1 mean wait on ``n``) is drawn as an approximation."""
    fig = new_figure("Mean wait vs token limit (no one gives up)", X_TITLE,
                     "mean wait in queue (s)")
    if arrivals is None:
        traces = [_line(n, mean_wait, "E[W], M/G/1 (eqs 1-5)", COLORS["phi0"], width=3)]
    else:
        traces = [_line(n, mean_wait, "Poisson (exact), M/G/1 (eqs 1-5)", COLORS["phi0"],
                        dash="dot")]
        if approx is not None:
            traces.append(_line(n, approx, f"{arrivals}, GI/G/1 approximation (Kingman)",
                                COLORS["phi"], dash="dash", width=2.5))
    if sim is not None:
        traces.append(_points(*sim, _sim_name(arrivals), COLORS["sim"], "triangle-up"))
    if baseline is not None:
        traces.append(baseline_trace(*baseline, name="baseline (pinned)"))
    fig.add_traces(traces)
    shapes, notes = _limit_mark(limit)
    band, band_notes = _unstable(stable_limit, max(n))
    return add_overlays(fig, shapes + band, notes + band_notes)


def served_wait_figure(n, wait_plain, served_exact, served_interp, patience, *, stable_limit,
                       sim=None, limit=None, arrivals=None) -> go.Figure:
    """Fig 4b: mean queueing delay of served users E[W_qs], with and without impatience."""
    fig = new_figure(f"Mean wait of users who stay (others give up after {patience:g} s)",
                     X_TITLE, "mean wait of users who stay (s)")
    traces = [_line(n, wait_plain, _poisson("no impatience (M/G/1)", arrivals), COLORS["phi0"],
                    dash="dot"),
              _line(n, served_interp, _poisson("impatient, De Kok-Tijms (eqs 6-9)", arrivals),
                    COLORS["phi"], dash="dash"),
              _line(n, served_exact, _poisson("impatient, exact M/G/1+D", arrivals),
                    COLORS["exact"], width=3)]
    if sim is not None:
        traces.append(_points(*sim, _sim_name(arrivals, "simulation, impatient ±95% CI"),
                              COLORS["sim"], "square"))
    fig.add_traces(traces)
    tau = hline(float(patience), color=COLORS["bound"], dash="dot", width=1)
    shapes, notes = _limit_mark(limit)
    band, band_notes = _unstable(stable_limit, max(n))
    return add_overlays(fig, [tau] + shapes + band,
                        [line_label(tau, "τ", "bottom right")] + notes + band_notes)


def loss_figure(n, loss_exact, loss_interp, patience, *, sim=None, limit=None,
                arrivals=None) -> go.Figure:
    """Fig 4c: fraction of impatient users lost π(τ), exact and De Kok-Tijms."""
    fig = new_figure(f"Share of users who give up (after waiting {patience:g} s)", X_TITLE,
                     "share of users who give up π(τ) (fraction)")
    traces = [_line(n, loss_interp, _poisson("De Kok-Tijms interpolation (eq 6)", arrivals),
                    COLORS["phi"], dash="dash"),
              _line(n, loss_exact, _poisson("exact M/G/1+D", arrivals), COLORS["exact"],
                    width=3)]
    if sim is not None:
        traces.append(_points(*sim, _sim_name(arrivals), COLORS["sim"], "circle"))
    fig.add_traces(traces)
    return add_overlays(fig, *_limit_mark(limit))


def objective_figure(n, v1, v2, best_v1, best_v2, *, v2_label="V2 (eq 11)",
                     limit=None, arrivals=None, v1_approx=None) -> go.Figure:
    """Fig 4d: the objectives V1 (eq 10) and V2 (eq 11) with their optima (n, value).
    Under another arrival process (``arrivals``, its label) both are the Poisson ones and
    ``v1_approx`` (V1 with Kingman's approximate wait) is drawn beside them."""
    fig = new_figure("Service objective vs token limit", X_TITLE, "objective V (utility units)")
    traces = [_line(n, v1, _poisson("V1 (eq 10), patient users", arrivals), COLORS["phi0"],
                    width=3),
              _line(n, v2, _poisson(v2_label + ", impatient users", arrivals), COLORS["exact"],
                    width=3)]
    if v1_approx is not None:
        traces.append(_line(n, v1_approx, f"V1 with the GI/G/1 approximation, {arrivals}",
                            COLORS["phi"], dash="dash"))
    for (bn, bv), name, color in ((best_v1, "V1 optimum", COLORS["phi0"]),
                                  (best_v2, "V2 optimum", COLORS["exact"])):
        traces.append(dict(type="scatter", x=[float(bn)], y=finite([bv]), mode="markers+text",
                           name=f"{_poisson(name, arrivals)}: {int(bn)} tokens",
                           text=[f"{int(bn)}"],
                           textposition="top center",
                           marker=dict(size=14, symbol="star", color=color)))
    fig.add_traces(traces)
    fig.update_layout(hovermode="closest")
    return add_overlays(fig, *_limit_mark(limit))


def token_law_figure(centers, widths, probs, k, cdf, *, limit, clipped_share,
                     label) -> go.Figure:
    """Histogram of the requested output tokens (bins at ``centers`` of ``widths``,
    ``TokenLawSummary``) with its CDF and the limit marked."""
    fig = new_figure(f"Requested output tokens: {label}", "output tokens n (tokens)",
                     "share of requests per bin (fraction)")
    fig.add_traces([dict(type="bar", x=np.asarray(centers, float).tolist(),
                         y=np.asarray(probs, float).tolist(),
                         width=np.asarray(widths, float).tolist(),
                         name="P(n in bin)", marker_color="#9ecae1"),
                    _line(k, cdf, "CDF P(n ≤ k)", COLORS["exact"], yaxis="y2")])
    fig.update_layout(yaxis2=dict(title=dict(text="share of requests ≤ n (fraction)"), overlaying="y", side="right",
                                  range=[0, 1.02]), hovermode="closest")
    line = vline(float(limit), color="#d62728", dash="dash", width=2)
    return add_overlays(fig, [line], [line_label(
        line, f"limit {int(limit)}: {100 * clipped_share:.1f}% clipped", "top right")])


def clipped_share_figure(n, share, utility, *, limit=None) -> go.Figure:
    """Share of answers cut short P(n > n_max) and the mean utility E[u] (eq 10) vs the limit."""
    fig = new_figure("Answers clipped by the limit", X_TITLE, "share (%)")
    fig.add_traces([_line(n, 100 * np.asarray(share, float), "answers clipped P(n > n_max)",
                          COLORS["phi0"], width=3),
                    _line(n, 100 * np.asarray(utility, float), "mean utility E[u] (share served)",
                          COLORS["exact"], dash="dash")])
    fig.update_yaxes(range=[0, 102])
    return add_overlays(fig, *_limit_mark(limit))


def latency_fit_figure(output_tokens, input_tokens, latency_s, a, c, r2,
                       fitted_with_input=None, r2_input=None, *, line) -> go.Figure:
    """Table I: request latency vs output tokens and the fit S = a·n + c (§II-B), drawn
    through ``line`` = (tokens, fitted seconds) (``engine.fit.TokenLatencyFit.latency_s``)."""
    fig = new_figure("Request latency vs output tokens (fit: S = a·n + c)",
                     "output tokens n (tokens)", "request latency S (s)")
    traces = [_line(*line, f"fit a={a:.5g} s/token, c={c:.4g} s (R²={r2:.4f})",
                    COLORS["exact"]),
              dict(type="scatter", x=list(output_tokens), y=list(latency_s), mode="markers",
                   name="measured", marker=dict(size=10, color=COLORS["sim"]),
                   text=[f"{int(i)} input tokens" for i in input_tokens])]
    if fitted_with_input is not None:
        traces.append(dict(type="scatter", x=list(output_tokens), y=list(fitted_with_input),
                           mode="markers", name=f"fit with input-token term (R²={r2_input:.4f})",
                           marker=dict(size=9, symbol="x", color=COLORS["phi1"])))
    fig.add_traces(traces)
    fig.update_layout(hovermode="closest")
    return fig


def fit_residuals_figure(labels, residuals, residuals_input=None) -> go.Figure:
    fig = new_figure("Fit residuals", "Table I row (input, output tokens)", "measured − fit (s)")
    traces = [dict(type="bar", x=list(labels), y=list(residuals), name="S = a·n + c",
                   marker_color=COLORS["bound"])]
    if residuals_input is not None:
        traces.append(dict(type="bar", x=list(labels), y=list(residuals_input),
                           name="with input-token term", marker_color=COLORS["phi1"]))
    fig.add_traces(traces)
    fig.update_layout(height=280, hovermode="closest")
    return fig
