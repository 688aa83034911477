"""The pinned-baseline difference table (issue 14): units from the metric names and
digits by magnitude ("4,906 ms", not 4905.5287); no "-0.0"."""
import math

from ui.compare import difference_table


def _table(now: dict, before: dict):
    return difference_table({"metrics": now}, {"metrics": before}).set_index("metric")


def test_units_come_from_the_metric_names_and_digits_by_magnitude():
    t = _table({"mean latency (ms)": 4905.5287, "capacity (jobs/s)": 0.0123456,
                "cost autoscaled ($)": 1234.5},
               {"mean latency (ms)": 4800.0, "capacity (jobs/s)": 0.0123456,
                "cost autoscaled ($)": 2000.0})
    assert list(t.columns) == ["baseline", "current", "change", "change %"]
    assert t.loc["mean latency"].tolist() == ["4,800 ms", "4,906 ms", "+105.5 ms", "+2.199 %"]
    assert t.loc["capacity", "current"] == "0.01235 jobs/s"
    assert t.loc["capacity", "change"] == "0 jobs/s" and t.loc["capacity", "change %"] == "0 %"
    assert t.loc["cost autoscaled", "change"] == "−$765.5"
    assert "4905.5287" not in t.to_string()


def test_no_negative_zero_and_no_percent_of_zero():
    t = _table({"held up (% of time)": 0.1 + 0.2, "idle (%)": 0.0, "b*": 3, "x": math.nan},
               {"held up (% of time)": 0.3, "idle (%)": 0.0, "b*": 2, "x": 1.0})
    assert t.loc["held up"].tolist() == ["0.3 % of time"] * 2 + ["0 % of time", "0 %"]
    assert t.loc["idle", "change %"] == ""                       # no % of a zero baseline
    assert t.loc["b*"].tolist() == ["2", "3", "+1", "+50 %"]
    assert t.loc["x", "current"] == "n/a"
    assert "-0" not in t.to_string()


def test_metrics_missing_from_the_baseline_are_left_out():
    t = _table({"a (s)": 1.0, "b (s)": 2.0}, {"a (s)": 1.5})
    assert list(t.index) == ["a"]
