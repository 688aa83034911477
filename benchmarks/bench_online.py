"""Offline → online prediction (engine.measured.online) on the real ResNet-50 pair:
how long the page's comparison takes and how close it comes, beside the issue-15 model.

* ``compare_online(..., band=True)`` on the four GPUs of
  triton_dle_resnet50_pytorch_offline/online.csv (read from ../shared/real-data; the
  benchmark is skipped without them): the separated terms and the band of the unknown
  GPU share (its two ends simulated with a quarter of the batches).  Goal: ≤ 30 s for
  the four GPUs.
* The worst GPU's median |throughput error|, separated terms against the whole-table
  line.  Goal (issue 25): ≤ 15 %.

The bounds on the errors are tests (tests/measured/test_online.py); the times are here.
"""
from pathlib import Path

from benchmarks.harness import Row, best_time
from engine.measured import compare_online

DATA = Path(__file__).resolve().parents[2] / "shared" / "real-data"
OFFLINE, ONLINE = "triton_dle_resnet50_pytorch_offline.csv", "triton_dle_resnet50_pytorch_online.csv"


def run() -> list[Row]:
    if not (DATA / OFFLINE).is_file() or not (DATA / ONLINE).is_file():
        print(f"online benchmark skipped: {DATA} does not hold {OFFLINE} and {ONLINE}")
        return []
    off, on = (DATA / OFFLINE).read_text(), (DATA / ONLINE).read_text()
    found = {}

    def separated():
        found["new"] = compare_online(off, on, band=True)

    def whole():
        found["old"] = compare_online(off, on, terms="whole_table")

    new_s = best_time(separated, repeat=1)
    old_s = best_time(whole, repeat=1)
    worst_new = max(c.median_abs_throughput_error for c in found["new"])
    worst_old = max(c.median_abs_throughput_error for c in found["old"])
    worst_max_new = max(c.max_abs_throughput_error for c in found["new"])
    worst_max_old = max(c.max_abs_throughput_error for c in found["old"])
    return [
        Row("compare_online, 4 GPUs, with the band", new_s, "s", "whole-table model s", old_s,
            old_s / new_s, "<= 30 s", new_s <= 30.0),
        Row("worst GPU's median |throughput error|", 100 * worst_new, "%",
            "whole-table model %", 100 * worst_old, worst_old / worst_new, "<= 15 %",
            worst_new <= 0.15),
        Row("worst GPU's max |throughput error|", 100 * worst_max_new, "%",
            "whole-table model %", 100 * worst_max_old, worst_max_old / worst_max_new,
            "<= 30 %", worst_max_new <= 0.30),
    ]
