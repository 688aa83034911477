"""Profile fits (Inoue 2021 §3.3, eq 17) and the preset files they come from."""
import numpy as np
import pytest

from engine.fit import fit_batch_profile, linear_fit
from engine.presets import BATCH_PROFILE_DIR, batch_profiles, load_batch_profile


# The paper's printed values (§3.3 for the batch time, §3.2 for energy); the
# engine reproduces them to the printed digits.
PAPER = {
    "v100_resnet50_mixed": dict(alpha=0.1438, tau0=1.8874, r2=0.99975, r2_energy=0.99978),
    "p4_resnet50_int8": dict(alpha=0.5833, tau0=1.4284, r2=0.99986, r2_energy=0.99998),
}


@pytest.mark.parametrize("preset_id", PAPER)
def test_fits_reproduce_the_paper(preset_id):
    fit = batch_profiles()[preset_id].fit()
    paper = PAPER[preset_id]
    assert round(fit.alpha_ms, 4) == paper["alpha"]
    assert round(fit.tau0_ms, 4) == paper["tau0"]
    assert round(fit.r2, 5) == paper["r2"]
    assert round(fit.r2_energy, 5) == paper["r2_energy"]


def test_fit_is_least_squares_of_batch_time():
    """Independent check: numpy.polyfit of τ[b] = 1000·b/throughput on b."""
    profile = batch_profiles()["v100_resnet50_mixed"]
    fit = profile.fit()
    tau = 1000 * profile.batch_size / profile.throughput_per_s
    slope, intercept = np.polyfit(profile.batch_size, tau, 1)
    assert fit.alpha_ms == pytest.approx(slope, rel=1e-12)
    assert fit.tau0_ms == pytest.approx(intercept, rel=1e-12)
    np.testing.assert_allclose(fit.residuals_ms, tau - (slope * profile.batch_size + intercept),
                               atol=1e-12)
    energy = profile.power_w * tau / 1000
    beta, c0 = np.polyfit(profile.batch_size, energy, 1)
    assert fit.beta_j == pytest.approx(beta) and fit.c0_j == pytest.approx(c0)
    assert fit.throughput_per_s(1) == pytest.approx(1000 / (slope + intercept))


def test_exact_line_has_r2_one_and_no_power_means_no_energy():
    fit = fit_batch_profile([1, 2, 4], [1000 / 1.1, 2000 / 1.2, 4000 / 1.4])
    assert fit.alpha_ms == pytest.approx(0.1) and fit.tau0_ms == pytest.approx(1.0)
    assert fit.r2 == pytest.approx(1.0)
    assert fit.beta_j is None and fit.r2_energy is None
    assert linear_fit([1, 2], [3, 3]).r2 == 1.0


@pytest.mark.parametrize("args,match", [
    (([1, 2], [100, -5]), "throughput_per_s"),
    (([1, 2], [100, np.nan]), "throughput_per_s"),
    (([1, 2, 3], [100, 200]), "throughput_per_s"),
    (([4, 4], [100, 200]), "batch_size"),
    (([1, 2.5], [100, 200]), "batch_size"),
    (([0, 2], [100, 200]), "batch_size"),
    (([1, 2], [100, 200], [50, 0]), "power_w"),
    (([1, 2], ["a", "b"]), "throughput_per_s"),
])
def test_bad_profiles_raise_naming_the_column(args, match):
    with pytest.raises(ValueError, match=match):
        fit_batch_profile(*args)


def test_presets_cite_their_source():
    """The paper's profiles cite Table 1 and carry power; every other preset is a
    measured one and cites its repository (tests/core/test_presets_measured.py)."""
    profiles = batch_profiles()
    assert set(PAPER) <= set(profiles)
    for pid in PAPER:
        assert "Table 1" in profiles[pid].source
        assert profiles[pid].power_w is not None
    for pid in set(profiles) - set(PAPER):
        assert "DeepLearningExamples" in profiles[pid].source, pid


GOOD = """id = "x"
name = "X"
source = "test"
[columns]
batch_size = [1, 2, 4]
throughput_images_per_s = [100, 180, 300]
board_power_w = [50, 60, 70]
"""


@pytest.mark.parametrize("change,field", [
    (('id = "x"', 'id = "x"\ncolour = "red"'), "colour"),
    (('source = "test"\n', ''), "source"),
    (("throughput_images_per_s = [100, 180, 300]\n", ""), "throughput_images_per_s"),
    (("[100, 180, 300]", "[100, -180, 300]"), "throughput_images_per_s"),
    (("[100, 180, 300]", "[100, nan, 300]"), "throughput_images_per_s"),
    (("[100, 180, 300]", "[100, inf, 300]"), "throughput_images_per_s"),
    (("[1, 2, 4]", "[1, 4, 2]"), "batch_size"),
    (("[1, 2, 4]", "[1, 2, 2.5]"), "batch_size"),
    (("[1, 2, 4]", "[1]"), "batch_size"),
    (("[50, 60, 70]", "[50, 60]"), "board_power_w"),
    (("[50, 60, 70]", '["a", 60, 70]'), "board_power_w"),
    (("[columns]", "[columns]\nlatency_ms = [1, 2, 3]"), "latency_ms"),
    (('name = "X"', 'name = 5'), "name"),
    (('id = "x"', 'id = "x'), "TOML"),
])
def test_bad_preset_files_name_file_and_field(tmp_path, change, field):
    path = tmp_path / "bad_preset.toml"
    path.write_text(GOOD.replace(*change))
    with pytest.raises(ValueError, match=field) as err:
        load_batch_profile(path)
    assert "bad_preset.toml" in str(err.value)


def test_good_file_loads_and_power_is_optional(tmp_path):
    path = tmp_path / "ok.toml"
    path.write_text(GOOD.replace("board_power_w = [50, 60, 70]\n", ""))
    profile = load_batch_profile(path)
    assert profile.power_w is None
    assert profile.fit().r2 > 0.9
    assert BATCH_PROFILE_DIR.is_dir()
