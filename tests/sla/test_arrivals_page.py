"""The autoscaling page under bursty arrivals: the simulations use the chosen process, the
GI/G/n approximation sits beside the simulated central queue, and the "Poisson vs this
traffic" view's replica counts are those of direct engine calls with the page's seeds."""
from __future__ import annotations

import math


from engine import sla
from engine.arrivals import MMPP2, Replay, fit_mmpp2
from engine.core.two_moment import mean_wait_ggn
from engine.measured import read_trace
from engine.presets import arrival_presets
from tests import pagetest
from tests.pagetest import metric
from tests.real_data import real_file
from app_pages.sla import data, traffic

PAGE = "app_pages/sla/page.py"
LAM, MU, D1, D2, DELTA, RT = 900.0, 100.0, 0.00025, 0.00025, 0.0005, 0.1    # the defaults
SERVICE = sla.service_law("exponential", 1.0 / MU)
CONV = "trace_azure_llm_2023_conv.csv"


def scaled(base: MMPP2) -> MMPP2:
    """``base`` time-scaled to the page's λ: every rate × λ/its rate."""
    f = LAM / base.rate
    return MMPP2(base.rate_1 * f, base.rate_2 * f, base.switch_12 * f, base.switch_21 * f,
                 base.name)


def fitted(pid: str) -> MMPP2:
    """The preset's MMPP-2 at the page's λ."""
    return scaled(arrival_presets()[pid].mmpp2())


def within(n: int, process) -> float:
    """Share within RT of the random-retry simulation at n replicas, as the page seeds it."""
    return float(sla.simulate_dispatch(
        "random_retry", LAM, SERVICE, n, D1, D2, DELTA, n_requests=data.sim_requests(n),
        seed=(data.SEED, n), arrivals=process).fraction_within(RT))


def needed(rows, label: str) -> int:
    row = next(r for _, r in rows.iterrows() if r["arrivals"] == label)
    return int(row["replicas for p99 ≤ 100 ms (simulated)"])


def test_mmpp2_runs_the_simulations_under_it_and_says_so():
    at = pagetest.open_page(PAGE, {"arrivals": "mmpp2", "arrivals_trace": "azure_2023_conv"})
    label = "MMPP-2 fitted to the Azure conv trace"
    assert metric(at, "Arrivals") == label
    assert any(f"({label};" in md.value and "assume Poisson arrivals" in md.value
               for md in at.markdown)
    process = fitted("azure_2023_conv")
    late = 1.0 - within(11, process)
    assert metric(at, "Slower than 100 ms with 11 replicas, simulated") == \
        f"{100 * late:.3g} %"
    gg = 1000 * (D1 + mean_wait_ggn(LAM, 1 / MU, 11, process.scv, 1.0))
    assert metric(at, "Mean wait with 11 replicas, one central queue, approximation") == \
        f"{gg:.3g} ms"
    central = sla.simulate_dispatch("central_queue", LAM, SERVICE, 11, D1, D2, DELTA,
                                    n_requests=data.sim_requests(11),
                                    seed=(traffic.SEED, 11), arrivals=process)
    assert metric(at, "Mean wait with 11 replicas, one central queue, simulated") == \
        f"{1000 * central.mean_waiting_s:.3g} ms"


def test_poisson_mean_wait_approximation_is_erlang_c():
    """Poisson arrivals, exponential service: GI/G/n is M/M/n's exact E[W_q] (Erlang C from
    its defining sums, a = λ/μ = 9 Erlangs on n = 11: C = 0.4305, E[W_q] = C·E[S]/(n − a)
    = 2.152 ms), plus the trip d1 = 0.25 ms the simulated wait includes."""
    n, a = 11, LAM / MU
    terms = [a ** k / math.factorial(k) for k in range(n)]
    tail = a ** n / math.factorial(n) * n / (n - a)
    erlang_c = tail / (sum(terms) + tail)
    at = pagetest.open_page(PAGE)
    assert metric(at, "Arrivals") == "Poisson arrivals"
    assert metric(at, "Mean wait with 11 replicas, one central queue, approximation") == \
        f"{1000 * (erlang_c / MU / (n - a) + D1):.3g} ms" == "2.4 ms"


def test_poisson_vs_this_traffic_needs_the_replicas_direct_runs_find():
    text = real_file(CONV)
    at = pagetest.open_page(PAGE, {"view": "Poisson vs this traffic", "arrivals": "replay"})
    at.file_uploader(key="sla_arrivals_upload").set_value((CONV, text.encode(), "text/csv"))
    at.run()
    assert not at.exception and not at.error
    rows = at.dataframe[-1].value
    labels = list(rows["arrivals"])
    name = f"{CONV} (uploaded)"
    assert labels == ["Poisson arrivals", f"MMPP-2 fitted to {name}", f"replay of {name}"]
    assert needed(rows, "Poisson arrivals") == int(metric(
        pagetest.open_page(PAGE), "Replicas needed, simulation"))
    times = read_trace(text).arrival_s
    for label, process in ((f"MMPP-2 fitted to {name}", scaled(fit_mmpp2(times, name=name))),
                           (f"replay of {name}", Replay(times, name).scaled(LAM))):
        n = needed(rows, label)
        assert within(n, process) >= 0.99 > within(n - 1, process), label
    fig = next(f for f in pagetest.charts(at) if "Poisson vs this traffic" in
               f["layout"]["title"]["text"])
    assert [t["name"] for t in fig["data"] if t.get("showlegend") is not False] == labels
