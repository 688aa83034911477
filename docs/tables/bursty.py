"""The README's "Poisson vs real traffic" table, computed as the pages compute it.

``python -m docs.tables.bursty`` (from the repository root, with ../shared/real-data
beside it) prints the markdown table: the GPU batching page on the V100 preset at
ρ = 0.5, 0.7, 0.9 (mean latency: exact for Poisson and MMPP-2, simulated for the replay;
p99 simulated), and the autoscaling page at its defaults (λ = 900/s, μ = 100/s per
replica, exponential service, p99 ≤ 100 ms): replicas needed.  Each under Poisson
arrivals, the MMPP-2 fitted to the trace and the trace replayed, time-scaled to the
same mean rate.
"""
from __future__ import annotations

from pathlib import Path

from app_pages.batching import data as gpu_data, traffic as gpu_traffic
from app_pages.sla import inputs as sla_inputs, traffic as sla_traffic
from engine import sla
from engine.presets import batch_profiles
from ui import arrivals_input as arr

TRACES = {"code": ("azure_2023_code", "trace_azure_llm_2023_code.csv"),
          "conv": ("azure_2023_conv", "trace_azure_llm_2023_conv.csv")}
RHOS = (0.5, 0.7, 0.9)
REAL = Path(__file__).resolve().parents[3] / "shared" / "real-data"


def choices(preset_id: str, file_name: str) -> tuple:
    trace = arr.trace_from_file((REAL / file_name).read_bytes(), file_name)
    return (arr.POISSON, arr.fitted(arr.preset_trace(preset_id)), arr.replayed(trace))


def gpu_cells(procs) -> list[str]:
    fit = batch_profiles()["v100_resnet50_mixed"].fit()
    out = []
    for rho in RHOS:
        lam = rho / fit.alpha_ms
        row = []
        for c in procs:
            mean, how = gpu_traffic.mean_at(lam, fit.alpha_ms, fit.tau0_ms, None, c)
            p99 = gpu_data.p99_at(lam, fit.alpha_ms, fit.tau0_ms, None, arrivals=c)
            row.append(f"{mean:.3g} ({'exact' if how == 'exact' else 'sim'}) / {p99:.3g}")
        out.append(row)
    return out


def sla_cells(procs) -> list[str]:
    s = sla_inputs.Scenario(900.0, 100.0, "exponential", 1.0, *(float(sla.s_from_ms(v))
                            for v in (0.25, 0.25, 0.5)), 99.0, 0.1)
    return [f"{sla_traffic.replicas_needed(sla_traffic.under(s, c))['n']:.0f}" for c in procs]


def main() -> None:
    missing = [f for _, f in TRACES.values() if not (REAL / f).is_file()]
    if missing:
        raise SystemExit(f"{REAL} does not hold {', '.join(missing)}: the real traces are read "
                         "from ../shared/real-data beside the repository, never copied into it")
    print("| trace | arrivals | " + " | ".join(f"ρ = {r}: mean / p99 (ms)" for r in RHOS)
          + " | replicas for p99 ≤ 100 ms |")
    print("|---|---|" + "---|" * (len(RHOS) + 1))
    for name, (preset_id, file_name) in TRACES.items():
        procs = choices(preset_id, file_name)
        gpu, reps = gpu_cells(procs), sla_cells(procs)
        for i, c in enumerate(procs):
            print(f"| {name} | {c.label} | " + " | ".join(g[i] for g in gpu) + f" | {reps[i]} |")


if __name__ == "__main__":
    main()
