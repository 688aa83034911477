"""Model against measurement (engine/measured/online.py): the online run of a Triton
server predicted from its offline table, checked against the published online table
(NVIDIA DeepLearningExamples, ResNet-50 PyTorch on Triton), against the closed-loop
simulator, and against independent recomputations of its inputs."""
from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from engine.batching import closed_loop, simulate_closed_loop
from engine.measured import (compare_model_analyzer, compare_online, cycle_latency_quantile_ms,
                             predict_online, predict_profile_online, read_batch_profile,
                             read_batch_profiles, transfer_time_ms)
from tests.measured import samples as S
from tests.real_data import real_file

OFFLINE = "triton_dle_resnet50_pytorch_offline.csv"
ONLINE = "triton_dle_resnet50_pytorch_online.csv"
MA = "triton_ma_textrec_onnx_metrics-model-inference.csv"


@pytest.fixture(scope="module")
def comparisons():
    return compare_online(real_file(OFFLINE), real_file(ONLINE))


def raw_rows(name: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(real_file(name))))


def test_every_gpu_of_the_pair_is_compared(comparisons):
    """The four GPUs of the online table each meet their offline table (matched on the
    deployment, the instance count set aside); every online row is compared."""
    gpus = {r["gpu"] for r in raw_rows(ONLINE)}
    assert len(comparisons) == len(gpus) == 4
    for c in comparisons:
        rows = [r for r in raw_rows(ONLINE) if c.label.startswith(r["gpu"] + " ·")]
        assert c.concurrency.tolist() == sorted(float(r["concurrent_client_requests"])
                                                for r in rows)
        assert c.prediction.instances == int(rows[0]["model_instances"]) == 2
        assert c.prediction.b_max == int(rows[0]["max_batch_size"]) == 128
        assert c.prediction.label.startswith(c.label.split(" · ")[0])


def test_the_goal_on_the_median_is_met(comparisons):
    """Issue goal per GPU: median |throughput error| ≤ 20 %, median |latency error| ≤ 25 %
    (the max: test_the_worst_rows)."""
    for c in comparisons:
        assert c.median_abs_throughput_error <= 0.20, c.label
        assert c.median_abs_latency_error <= 0.25, c.label


def test_errors_are_recomputed_from_the_raw_columns(comparisons):
    """Each row's error is predicted / measured − 1 against the file's own numbers."""
    rows = raw_rows(ONLINE)
    for c in comparisons:
        mine = sorted((float(r["concurrent_client_requests"]), float(r["inferences_per_second"]),
                       float(r["avg_latency_ms"])) for r in rows
                      if c.label.startswith(r["gpu"] + " ·"))
        n, x, lat = map(np.array, zip(*mine))
        assert np.allclose(c.throughput_error, c.predicted_throughput_per_s / x - 1, rtol=1e-12)
        assert np.allclose(c.latency_error, c.predicted_latency_ms / lat - 1, rtol=1e-12)
        # the prediction obeys Little's law exactly: N = X · latency (client's view)
        assert np.allclose(n, c.predicted_throughput_per_s * c.predicted_latency_ms / 1000)


@pytest.fixture(scope="module")
def whole_table():
    return compare_online(real_file(OFFLINE), real_file(ONLINE), terms="whole_table")


def test_one_server_without_the_front_end_is_far_worse(whole_table):
    """The issue-15 finding: one server with τ[b] fitted to the whole offline table predicts
    the online throughput 39-52 % low.  Reproduced (median error below −35 % on every GPU):
    the instances and the front end are what the model adds."""
    for c in whole_table:
        fit = c.prediction
        one = closed_loop(c.concurrency, fit.alpha_ms, fit.tau0_ms, b_max=128)
        err = 1000 * one.throughput_per_ms / c.measured_throughput_per_s - 1
        assert np.median(err) < -0.35
        assert np.median(np.abs(err)) > 2 * c.median_abs_throughput_error


def test_whole_table_terms_answer_as_before(whole_table):
    """terms="whole_table" is the issue-15 model, unchanged: α and τ0 of the line through
    the whole table, the sharing factor 1, and its published errors (throughput median
    7.6 / 7.0 / 6.0 / 15.1 %, max 13.4 / 30.9 / 69.3 / 28.4 % on A40 / A100 / V100 / T4)."""
    medians = [0.076, 0.070, 0.060, 0.151]
    maxima = [0.134, 0.309, 0.693, 0.284]
    for c, med, top in zip(whole_table, medians, maxima):
        fit = read_batch_profile(real_file(OFFLINE), table=c.prediction.label).fit()
        assert c.prediction.alpha_ms == fit.alpha_ms and c.prediction.sharing_factor == 1.0
        assert c.median_abs_throughput_error == pytest.approx(med, abs=0.0015)
        assert c.max_abs_throughput_error == pytest.approx(top, abs=0.0015)


def test_transfer_time_is_the_small_batch_slope():
    """θ = least-squares slope of 1000·b/throughput over b ≤ 4, recomputed from the raw
    columns with numpy.polyfit."""
    rows = raw_rows(OFFLINE)
    for profile in read_batch_profiles(real_file(OFFLINE)):
        mine = [(float(r["client_batch_size"]), float(r["inferences_per_second"])) for r in rows
                if profile.label.startswith(r["gpu"] + " ·")
                and float(r["client_batch_size"]) <= 4]
        b, x = map(np.array, zip(*mine))
        assert transfer_time_ms(profile) == pytest.approx(np.polyfit(b, 1000 * b / x, 1)[0],
                                                           rel=1e-9)


def a100_profile():
    text = real_file(OFFLINE)
    return read_batch_profile(text, table=read_batch_profiles(text)[1].label)


@pytest.mark.parametrize("n", [8, 32, 128])
def test_one_instance_prediction_against_the_simulator(n):
    """One instance: the prediction is the exact closed-loop chain; the simulator with
    the same parameters and exponential front-end times agrees within 4 CI half-widths."""
    pred = predict_profile_online(a100_profile(), [n], instances=1, b_max=128)
    assert pred.method == "chain"
    sim = simulate_closed_loop(n, pred.alpha_ms, pred.tau0_ms, 128, pred.transfer_ms, 1,
                               n_batches=40_000, think="exponential",
                               rng=np.random.default_rng(7))
    tolerance = max(4 * sim.ci95_throughput_per_ms,
                    1e-5 * sim.throughput_per_ms)                   # a cycle: CI ≈ 0
    assert abs(pred.throughput_per_s[0] / 1000 - sim.throughput_per_ms) <= tolerance


def test_several_instances_are_simulated_reproducibly():
    """Several instances: the simulator with a seed fixed per concurrency, so one table
    gives one prediction; it lies within the flow-equivalent approximation's documented
    error (20 % at front-end times short next to a batch) of that approximation."""
    a = predict_profile_online(a100_profile(), [16, 64, 256], instances=2, b_max=128)
    b = predict_profile_online(a100_profile(), [16, 64, 256], instances=2, b_max=128)
    assert np.array_equal(a.throughput_per_s, b.throughput_per_s)
    assert a.method.endswith("batches per concurrency)")
    f = a.sharing_factor
    approx = closed_loop(a.n_clients, f * a.alpha_ms, f * a.tau0_ms, b_max=128,
                         think_time_ms=a.transfer_ms, instances=2)
    assert np.allclose(a.throughput_per_s, 1000 * approx.throughput_per_ms, rtol=0.20)


def test_the_worst_rows(comparisons):
    """Issue 25: max |throughput error| ≤ 30 % per GPU, and median ≤ 15 %; the whole-table
    model missed the max on A100 and V100 (+31 %, +69 % at N = 16)."""
    for c in comparisons:
        assert c.max_abs_throughput_error <= 0.30, c.label
        assert c.median_abs_throughput_error <= 0.15, c.label


def test_predict_online_reads_the_text_like_the_profile():
    """predict_online(text) is predict_profile_online on the parsed table; a plain CSV
    works too; bad input is a ValueError naming what is wrong."""
    text = S.PLAIN_PROFILE
    a = predict_online(text, [1, 4, 16], instances=2, b_max=8)
    b = predict_profile_online(read_batch_profile(text), [1, 4, 16], instances=2, b_max=8)
    assert np.array_equal(a.throughput_per_s, b.throughput_per_s)
    # N = 1: one request alone, τ[1] (stretched by the sharing factor: applied at every
    # load) + θ per round trip; one instance: no stretch
    f = a.sharing_factor
    assert f == pytest.approx(2 / (1 + np.log(2)))
    assert a.throughput_per_s[0] == pytest.approx(
        1000 / (f * (a.alpha_ms + a.tau0_ms) + a.transfer_ms), rel=1e-9)
    one = predict_online(text, [1], instances=1, b_max=8)
    assert one.throughput_per_s[0] == pytest.approx(
        1000 / (one.alpha_ms + one.tau0_ms + one.transfer_ms), rel=1e-9)
    with pytest.raises(ValueError, match="n_clients"):
        predict_online(text, [0, 3])
    with pytest.raises(ValueError, match="instances"):
        predict_online(text, [3], instances=0)
    with pytest.raises(ValueError):
        predict_online("", [3])


def test_cycle_quantile_against_the_simulator():
    """The exact p99 of the zero-think-time cycle against a simulated cycle (the same
    deterministic sample path: N = k·b + r, a share r/b waits k + 1 batches)."""
    alpha, tau0 = 1.8, 8.3
    for n, b_max in ((5, 16), (20, 8), (17, 8), (64, 16)):
        sim = simulate_closed_loop(n, alpha, tau0, b_max, 0.0, 1, n_batches=4000,
                                   think="deterministic", rng=np.random.default_rng(1))
        b = min(n, b_max)
        k, r = divmod(n, b)
        lat = np.repeat([k, k + 1], [b - r, r]) * (alpha * b + tau0)
        assert cycle_latency_quantile_ms(n, alpha, tau0, b_max, 0.99) == pytest.approx(
            np.quantile(lat, 0.99, method="higher"))
        assert sim.mean_latency_ms == pytest.approx(lat.mean(), rel=1e-6)


def test_model_analyzer_p99_and_throughput():
    """Model Analyzer's sweeps against the closed-loop model from the same file's peaks:
    once the concurrency is at least twice the max batch size the server runs full
    batches and the model's throughput is within 10 % (median 5 %); every
    configuration of the file is compared.  Left out of the bound: config_default (the
    only one with two instances, `2:GPU`) and configs 6 and 7, whose sweeps stop at
    concurrency 2 (dropped from the profile as unsaturated; 118/s there beats config_0's
    saturated 104.5/s at the same cap)."""
    text = real_file(MA)
    configs = {r["Model Config Path"] for r in raw_rows(MA) if r["Model Config Path"]}
    comps = compare_model_analyzer(text)
    assert {c.label for c in comps} == configs
    full = np.concatenate([np.abs(c.throughput_error[c.concurrency >= 2 * c.max_batch_size])
                           for c in comps if not c.label.endswith(("_default", "_6", "_7"))])
    assert full.size >= 15 and full.max() <= 0.10 and np.median(full) <= 0.05
    for c in comps:
        assert np.all(c.predicted_p99_ms > 0) and np.all(np.isfinite(c.p99_error))
    with pytest.raises(ValueError, match="Model Analyzer"):
        compare_model_analyzer(S.PLAIN_PROFILE)
