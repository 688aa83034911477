"""Arrival presets (presets/arrivals/): every number recomputed from the real Azure trace it
summarises, read through ``tests/real_data.py``.  The timestamps are parsed here with the
csv module and exact decimal arithmetic, independently of ``engine.measured``; the
statistics are counted again with plain numpy (not ``engine.arrivals.describe``); the
MMPP-2 is ``engine.arrivals.fit_mmpp2`` on the trace (its definition), and its rate is the
trace's.  Bad files are refused with the file and the field named."""
from __future__ import annotations

import csv
from datetime import datetime
from decimal import Decimal
import io
import re

import numpy as np
import pytest

from engine import arrivals, presets
from engine.measured import read_trace
from tests.real_data import real_file

COMMIT = "790921015d50dd6aae7f7e47f39ba0e235ad6b08"
TRACES = {"azure_2023_code": "trace_azure_llm_2023_code.csv",
          "azure_2023_conv": "trace_azure_llm_2023_conv.csv"}
REL = 1e-9          # the files keep 10 significant digits


def seconds(text: str) -> np.ndarray:
    """Arrival times (s from the first) of an Azure trace CSV: whole seconds from the
    date and time, the 7-digit fraction added exactly."""
    stamps = [row["TIMESTAMP"] for row in csv.DictReader(io.StringIO(text))]
    whole, frac = zip(*(s.split(".") for s in stamps))
    base = [datetime.strptime(w, "%Y-%m-%d %H:%M:%S").timestamp() for w in whole]
    t = np.array([Decimal(int(b)) + Decimal("0." + f) for b, f in zip(base, frac)])
    t = np.sort(t - t.min())
    return t.astype(float)


def counts_in_windows(t: np.ndarray, window: float) -> np.ndarray:
    """Arrivals in each whole window of length ``window`` from the first arrival."""
    k = int(np.floor((t[-1] - t[0]) / window))
    return np.histogram(t, bins=t[0] + window * np.arange(k + 1))[0]


@pytest.fixture(scope="module", params=TRACES, ids=TRACES.keys())
def case(request):
    pid = request.param
    text = real_file(TRACES[pid])
    return presets.arrival_presets()[pid], seconds(text), text


def test_the_preset_cites_the_file_it_summarises(case):
    p, t, _ = case
    name = TRACES[p.id].removeprefix("trace_azure_llm_2023_").removesuffix(".csv")
    assert "Azure/AzurePublicDataset" in p.source and COMMIT in p.source
    assert f"AzureLLMInferenceTrace_{name}.csv" in p.source and "CC-BY 4.0" in p.source
    assert p.trace_name == f"the Azure {name} trace"
    assert p.n_requests == t.size


def test_the_statistics_are_the_trace_counted_again(case):
    p, t, _ = case
    gaps = np.diff(t)
    assert p.duration_s == pytest.approx(t[-1] - t[0], rel=REL)
    assert p.mean_rate_per_s == pytest.approx((t.size - 1) / (t[-1] - t[0]), rel=REL)
    assert p.scv == pytest.approx(gaps.var() / gaps.mean() ** 2, rel=1e-6)
    for w, idc, peak in zip(p.window_s, p.idc, p.peak_to_mean):
        n = counts_in_windows(t, w)
        assert idc == pytest.approx(n.var(ddof=1) / n.mean(), rel=1e-6), w
        assert peak == pytest.approx(n.max() / n.mean(), rel=1e-6), w


def test_the_rate_over_time_is_the_requests_per_bin(case):
    p, t, _ = case
    np.testing.assert_array_equal(p.requests_per_bin, counts_in_windows(t, p.bin_s))
    assert p.rate_per_s.mean() == pytest.approx(p.requests_per_bin.sum() / (
        p.bin_s * p.requests_per_bin.size))
    assert 100 <= p.requests_per_bin.size <= 130          # a small chart


def test_the_mmpp2_is_the_fit_to_the_trace(case):
    p, _, text = case
    fitted = arrivals.fit_mmpp2(read_trace(text).arrival_s, name=p.trace_name)
    kept = p.mmpp2()
    for mine, theirs in zip((kept.rate_1, kept.rate_2, kept.switch_12, kept.switch_21),
                            (fitted.rate_1, fitted.rate_2, fitted.switch_12, fitted.switch_21)):
        assert mine == pytest.approx(theirs, rel=1e-6, abs=1e-12)
    assert kept.rate == pytest.approx(p.mean_rate_per_s, rel=1e-8)    # matched exactly
    assert kept.label == f"MMPP-2 fitted to {p.trace_name}"


def test_the_comment_quotes_the_fits_scv(case):
    p, t, _ = case
    path = presets.ARRIVAL_DIR / f"{p.id}.toml"
    head = " ".join(ln[1:].strip() for ln in path.read_text().splitlines()
                    if ln.startswith("#"))
    achieved, target = map(float, re.search(r"SCV (\S+) vs (\S+);", head).groups())
    assert achieved == pytest.approx(p.mmpp2().scv, rel=1e-3)
    assert target == pytest.approx(p.scv, rel=1e-3)


GOOD = presets.ARRIVAL_DIR / "azure_2023_conv.toml"


@pytest.mark.parametrize("change,field", [
    (("scv = ", "scv = -1.0 #"), "scv"),
    (("n_requests = ", "n_requests = 1.5 #"), "n_requests"),
    (("rate_1_per_s = ", "rate_1_per_s = 'fast' #"), "rate_1_per_s"),
    (("switch_21_per_s = ", "switch_21_per_s = 0.0 #"), "switch_21_per_s"),
    (("peak_to_mean = [", "peak_to_mean = [0.5, "), "peak_to_mean"),
    (("window_s = [1.0, 10.0", "window_s = [10.0, 1.0"), "window_s"),
    (("bin_s = 30.0", "bin_s = 30.0\nextra = 1"), "extra"),
    (("trace_name = ", "# trace_name = "), "trace_name")])
def test_bad_files_name_file_and_field(tmp_path, change, field):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.read_text().replace(*change, 1))
    with pytest.raises(ValueError, match=re.escape(field)) as err:
        presets.load_arrival_preset(path)
    assert "bad.toml" in str(err.value)
