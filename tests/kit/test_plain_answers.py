"""Every page's answers in plain words at the inputs that used to show raw values (issue 24):
"inf" requests per batch, "6e-05 %", "1.3e+03", "Busy share 304.0 %", "254982.9 % of
capacity", "Largest load with p99 ≤ 10 ms: 0 requests/s" where no load meets it."""
import re

import pytest

from tests import pagetest
from ui.export import plain_number

# A raw value: a bare inf/nan/None, e-notation, a share of 200 % and more, a rate printed
# with a thousandth of a request.
RAW = re.compile(r"(?<![\w.])(-?inf|Infinity|NaN|nan|None)(?!\w)"
                 r"|(?<![\w.])\d+(\.\d+)?e[-+]?\d+(?!\w)"
                 r"|(?<![\d.,])([2-9]\d\d|\d{4,})(\.\d+)? ?%"
                 r"|\d{4,}\.\d{3}")

CASES = [
    ("batching", {"load_mode": "rate", "rate_per_s": "10000000"}),   # inf per batch, ρ
    ("batching", {"rho": "0.99"}),                                   # 1.3e+03 per batch
    ("sla", {"n": "3", "simulate": "false"}),                # busy 300 %
    ("sla", {"lam": "1000000", "simulate": "false"}),        # 1e+06 requests/s
    ("sla", {"law": "lognormal", "sigma": "3", "simulate": "false"}),  # 8.72e+03 ms
    ("llm_batching", {"log_mean": "12", "log_sd": "3"}),                 # 6.5e-09 requests/s
    ("token_limit", {"lam_per_s": "1"}),                            # 2549.8 %
    ("pipeline", {"load_mode": "rate", "rate_per_s": "1e9"}),
    ("llm_serving", {"rate": "1000000"}),
]


def answer_texts(at) -> list[str]:
    """What the page says: metrics, tables, sentences, captions and messages."""
    texts = [f"{m.label}: {m.value}" for m in at.metric]
    for kind in ("markdown", "caption", "info", "warning", "error", "success"):
        texts += [e.value for e in getattr(at, kind)]
    return texts


@pytest.mark.parametrize("page, query", CASES, ids=[f"{p}-{'-'.join(q)}" for p, q in CASES])
def test_answers_carry_no_raw_values(page, query):
    at = pagetest.open_page(pagetest.script(page), query)
    raw = [line for text in answer_texts(at) for line in text.splitlines() if RAW.search(line)]
    assert not raw, raw


def test_a_load_no_target_allows_is_said_in_words():
    """Below a lone request's latency no load meets the target: said so, not "0 requests/s"."""
    at = pagetest.open_page(pagetest.script("batching"), {"sla_ms": "0.01"})
    found = pagetest.results(at)
    assert found["Largest load with mean latency ≤ 0.01 ms"] == "no load meets it"
    assert found["Largest load with p99 ≤ 0.01 ms (simulated)"] == "no load meets it"


def test_unstable_replicas_are_busy_all_the_time_not_over_100_percent():
    at = pagetest.open_page(pagetest.script("sla"), {"n": "3", "simulate": "false"})
    assert pagetest.metric(at, "Busy share of each replica") == (
        "all the time (too few replicas: the load is 3 × what they serve)")


@pytest.mark.parametrize("value, digits, smallest, text", [
    (1.2e9, 3, 1e-4, "1,200,000,000"), (1401.2, 4, 1e-4, "1,401"), (0.5366, 3, 1e-4, "0.537"),
    (6e-7, 2, 1e-10, "0.0000006"), (6e-7, 3, 1e-4, "< 0.0001"), (-3e-6, 2, 1e-10, "−0.000003"),
    (float("inf"), 3, 1e-4, "∞"), (float("nan"), 3, 1e-4, "n/a"), (0.0, 3, 1e-4, "0"),
    (7, 3, 1e-4, "7")])
def test_plain_number_never_writes_e_notation(value, digits, smallest, text):
    assert plain_number(value, digits, smallest) == text
