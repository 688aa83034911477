"""Fuzz tests of the shared engine code: fits, presets, token laws: the contract of tests/fuzzing.py
over every public function's declared domains; ``FUZZED`` maps each public name
to the test that fuzzes it (checked by tests/test_fuzz_contract.py)."""
import functools

from engine.core import arrival_input, domains, jit, two_moment
from engine.core import stats as stats_core
from engine.presets import (arrival as p_arrival, batch_profile as p_batch,
                            hardware_price as p_price, llm_batch_time as p_llm,
                            online_pair as p_pair, pipeline_specs as p_pipeline,
                            schema as p_schema, token_latency as p_token,
                            token_law as p_token_law)
from tests.fuzzing import *  # noqa: F401,F403 (settings, checks, engine modules, domains)


# ============================================================ engine.fit

POSITIVE = st.floats(1e-6, 1e9, allow_subnormal=False)
NOT_POSITIVE = st.sampled_from([0.0, -1.0, math.nan, math.inf, -math.inf])


@FUZZ_VECTOR
@given(st.lists(st.integers(1, 4096), min_size=POINTS + 1, max_size=POINTS + 1),
       st.lists(st.tuples(POSITIVE, POSITIVE, POSITIVE), min_size=POINTS + 1,
                max_size=POINTS + 1), st.data())
def test_fits(sizes, columns, data):
    """linear_fit and the three profile fits, on every prefix (2..17 rows) of a drawn table.

    Fewer than 2 distinct sizes (or collinear token counts) is the documented
    ``ValueError`` naming the column.
    """
    b = np.array(sizes, dtype=float)
    thr, power, secs = (np.array(c) for c in zip(*columns))
    for n in range(2, POINTS + 2):
        bb, tt, pp, ss = b[:n], thr[:n], power[:n], secs[:n]
        line = fit.linear_fit(bb, 1000 * bb / tt)
        assert_no_nan(line)
        assert line.r2 <= 1 + 1e-9
        if np.unique(bb).size < 2:
            raises_naming("batch_size", fit.fit_batch_profile, bb, tt, pp)
            raises_naming("output_tokens", fit.fit_token_latency, bb, ss)
            continue
        prof = fit.fit_batch_profile(bb, tt, pp)
        assert_no_nan(prof)
        assert np.all(np.isfinite(prof.batch_time(bb)))
        tok = fit.fit_token_latency(bb, ss)
        assert_no_nan(tok)
        assert np.all(np.isfinite(tok.latency_s(bb)))
        inputs = tt.round() + 1
        try:
            both = fit.fit_token_latency_with_input(bb, inputs, ss)
        except ValueError as err:       # documented: too few distinct values, or collinear
            assert "output_tokens" in str(err) or "input_tokens" in str(err)
        else:
            assert_no_nan(both)
            assert np.all(np.isfinite(both.latency_s(bb, inputs)))
            tally(fit.fit_token_latency_with_input)
        for f in (fit.linear_fit, fit.fit_batch_profile, fit.fit_token_latency):
            tally(f)
    column = data.draw(st.sampled_from(["batch_size", "throughput_per_s", "power_w"]))
    cols = dict(batch_size=b, throughput_per_s=thr, power_w=power)
    bad = cols[column].copy()
    bad[data.draw(st.integers(0, bad.size - 1))] = data.draw(NOT_POSITIVE)
    raises_naming(column, fit.fit_batch_profile, **{**cols, column: bad})
    raises_naming(column, fit.fit_batch_profile, **{**cols, column: bad[:-1]})  # short column
    distinct = np.arange(1.0, b.size + 1)
    raises_naming("seconds", fit.fit_token_latency, distinct,
                  np.where(np.isfinite(bad), -1.0, bad))
    raises_naming("input_tokens", fit.fit_token_latency_with_input, distinct, -thr, secs)
    bad_x = data.draw(st.sampled_from([math.nan, math.inf, "x"]))
    raises_naming("x", fit.linear_fit, [1.0, bad_x, 3.0], [1.0, 2.0, 3.0])
    raises_naming("y", fit.linear_fit, [1.0, 2.0, 3.0], [1.0, bad_x, 3.0])


# ============================================================ engine.presets

def loads_or_refuses(load, path, field: str, valid: bool) -> None:
    """A preset file with one field changed: ``load(path)`` gives a result without NaN
    when the change is still ``valid``, else a ``ValueError`` naming the field and the
    file."""
    if valid:
        assert_no_nan(load(path))
        return
    raises_naming(field, load, path)
    raises_naming(path.name, load, path)


def _toml_value(v):
    if isinstance(v, str):
        return '"' + v.replace('"', "'") + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v == math.inf else "-inf" if v == -math.inf
                                           else repr(v))
    return repr(v)


def _toml(top: dict, columns: dict | None = None) -> str:
    lines = [f"{k} = {_toml_value(v)}" for k, v in top.items()]
    if columns is not None:
        lines.append("[columns]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in columns.items()]
    return "\n".join(lines) + "\n"


def _preset_texts(scale, base):
    """One valid file of each preset kind, scaled by ``scale`` (> 0)."""
    n = len(base)
    sizes = sorted({int(x) for x in np.cumsum(np.ceil(np.array(base) * scale)) + 1})
    sizes = sizes if len(sizes) >= 2 else [1, 2]
    meta = dict(name="fuzz", source="generated")
    return {
        "batch": _toml(dict(id="p", **meta), dict(
            batch_size=sizes, throughput_images_per_s=[100.0 * scale * (1 + i) for i in
                                                       range(len(sizes))],
            board_power_w=[50.0 + scale] * len(sizes))),
        "token": _toml(dict(id="t", **meta), dict(
            input_tokens=[128] * n, output_tokens=list(range(1, n + 1)),
            latency_s=[0.5 + scale * (i + 1) for i in range(n)])),
        "llm": _toml(dict(id="l", **meta, k1_s_per_request=0.06 * scale, k2_s=0.1,
                          k3_s_per_token_per_request=0.0003 * scale, k4_s_per_token=0.02,
                          kv_capacity_tokens=1000.0 * scale, prompt_tokens=256.0,
                          estimated=["k2_s"])),
        "gpu": _toml(dict(id="g", **meta, host_link_bandwidth_GB_per_s=16.0 * scale,
                          memory_bandwidth_GB_per_s=320.0, memory_GB=16.0 * scale, sm_count=40,
                          boost_clock_MHz=1590.0, fp32_peak_TFLOP_per_s=8.1 * scale,
                          fp16_peak_TFLOP_per_s=65.0)),
        "work": _toml(dict(id="w", **meta, precision="fp32", job_size_bytes=1048576,
                           flops_per_byte=scale, parallel_fraction=min(1.0, scale),
                           reuse_factor=1.0 + scale, host_GFLOP_per_s=50.0, memory_slots=4)),
    }


PRESET_LOADERS = {"batch": (presets.load_batch_profile, presets.batch_profiles),
                  "token": (presets.load_token_latency_profile, presets.token_latency_profiles),
                  "llm": (presets.load_llm_batch_time, presets.llm_batch_time_presets),
                  "gpu": (presets.load_gpu_spec, presets.gpu_specs),
                  "work": (presets.load_pipeline_workload, presets.pipeline_workloads)}
PRESET_FIELDS = {"batch": ["batch_size", "throughput_images_per_s", "board_power_w"],
                 "token": ["input_tokens", "output_tokens", "latency_s"],
                 "llm": ["k1_s_per_request", "k2_s", "kv_capacity_tokens", "prompt_tokens"],
                 "gpu": ["sm_count", "memory_GB", "fp32_peak_TFLOP_per_s"],
                 "work": ["job_size_bytes", "parallel_fraction", "reuse_factor", "memory_slots"]}


PRESET_FILES = 4     # files of each kind per example (~1 ms each): 4 cases per loader an example


@FUZZ_VECTOR
@given(sweep(st.floats(1e-3, 1e3)), st.lists(st.floats(0.0, 100.0), min_size=2, max_size=8),
       st.sampled_from(sorted(PRESET_LOADERS)),
       st.sampled_from([-1.0, 0.0, math.nan, math.inf, "text", True, 1.5, None]), st.data())
def test_presets(tmp_path_factory, scales, base, kind, bad_value, data):
    """Every loader: ``POINTS`` valid files of each kind load (directories too), and a
    file with one bad field raises ``ValueError`` naming the file and the field."""
    root = tmp_path_factory.mktemp("presets")
    for k, (load_one, load_dir) in PRESET_LOADERS.items():
        folder = root / k
        folder.mkdir()
        for i, scale in enumerate(scales[:PRESET_FILES]):
            path = folder / f"{k}{i}.toml"
            path.write_text(_preset_texts(scale, base)[k].replace('id = "', f'id = "{i}'))
            preset = load_one(path)
            assert_no_nan(preset)
            if k in ("batch", "token"):
                assert_no_nan(preset.fit())
            if k == "token":
                try:
                    assert_no_nan(preset.fit_with_input())
                except ValueError as err:           # every row has 128 input tokens
                    assert "input_tokens" in str(err)
        assert len(load_dir(folder)) == PRESET_FILES
        tally(load_one, PRESET_FILES)
        tally(load_dir)
    field = data.draw(st.sampled_from(PRESET_FIELDS[kind]), label="field")
    text = _preset_texts(1.0, base)[kind]
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"{field} =")]
    column = kind in ("batch", "token")
    rows = len(next(ln for ln in text.splitlines() if ln.startswith(PRESET_FIELDS[kind][0]))
               .split(","))
    if bad_value is not None:
        value = [bad_value] * rows if column else bad_value
        lines.append(f"{field} = {_toml_value(value)}")
    path = root / "bad.toml"
    path.write_text("\n".join(lines) + "\n")
    load_one = PRESET_LOADERS[kind][0]
    if preset_accepts(kind, field, bad_value):
        assert_no_nan(load_one(path))
    else:
        raises_naming(field, load_one, path)
        raises_naming("bad.toml", load_one, path)


OPTIONAL_FIELDS = {"board_power_w", "kv_capacity_tokens", "prompt_tokens"}
WHOLE_FIELDS = {"batch_size", "input_tokens", "output_tokens", "sm_count", "memory_slots",
                "job_size_bytes"}
ZERO_ALLOWED = {"k2_s", "prompt_tokens"}


def preset_accepts(kind, field, value) -> bool:
    """Whether a preset file with ``field`` set to ``value`` (None: missing) is valid."""
    if value is None:
        return field in OPTIONAL_FIELDS
    if isinstance(value, (str, bool)) or not math.isfinite(value) or value < 0:
        return False
    if value == 0:
        return field in ZERO_ALLOWED
    if value == 1.5:
        return field not in WHOLE_FIELDS and field != "parallel_fraction"     # at most 1
    return True


# ============================================================ engine.core.token_laws

TOKEN_K = st.one_of(st.integers(-5, 10 ** 6), st.floats(-10.0, 1e7, allow_nan=False),
                    st.sampled_from([0, 1, math.inf, -math.inf]))


@FUZZ_VECTOR
@given(valid(TOKEN_LOG_MEAN, low=-5.0, high=12.0), sweep(valid(TOKEN_LOG_SD, high=3.0)),
       valid(TOKEN_BOUND, high=5000.0), sweep(st.floats(1e-3, 5000.0)),
       valid(TOKEN_BOUND, high=5000.0), sweep(valid(TOKEN_SD, high=5000.0)),
       sweep(TOKEN_K), sweep(st.floats(0.0, 1.0)), st.data())
def test_token_laws(log_mean, log_sds, low, widths, mean, sds, k, q, data):
    """lognormal, uniform, truncated_normal; token_cdf/pmf/quantile on each law; sampling,
    grid_top and binned_pmf on one of each kind."""
    # scipy freezes each law (~1 ms): half the points build one (1,000 cases a constructor)
    half = POINTS // 2
    laws = ([token_laws.lognormal(log_mean, s) for s in log_sds[:half]]
            + [token_laws.uniform(low, low + w) for w in widths[:half]]
            + [token_laws.truncated_normal(mean, s, low) for s in sds[:half]])
    laws = laws[::4]                    # the discretisation on 2 laws of each kind (cost)
    for f in (token_laws.lognormal, token_laws.uniform, token_laws.truncated_normal):
        tally(f, half)
    k = np.array(k, dtype=float)
    q = np.array(q)
    rng = np.random.default_rng(0)
    for i, law in enumerate(laws):
        cdf, pmf = token_laws.token_cdf(law, k), token_laws.token_pmf(law, k)
        assert_no_nan((cdf, pmf))
        assert np.all((cdf >= 0) & (cdf <= 1) & (pmf >= 0) & (pmf <= 1))
        assert np.all(cdf[k < 1] == 0)
        n = token_laws.token_quantile(law, q)
        assert_no_nan(n)
        assert np.all(n >= 1)
        top_law = token_laws.law_top(law)
        tally(token_laws.law_top)
        assert top_law >= 1 and top_law == np.ceil(top_law)
        if i % 2 == 0:
            x = token_laws.sample_tokens(law, 50, rng)
            assert np.all((x >= 1) & (x == np.round(x)))
            for n_max in (1, 4000, None):
                try:
                    top = token_laws.grid_top(law, np.inf if n_max is None else n_max)
                except ValueError as err:        # documented: an unbounded law needs n_max
                    assert n_max is None and "n_max" in str(err)
                else:
                    assert 1 <= top <= token_laws.MAX_TOKEN_GRID
            edges, mass = token_laws.binned_pmf(law, 20)
            assert_no_nan((edges, mass))
            assert np.all(mass >= -1e-15) and mass.sum() <= 1 + 1e-12
            for f in (token_laws.sample_tokens, token_laws.grid_top, token_laws.binned_pmf):
                tally(f)
        for f in (token_laws.token_cdf, token_laws.token_pmf, token_laws.token_quantile):
            tally(f, POINTS)
    which = data.draw(st.sampled_from(["lognormal", "uniform", "truncated_normal"]))
    if which == "lognormal":
        name = data.draw(st.sampled_from(["log_mean", "log_sd"]))
        domain = TOKEN_LOG_MEAN if name == "log_mean" else TOKEN_LOG_SD
        raises_naming(name, token_laws.lognormal, **{"log_mean": log_mean, "log_sd": 1.0,
                                                      name: data.draw(invalid(domain))})
    elif which == "uniform":
        name = data.draw(st.sampled_from(["low", "high"]))
        raises_naming(name, token_laws.uniform, **{"low": low, "high": low + 1.0,
                                                    name: data.draw(invalid(TOKEN_BOUND))})
        raises_naming("high", token_laws.uniform, low + 1.0, low)     # high must exceed low
    else:
        name = data.draw(st.sampled_from(["mean", "sd", "low", "high"]))
        domain = TOKEN_SD if name == "sd" else TOKEN_BOUND
        bad = data.draw(invalid(domain))
        if name == "high" and bad == math.inf:
            return                                   # high = inf means untruncated
        raises_naming(name, token_laws.truncated_normal,
                      **{"mean": mean, "sd": 1.0, "low": low, name: bad})


@FUZZ_VECTOR
@given(sweep(st.lists(st.integers(1, token_laws.MAX_TOKEN_GRID), min_size=1, max_size=12)),
       sweep(st.floats(-2.0, 1e7, allow_nan=False)), st.sampled_from([None, 0, "count"]),
       st.sampled_from([0.0, -3.0, 1.5, math.nan, math.inf, "x", token_laws.MAX_TOKEN_GRID + 1]),
       st.data())
def test_empirical_tokens(samples, k, column, bad, data):
    """EmpiricalTokens (from_counts and its scipy-like methods) and empirical_from_csv."""
    k = np.array(k)
    for counts in samples:
        law = token_laws.EmpiricalTokens.from_counts(counts)
        values = (law.pmf(k), law.cdf(k), law.sf(k), law.ppf(np.clip(k / 1e7, 0, 1)),
                  law.rvs(5, random_state=0), law.moment(2), law.mean(), law.var(), law.std(),
                  law.support())
        assert_no_nan(values)
        assert law.mean() == pytest.approx(np.mean(counts), rel=1e-12)
        assert law.var() >= 0 and law.support() == (min(counts), max(counts))
        header = "" if column != "count" else "count\n"
        text = header + "\n".join(str(c) for c in counts)
        again = token_laws.empirical_from_csv(text, column=column)
        assert np.array_equal(again.values, law.values) and np.allclose(again.probs, law.probs)
    tally(token_laws.EmpiricalTokens, POINTS)
    tally(token_laws.empirical_from_csv, POINTS)
    counts = list(samples[0])
    counts[data.draw(st.integers(0, len(counts) - 1))] = bad
    raises_naming("counts", token_laws.EmpiricalTokens.from_counts, counts)
    raises_naming("csv", token_laws.empirical_from_csv,
                  "count\n" + "\n".join(str(c) for c in counts))       # a bad row, not a header
    raises_naming("counts", token_laws.EmpiricalTokens.from_counts, [])



# ============================================================ engine.core.stats, engine.core.jit

@FUZZ_VECTOR
@given(values=st.lists(st.floats(-1e12, 1e12), min_size=1, max_size=400),
       q=st.lists(st.floats(0.0, 100.0), min_size=1, max_size=4),
       counted=st.integers(0, 10 ** 6), scale=st.floats(1e-9, 1e9))
def test_simulation_statistics(values, q, counted, scale):
    """Percentiles equal numpy's linear ones; the batch-means half-width is finite
    and non-negative when every group holds a job, inf (unreliable) otherwise."""
    x = np.array(values)
    got = stats_core.percentiles(x.copy(), q)
    tally(stats_core.percentiles)
    assert np.allclose(got, np.percentile(x, q), rtol=1e-12, atol=1e-12 * np.max(np.abs(x)))
    rng = np.random.default_rng(counted)
    sums = scale * rng.random(stats_core.N_GROUPS) * max(counted, 1) / stats_core.N_GROUPS
    half, reliable = stats_core.ci95_half_width(sums, counted)
    tally(stats_core.ci95_half_width)
    assert isinstance(reliable, bool)
    if counted < stats_core.N_GROUPS:
        assert half == np.inf and not reliable
    else:
        assert np.isfinite(half) and half >= 0.0


@FUZZ
@given(dof=st.one_of(st.integers(1, 400), st.integers(401, 10 ** 6)),
       bad=st.one_of(st.integers(-10, 0), st.none(), st.text(max_size=4), st.floats(),
                     st.booleans()))
def test_student_t975(dof, bad):
    """The Student-t 97.5 % quantile against scipy, falling with the degrees of freedom
    toward the normal's 1.96; anything but a whole number ≥ 1 refused naming dof."""
    from scipy import stats as scipy_stats
    t = stats_core.t975(dof)
    tally(stats_core.t975)
    assert 1.959963984540054 < t <= 12.706204736174707
    assert t == pytest.approx(float(scipy_stats.t.ppf(0.975, dof)), rel=1e-12)
    assert stats_core.t975(dof + 1) < t and stats_core.t975(np.int64(dof)) == t
    raises_naming("dof", stats_core.t975, bad)


def _plain_sum(a, b):
    return a + b


@functools.cache
def _compiled_sum():
    """``jit.compiled(_plain_sum)``, made once: no drawn ``backend`` changes it (made
    again in each of the 2,000 examples, it cost ~3.5 ms each: a load from numba's cache)."""
    fast = jit.compiled(_plain_sum)
    tally(jit.compiled)
    return fast


@FUZZ
@given(backend=st.one_of(st.sampled_from(jit.BACKENDS), st.text(max_size=8), st.integers()))
def test_jit_switch(backend):
    """``choose`` returns the compiled loop for None/"numba", the plain one for "numpy",
    and refuses anything else naming ``backend``; ``compiled`` gives a callable with
    the same results."""
    plain, fast = _plain_sum, _compiled_sum()
    assert fast(2, 3) == plain(2, 3) == 5
    if backend in jit.BACKENDS:
        chosen = jit.choose(backend, fast, plain)
        assert chosen is (plain if backend == "numpy" else fast)
    else:
        raises_naming("backend", jit.choose, backend, fast, plain)
    tally(jit.choose)


@FUZZ
@given(st.lists(st.one_of(st.integers(-3, 10), st.floats(allow_nan=True),
                          st.just(float(token_laws.MAX_TOKEN_GRID + 1))), max_size=12),
       st.lists(st.integers(0, 5), max_size=12))
def test_reading_token_counts(values, tokens):
    """invalid_token_count: the first entry that is not a number (NaN, ±inf) if any, else
    the first that is not a whole number in [1, MAX_TOKEN_GRID], else None, written here
    entry by entry; nonzero_token_counts: the counts above 0 in order and how many were 0;
    mean_tokens: a law's mean, E[n] (a sample's own mean for its empirical law, the
    lognormal's exp(μ + σ²/2))."""
    finite = [math.isfinite(float(v)) for v in values]
    whole = [f and 1 <= v <= token_laws.MAX_TOKEN_GRID and float(v) == int(v)
             for v, f in zip(values, finite)]
    want = ((finite.index(False), "nan") if not all(finite) else
            (whole.index(False), "range") if not all(whole) else None)
    assert token_laws.invalid_token_count(values) == want
    tally(token_laws.invalid_token_count)
    kept, zero = token_laws.nonzero_token_counts(np.array(tokens, dtype=int))
    assert kept.tolist() == [t for t in tokens if t > 0] and zero == tokens.count(0)
    tally(token_laws.nonzero_token_counts)
    if kept.size:
        law = token_laws.EmpiricalTokens.from_counts(kept)
        assert token_laws.mean_tokens(law) == pytest.approx(sum(kept.tolist()) / kept.size,
                                                             rel=1e-12)
    assert token_laws.mean_tokens(token_laws.lognormal(5.0, 0.5)) == pytest.approx(
        math.exp(5.0 + 0.125), rel=1e-12)
    tally(token_laws.mean_tokens)


# ============================================================ engine.core.token_laws: clipped_tokens

CLIP_CAPS = st.one_of(st.integers(1, 3000), st.sampled_from([0, 1, 2, math.inf, 0.0, 7.0]),
                      st.integers(1, 3000).map(np.int64))
BAD_CAPS = st.sampled_from([-1, -0.5, 0.5, 1.5, 2.25, math.nan, -math.inf, True, None])


def _clip_laws(params, counts):
    """The laws of one example: a lognormal, a uniform, a truncated normal (grids of at
    most ~2·10⁵ tokens: cost) and an empirical law of ``counts``."""
    log_mean, log_sd, low, width, mean, sd = params
    return [token_laws.lognormal(log_mean, log_sd), token_laws.uniform(low, low + width),
            token_laws.truncated_normal(mean, sd, low),
            token_laws.EmpiricalTokens.from_counts(counts)]


def _clipped_mean(law, cap) -> float:
    """E[min(n, cap)] = Σ_{k=0}^{cap−1} P(n > k) = 1 + Σ_{k=1}^{cap−1} sf_X(k) for
    n = max(1, ⌈X⌉) (an empirical law: Σ p·min(v, cap)), from the law's own ``sf``."""
    if isinstance(law, token_laws.EmpiricalTokens):
        return float(np.sum(law.probs * np.minimum(law.values, cap)))
    return 1.0 + float(np.sum(law.sf(np.arange(1.0, cap))))


@fuzz(FULL_CASES, 4)  # 4 laws an example; a parametric law is laid on its grid (~1-5 ms)
@given(st.tuples(st.floats(0.0, 6.0), st.floats(0.05, 0.8), valid(TOKEN_BOUND, high=3000.0),
                 st.floats(0.5, 3000.0), st.floats(0.0, 3000.0), st.floats(1.0, 1000.0)),
       st.lists(st.integers(1, 5000), min_size=1, max_size=20), CLIP_CAPS, BAD_CAPS)
def test_clipped_tokens(params, counts, n_max, bad):
    """clipped_tokens: the law of min(n, n_max) on empirical and parametric laws: values
    whole, ≤ n_max, probabilities summing to 1, the mass at n_max = P(n ≥ n_max), mean
    E[min(n, n_max)] from the law's survival function; n_max 0 or inf leaves the law as
    it is (empirical: the same values and probabilities; parametric: the same cdf on its
    grid); a bad n_max is a ValueError naming it."""
    cap = math.inf if n_max == 0 else float(n_max)
    for law in _clip_laws(params, counts):
        c = token_laws.clipped_tokens(law, n_max)
        assert isinstance(c, token_laws.EmpiricalTokens)
        assert_no_nan((c.values, c.probs))
        assert np.all(c.values >= 1) and np.all(c.values == np.round(c.values))
        assert np.all(np.diff(c.values) > 0) and np.all(c.probs >= 0)
        assert abs(c.probs.sum() - 1.0) <= 1e-12
        empirical = isinstance(law, token_laws.EmpiricalTokens)
        if math.isfinite(cap):
            assert c.values[-1] <= cap
            assert close(c.mean(), _clipped_mean(law, cap), 1e-9)
            at_cap = 1.0 if cap == 1 else float(law.sf(cap - 1.0))    # P(n ≥ cap)
            assert abs(float(c.pmf(cap)) - at_cap) <= 1e-9
        elif empirical:
            assert np.array_equal(c.values, law.values) and np.array_equal(c.probs, law.probs)
        else:
            k = np.arange(1.0, c.values[-1] + 1.0)
            assert np.allclose(c.cdf(k), token_laws.token_cdf(law, k), rtol=0.0, atol=1e-12)
            assert close(c.mean(), _clipped_mean(law, c.values[-1] + 1.0), 1e-9)
        if empirical:
            assert c.n_samples == law.n_samples
    tally(token_laws.clipped_tokens, 4)
    raises_naming("n_max", token_laws.clipped_tokens, token_laws.uniform(0.0, 10.0), bad)
    raises_naming("n_max", token_laws.clipped_tokens,
                  token_laws.EmpiricalTokens.from_counts(counts), bad)


def test_clipped_tokens_non_numbers():
    """A text or a list n_max is a ValueError naming n_max, like a bad number."""
    law = token_laws.EmpiricalTokens.from_counts([1, 5, 9])
    for bad in ("x", "", [3], {}):
        raises_naming("n_max", token_laws.clipped_tokens, law, bad)


# ============================================================ every public function has a case

# Public name -> the test that fuzzes it.  A result or data class (no arguments of its
# own to fuzz) names the test that builds and checks it and the function it comes from.
FUZZED = {
    stats_core: {"percentiles": test_simulation_statistics,
                 "ci95_half_width": test_simulation_statistics, "t975": test_student_t975},
    jit: {"compiled": test_jit_switch, "choose": test_jit_switch},
    fit: {
        "linear_fit": test_fits, "fit_batch_profile": test_fits, "fit_token_latency": test_fits,
        "fit_token_latency_with_input": test_fits,
        "LinearFit": (test_fits, "linear_fit"), "BatchProfileFit": (test_fits, "fit_batch_profile"),
        "TokenLatencyFit": (test_fits, "fit_token_latency")},
    p_batch: {"load_batch_profile": (test_presets, PRESET_LOADERS),
              "batch_profiles": (test_presets, PRESET_LOADERS),
              "BatchProfile": (test_presets, "load_one(path)")},
    p_token: {"load_token_latency_profile": (test_presets, PRESET_LOADERS),
              "token_latency_profiles": (test_presets, PRESET_LOADERS),
              "TokenLatencyProfile": (test_presets, "load_one(path)")},
    p_llm: {"load_llm_batch_time": (test_presets, PRESET_LOADERS),
            "llm_batch_time_presets": (test_presets, PRESET_LOADERS),
            "LLMBatchTimePreset": (test_presets, "load_one(path)")},
    p_pipeline: {**{name: (test_presets, PRESET_LOADERS) for name in (
        "load_gpu_spec", "gpu_specs", "load_pipeline_workload", "pipeline_workloads")},
        "GpuSpec": (test_presets, "load_one(path)"),
        "PipelineWorkload": (test_presets, "load_one(path)")},
    token_laws: {
        "lognormal": test_token_laws, "uniform": test_token_laws,
        "truncated_normal": test_token_laws, "token_cdf": test_token_laws,
        "token_pmf": test_token_laws, "token_quantile": test_token_laws,
        "sample_tokens": test_token_laws, "grid_top": test_token_laws, "law_top": test_token_laws,
        "binned_pmf": test_token_laws, "EmpiricalTokens": test_empirical_tokens,
        "empirical_from_csv": test_empirical_tokens, "clipped_tokens": test_clipped_tokens,
        "invalid_token_count": test_reading_token_counts,
        "nonzero_token_counts": test_reading_token_counts,
        "mean_tokens": test_reading_token_counts},
}


# ============================================================ engine.presets: token-law histograms

def _token_law_text(scale, gaps, kind):
    """A valid token-law file: increasing bins from the drawn gaps (whole counts ≥ 1),
    each ``tokens`` inside its bin, request counts growing with ``scale``."""
    first = np.cumsum(np.asarray(gaps, dtype=int))
    last = np.append(first[:-1] + (np.diff(first) - 1) // 2, first[-1])
    tokens = (first + last) // 2
    requests = [max(1, int(round(scale * (i + 1)))) for i in range(first.size)]
    lines = ['id = "law"', 'name = "fuzz"', 'source = "generated"', f'kind = "{kind}"', "[bins]"]
    lines += [f"{k} = {_toml_value([int(x) for x in v])}" for k, v in (
        ("first_tokens", first), ("last_tokens", last), ("tokens", tokens),
        ("requests", requests))]
    return "\n".join(lines) + "\n"


TOKEN_LAW_FIELDS = ["first_tokens", "last_tokens", "tokens", "requests", "kind"]


@FUZZ_VECTOR
@given(sweep(st.floats(1e-3, 1e3)), st.lists(st.integers(1, 5000), min_size=2, max_size=8),
       st.sampled_from(presets.TOKEN_LAW_KINDS),
       st.sampled_from([-1.0, 0.0, math.nan, math.inf, "text", True, 1.5, None]), st.data())
def test_token_law_presets(tmp_path_factory, scales, gaps, kind, bad_value, data):
    """load_token_law_preset and token_law_presets: ``PRESET_FILES`` valid files load (the
    directory too) into a law without NaN whose mean and quantiles lie in the bins'
    range; a file with one bad field raises ``ValueError`` naming the file and the field
    (every drawn bad value is invalid for every field: bin columns are whole positive
    numbers, ``kind`` is "output" or "prompt")."""
    folder = tmp_path_factory.mktemp("token_laws")
    for i, scale in enumerate(scales[:PRESET_FILES]):
        path = folder / f"law{i}.toml"
        path.write_text(_token_law_text(scale, gaps, kind).replace('id = "', f'id = "{i}'))
        preset = presets.load_token_law_preset(path)
        assert_no_nan(preset)
        law = preset.law()
        q = token_laws.token_quantile(law, np.array([0.0, 0.5, 0.99, 1.0]))
        assert not np.isnan(q).any() and not np.isnan(law.mean())
        assert preset.first_tokens[0] <= law.mean() <= preset.last_tokens[-1]
        assert np.all((q >= preset.first_tokens[0]) & (q <= preset.last_tokens[-1]))
        assert preset.n_requests == int(preset.requests.sum())
    tally(presets.load_token_law_preset, PRESET_FILES)
    assert len(presets.token_law_presets(folder)) == PRESET_FILES
    tally(presets.token_law_presets)
    field = data.draw(st.sampled_from(TOKEN_LAW_FIELDS), label="field")
    text = _token_law_text(1.0, gaps, kind)
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"{field} =")]
    if bad_value is not None:
        value = bad_value if field == "kind" else [bad_value] * len(gaps)
        lines.insert(len(lines) if field != "kind" else 3, f"{field} = {_toml_value(value)}")
    path = folder / "bad.toml"
    path.write_text("\n".join(lines) + "\n")
    raises_naming(field, presets.load_token_law_preset, path)
    raises_naming("bad.toml", presets.load_token_law_preset, path)


FUZZED[p_token_law] = {
    "load_token_law_preset": test_token_law_presets,
    "token_law_presets": test_token_law_presets,
    "TokenLawPreset": (test_token_law_presets, "load_token_law_preset")}


# ============================================================ engine.presets: offline/online pairs

def _pair_text(scale, gaps):
    """A valid pair file: batch sizes and concurrencies increasing from the drawn gaps,
    throughputs and latencies growing with ``scale``."""
    b = [int(x) for x in np.cumsum(gaps)]
    n = [4 * x for x in b]
    rows = range(1, len(b) + 1)
    return "\n".join([
        'id = "pair"', 'name = "fuzz"', 'source = "generated"', "[offline]",
        'label = "gpu · 1 instance"', f"client_batch_size = {_toml_value(b)}",
        f"inferences_per_second = {_toml_value([100.0 * scale * i for i in rows])}",
        f"avg_latency_ms = {_toml_value([scale + i for i in rows])}", "[online]",
        'label = "gpu · 2 instances"', "model_instances = 2", "max_batch_size = 64",
        f"concurrent_client_requests = {_toml_value(n)}",
        f"inferences_per_second = {_toml_value([150.0 * scale * i for i in rows])}",
        f"avg_latency_ms = {_toml_value([2 * scale + i for i in rows])}",
        f"p99_latency_ms = {_toml_value([3 * scale + i for i in rows])}"]) + "\n"


PAIR_FIELDS = ["client_batch_size", "inferences_per_second", "avg_latency_ms",
               "concurrent_client_requests", "p99_latency_ms", "model_instances",
               "max_batch_size", "label"]


@FUZZ_VECTOR
@given(sweep(st.floats(1e-3, 1e3)), st.lists(st.integers(1, 64), min_size=2, max_size=8),
       st.sampled_from([-1.0, 0.0, math.nan, math.inf, "text", True, 1.5, None]), st.data())
def test_online_pair_presets(tmp_path_factory, scales, gaps, bad_value, data):
    """load_online_pair and online_pairs: ``PRESET_FILES`` valid files load (the directory
    too) into a profile whose batch time is 1000·b/throughput and a sweep with the file's
    columns, without NaN; a file with one bad field raises ``ValueError`` naming the file
    and the field (a missing p99 column is allowed: it is optional)."""
    folder = tmp_path_factory.mktemp("online_pairs")
    for i, scale in enumerate(scales[:PRESET_FILES]):
        path = folder / f"pair{i}.toml"
        path.write_text(_pair_text(scale, gaps).replace('id = "', f'id = "{i}'))
        pair = presets.load_online_pair(path)
        assert_no_nan(pair)
        b = np.cumsum(gaps)
        assert np.allclose(pair.profile.batch_size, b)
        assert np.allclose(pair.profile.throughput_per_s,
                           100.0 * scale * np.arange(1, b.size + 1), rtol=1e-12)
        assert pair.sweep.model_instances == 2 and pair.sweep.max_batch_size == 64
        assert np.all(np.diff(pair.sweep.concurrency) > 0)
        assert_no_nan(pair.profile.fit())
    tally(presets.load_online_pair, PRESET_FILES)
    assert len(presets.online_pairs(folder)) == PRESET_FILES
    tally(presets.online_pairs)
    field = data.draw(st.sampled_from(PAIR_FIELDS), label="field")
    section = "online" if field in ("concurrent_client_requests", "p99_latency_ms",
                                    "model_instances", "max_batch_size") else \
        data.draw(st.sampled_from(["offline", "online"]), label="section")
    lines = _pair_text(1.0, gaps).splitlines()
    at = lines.index(f"[{section}]")
    end = len(lines) if section == "online" else lines.index("[online]")
    for j in range(at + 1, end):
        if lines[j].startswith(f"{field} ="):
            del lines[j]
            break
    if bad_value is not None:
        column = field not in ("model_instances", "max_batch_size", "label")
        value = [bad_value] * len(gaps) if column else bad_value
        lines.insert(at + 1, f"{field} = {_toml_value(value)}")
    path = folder / "bad.toml"
    path.write_text("\n".join(lines) + "\n")
    if bad_value is None and field == "p99_latency_ms":
        assert presets.load_online_pair(path).sweep.p99_latency_ms is None
        return
    valid = (field == "label" and bad_value == "text") or (      # a label is any text
        bad_value == 1.5 and field in ("inferences_per_second", "avg_latency_ms",
                                       "p99_latency_ms")) or (   # a valid rate or time
        bad_value is None and field == "client_batch_size"
        and section == "online")                                 # nothing to remove there
    loads_or_refuses(presets.load_online_pair, path, field, valid)


FUZZED[p_pair] = {
    "load_online_pair": test_online_pair_presets,
    "online_pairs": test_online_pair_presets,
    "OnlinePair": (test_online_pair_presets, "load_online_pair")}


# ============================================================ engine.core.two_moment

TWO_MOMENT_DOMAINS = {"rate": two_moment.RATE, "mean_service": two_moment.MEAN_SERVICE,
                      "n_servers": two_moment.N_SERVERS,
                      "scv_arrival": two_moment.SCV_ARRIVAL,
                      "scv_service": two_moment.SCV_SERVICE}


@FUZZ_VECTOR
@given(loads(), valid(two_moment.MEAN_SERVICE), valid(two_moment.N_SERVERS),
       sweep(valid(two_moment.SCV_ARRIVAL)), valid(two_moment.SCV_SERVICE), st.data())
def test_two_moment(rho, mean_service, n_servers, scv_arrival, scv_service, data):
    """mean_wait_gg1 and mean_wait_ggn over loads below and beyond capacity: no NaN, inf
    exactly at ρ ≥ 1, ≥ 0, equal at one server; a bad parameter is named."""
    for fn, n in ((two_moment.mean_wait_gg1, 1), (two_moment.mean_wait_ggn, n_servers)):
        rate = at_load(rho, n / mean_service)
        with np.errstate(over="ignore", invalid="ignore"):
            unstable = ~(rate * mean_service / n < 1)
        servers = () if fn is two_moment.mean_wait_gg1 else (n,)
        w = fn(rate, mean_service, *servers, scv_arrival, scv_service)
        assert_inf_iff(w, unstable, fn.__name__)
        assert np.all(w >= 0)
        tally(fn, POINTS)
    rate = at_load(rho, 1 / mean_service)
    assert close(two_moment.mean_wait_ggn(rate, mean_service, 1, scv_arrival, scv_service),
                 two_moment.mean_wait_gg1(rate, mean_service, scv_arrival, scv_service), 1e-9)
    params = dict(rate=rate, mean_service=mean_service, n_servers=n_servers,
                  scv_arrival=scv_arrival, scv_service=scv_service)
    p, bad = corrupt(data, params, TWO_MOMENT_DOMAINS)
    rejects((two_moment.mean_wait_gg1, two_moment.mean_wait_ggn), p, bad)


# ============================================================ engine.core.arrival_input

class _Process:
    """A stand-in arrival process: ``times`` scaled to n draws (or returned as they are)."""

    def __init__(self, rate, times, exact=False):
        self.rate, self.times, self.exact = rate, times, exact

    def sample(self, n, rng):
        if self.exact:
            return self.times
        return np.sort(rng.random(n)) * n / max(self.rate, 1e-300) if n else np.zeros(0)


TIMES = st.lists(st.floats(0.0, 1e9, allow_subnormal=False), min_size=1, max_size=40).map(sorted)
BAD_TIMES = st.sampled_from([[], [[0.0, 1.0]], [1.0, 0.5], [math.nan], [0.0, math.inf],
                             [-1.0, 2.0], "text", None, {"t": 1.0}])


@FUZZ_VECTOR
@given(st.lists(TIMES, min_size=POINTS, max_size=POINTS),
       st.lists(st.floats(1e-9, 1e9), min_size=POINTS, max_size=POINTS),
       st.integers(1, 200), BAD_TIMES,
       st.sampled_from([0.0, -1.0, math.nan, math.inf, "fast", None]), st.integers(0, 2 ** 32))
def test_arrival_input(traces, rates, n, bad_times, bad_rate, seed):
    """check_arrival_times, arrival_rate, arrival_times, is_arrival_process on traces and
    process objects: a trace comes back as it went in, a process gives n sorted times, a
    rate is positive (inf for a trace without span); bad input names ``arrivals``."""
    rng = np.random.default_rng(seed)
    for times, rate in zip(traces, rates):
        t = arrival_input.check_arrival_times(times)
        assert np.array_equal(t, times) and not arrival_input.is_arrival_process(times)
        assert np.array_equal(arrival_input.arrival_times(times, n, rng), t)
        r = arrival_input.arrival_rate(times)
        assert r > 0 and not math.isnan(r)
        process = _Process(rate, None)
        assert arrival_input.is_arrival_process(process)
        drawn = arrival_input.arrival_times(process, n, rng)
        assert drawn.shape == (n,) and np.all(np.diff(drawn) >= 0) and np.all(drawn >= 0)
        assert arrival_input.arrival_rate(process) == rate
    for f in (arrival_input.check_arrival_times, arrival_input.arrival_rate,
              arrival_input.arrival_times, arrival_input.is_arrival_process):
        tally(f, POINTS)
    raises_naming("arrivals", arrival_input.check_arrival_times, bad_times)
    raises_naming("arrivals", arrival_input.arrival_times, bad_times, n, rng)
    raises_naming("arrivals", arrival_input.arrival_rate, _Process(bad_rate, None))
    raises_naming("arrivals", arrival_input.arrival_times, _Process(1.0, bad_times, True), n,
                  rng)


FUZZED[two_moment] = {"mean_wait_gg1": test_two_moment, "mean_wait_ggn": test_two_moment}
FUZZED[arrival_input] = {
    "check_arrival_times": test_arrival_input, "arrival_rate": test_arrival_input,
    "arrival_times": test_arrival_input, "is_arrival_process": test_arrival_input}


# ============================================================ engine.presets: arrival summaries

def _arrival_text(scale, gaps):
    """A valid arrival-preset file: windows increasing from the drawn gaps, statistics and
    MMPP-2 rates growing with ``scale`` (rate_2 may be 0: an interrupted Poisson process)."""
    windows = [float(x) for x in np.cumsum(gaps)]
    n = len(windows)
    return "\n".join([
        'id = "arr"', 'name = "fuzz"', 'trace_name = "a fuzz trace"', 'source = "generated"',
        "n_requests = 1000", f"duration_s = {_toml_value(100.0 * scale)}",
        f"mean_rate_per_s = {_toml_value(9.99 / scale)}", f"scv = {_toml_value(scale)}",
        "[windows]", f"window_s = {_toml_value(windows)}",
        f"idc = {_toml_value([scale * (i + 1) for i in range(n)])}",
        f"peak_to_mean = {_toml_value([1.0 + scale / (i + 1) for i in range(n)])}",
        "[mmpp2]", f"rate_1_per_s = {_toml_value(10.0 * scale)}", "rate_2_per_s = 0.0",
        f"switch_12_per_s = {_toml_value(scale)}", "switch_21_per_s = 0.5",
        "[rate_over_time]", f"bin_s = {_toml_value(scale)}",
        f"requests = {_toml_value([i % 3 for i in range(n + 2)])}"]) + "\n"


ARRIVAL_FIELDS = ["n_requests", "duration_s", "mean_rate_per_s", "scv", "window_s", "idc",
                  "peak_to_mean", "rate_1_per_s", "switch_12_per_s", "switch_21_per_s",
                  "bin_s", "requests", "trace_name"]


@FUZZ_VECTOR
@given(sweep(st.floats(1e-3, 1e3)), st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=6),
       st.sampled_from([-1.0, 0.0, math.nan, math.inf, "text", True, 0.5, None]), st.data())
def test_arrival_presets(tmp_path_factory, scales, gaps, bad_value, data):
    """load_arrival_preset and arrival_presets: ``PRESET_FILES`` valid files load (the
    directory too) without NaN, into an MMPP-2 with the file's rates and a rate over time
    of requests/bin_s; a file with one bad field raises ``ValueError`` naming the file and
    the field (0.5 is valid for some fields, 0 for an IDC or a bin count: then the file
    loads)."""
    folder = tmp_path_factory.mktemp("arrivals")
    for i, scale in enumerate(scales[:PRESET_FILES]):
        path = folder / f"arr{i}.toml"
        path.write_text(_arrival_text(scale, gaps).replace('id = "', f'id = "{i}'))
        preset = presets.load_arrival_preset(path)
        assert_no_nan(preset)
        process = preset.mmpp2()
        assert process.rate_1 == preset.rate_1_per_s and process.rate_2 == 0.0
        assert process.label == "MMPP-2 fitted to a fuzz trace"
        assert np.array_equal(preset.rate_per_s, preset.requests_per_bin / preset.bin_s)
        assert preset.bin_start_s.size == preset.requests_per_bin.size
    tally(presets.load_arrival_preset, PRESET_FILES)
    assert len(presets.arrival_presets(folder)) == PRESET_FILES
    tally(presets.arrival_presets)
    field = data.draw(st.sampled_from(ARRIVAL_FIELDS), label="field")
    lines = [ln for ln in _arrival_text(1.0, gaps).splitlines()
             if not ln.startswith(f"{field} =")]
    if bad_value is not None:
        column = field in ("window_s", "idc", "peak_to_mean", "requests")
        value = [bad_value] * (len(gaps) + 2 * (field == "requests")) if column else bad_value
        section = {"window_s": "[windows]", "idc": "[windows]", "peak_to_mean": "[windows]",
                   "rate_1_per_s": "[mmpp2]", "switch_12_per_s": "[mmpp2]",
                   "switch_21_per_s": "[mmpp2]", "bin_s": "[rate_over_time]",
                   "requests": "[rate_over_time]"}.get(field)
        at = lines.index(section) + 1 if section else 4
        lines.insert(at, f"{field} = {_toml_value(value)}")
    path = folder / "bad.toml"
    path.write_text("\n".join(lines) + "\n")
    valid = (bad_value == 0.5 and field not in ("n_requests", "peak_to_mean", "requests",
                                                "trace_name")
             and not (field == "window_s" and len(gaps) > 1)) or (
        bad_value == 0.0 and field in ("idc", "requests")) or (  # an IDC or a bin count of 0
        bad_value == "text" and field == "trace_name")           # a name is any text
    loads_or_refuses(presets.load_arrival_preset, path, field, valid)


FUZZED[p_arrival] = {
    "load_arrival_preset": test_arrival_presets,
    "arrival_presets": test_arrival_presets,
    "ArrivalPreset": (test_arrival_presets, "load_arrival_preset")}


# ============================================================ engine.presets: hardware prices

PROFILE_IDS = ("prof_a", "prof_b", "prof_c")


def _price_text(gpus, usd, power, uses):
    """A valid hardware-price file: ``gpus`` GPUs an instance at ``usd`` $/h, ``power`` W
    a GPU, profile id → GPUs (each ≤ ``gpus``)."""
    return "\n".join([
        'id = "hw"', 'name = "fuzz GPU"', 'source = "generated"', 'instance = "fuzz.large"',
        f"gpus_per_instance = {gpus}", f"instance_usd_per_hour = {_toml_value(usd)}",
        f"board_power_w = {_toml_value(power)}", "", "[gpus_per_profile]"]
        + [f"{pid} = {n}" for pid, n in uses.items()]) + "\n"


PRICE_FIELDS = ["id", "name", "source", "instance", "gpus_per_instance",
                "instance_usd_per_hour", "board_power_w", "gpus_per_profile", "prof_a",
                "too_many_gpus", "unknown_field"]
PRICE_TEXT_FIELDS = ("id", "name", "source", "instance")


@st.composite
def _price_files(draw):
    """(GPUs an instance, $/h, W, {profile id: GPUs}) of a valid file."""
    gpus = draw(st.integers(1, 16))
    ids = draw(st.lists(st.sampled_from(PROFILE_IDS), min_size=1, max_size=3, unique=True))
    uses = {pid: draw(st.integers(1, gpus)) for pid in sorted(ids)}
    return (gpus, draw(st.floats(1e-3, 1e4)), draw(st.floats(1.0, 5e3)),
            {"prof_a": uses.pop("prof_a", 1), **uses})


@functools.cache
def _shipped_profile_ids() -> frozenset:
    """Every shipped profile a price may name: batch profiles, LLM batch-time and serving
    presets (read once: the serving presets, ~4 ms, are not cached by the engine)."""
    from engine.llm_serving import serving_presets
    return frozenset(set(presets.batch_profiles()) | set(presets.llm_batch_time_presets())
                     | set(serving_presets()))


@fuzz(FULL_CASES, PRESET_FILES)    # PRESET_FILES files an example (~1 ms each)
@given(st.lists(_price_files(), min_size=PRESET_FILES, max_size=PRESET_FILES),
       st.sampled_from(PRICE_FIELDS),
       st.sampled_from([-1.0, 0.0, math.nan, math.inf, "text", True, 1.5, None]))
def test_hardware_prices(tmp_path_factory, files, field, bad_value):
    """load_hardware_price and hardware_prices: the shipped files all load (each profile
    they price is a shipped batch profile or LLM batch-time preset); ``PRESET_FILES``
    generated files load (the directory too) with $/GPU-hour = instance price / GPUs;
    a copy with one bad field (unknown, missing, negative, not whole, a profile using
    more GPUs than the instance has) raises ``ValueError`` naming the file and the
    field ("text" is a valid text field, 1.5 a valid price or power: then it loads)."""
    shipped = presets.hardware_prices()
    assert shipped and len(shipped) == len(list(presets.HARDWARE_PRICE_DIR.glob("*.toml")))
    profiles = _shipped_profile_ids()
    for price in shipped.values():
        assert_no_nan(price)
        assert {pid for pid, _ in price.gpus_per_profile} <= profiles, price.id
    tally(presets.hardware_prices)
    folder = tmp_path_factory.mktemp("hardware_prices")
    for i, (gpus, usd, power, uses) in enumerate(files):
        path = folder / f"hw{i}.toml"
        path.write_text(_price_text(gpus, usd, power, uses).replace('id = "', f'id = "{i}'))
        price = presets.load_hardware_price(path)
        assert_no_nan(price)
        assert (price.gpus_per_instance, price.instance_usd_per_hour,
                price.board_power_w) == (gpus, usd, power)
        assert dict(price.gpus_per_profile) == uses
        assert price.usd_per_gpu_hour == usd / gpus
    tally(presets.load_hardware_price, PRESET_FILES)
    assert sorted(presets.hardware_prices(folder)) == [f"{i}hw" for i in range(PRESET_FILES)]
    gpus, usd, power, uses = files[0]
    lines = _price_text(gpus, usd, power, uses).splitlines()
    table = lines.index("[gpus_per_profile]")
    if field == "unknown_field":
        lines.insert(table if bad_value is None else 0,
                     f"unknown_field = {_toml_value(1 if bad_value is None else bad_value)}")
    elif field == "too_many_gpus" or (field == "prof_a" and bad_value is None):
        field = "prof_a"                              # a profile on more GPUs than there are
        lines[table + 1] = f"prof_a = {gpus + (1 if bad_value is None else 8)}"
    else:
        at = next(j for j, ln in enumerate(lines) if ln.startswith(f"{field} =")
                  or ln == f"[{field}]")
        if field == "gpus_per_profile":               # the whole table
            del lines[at:]
            if bad_value is not None:
                lines.insert(0, f"gpus_per_profile = {_toml_value(bad_value)}")
        else:
            del lines[at]
            if bad_value is not None:
                lines.insert(at, f"{field} = {_toml_value(bad_value)}")
    path = folder / "bad.toml"
    path.write_text("\n".join(lines) + "\n")
    valid = (bad_value == "text" and field in PRICE_TEXT_FIELDS) or (
        bad_value == 1.5 and field in ("instance_usd_per_hour", "board_power_w"))
    loads_or_refuses(presets.load_hardware_price, path, field, valid)


FUZZED[p_price] = {
    "load_hardware_price": test_hardware_prices,
    "hardware_prices": test_hardware_prices,
    "HardwarePrice": (test_hardware_prices, "load_hardware_price")}


# ============================================================ engine.presets.schema

SCHEMA_DOMAINS = (domains.PRESET_VALUE, domains.PARALLEL_FRACTION, domains.REUSE_FACTOR,
                  domains.TRACE_REQUESTS, domains.PEAK_TO_MEAN, domains.INSTANCE_GPUS,
                  domains.PHASE_RATE, domains.SWITCH_RATE, LLM_K2, B_MAX)
SCHEMA_VALUES = st.one_of(st.floats(-10.0, 1e6), st.integers(-5, 10 ** 6),
                          st.sampled_from([0, 0.0, 0.5, 1, 1.0, 1.5, 2, 1e300, math.nan, math.inf,
                                           -math.inf, "text", "", "  ", True, False, [1.0], {}]))


@dataclasses.dataclass(frozen=True)
class _SchemaPreset:
    """A preset dataclass of every kind of field ``schema.scalars`` reads."""

    id: str
    count: int
    share: float
    size: float | None = None
    notes: tuple = ()


def _domain_holds(value, domain) -> bool:
    """The oracle of ``schema.number``: a real number (not a bool), finite, that
    ``Domain.check`` accepts."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return False
    try:
        domain.check(value)
    except ValueError:
        return False
    return True


@FUZZ_VECTOR
@given(domain=st.sampled_from(SCHEMA_DOMAINS),
       values=st.lists(SCHEMA_VALUES, min_size=POINTS, max_size=POINTS),
       floats=st.lists(st.floats(-1.0, 1e4), min_size=0, max_size=6),
       n_cells=st.integers(0, POINTS))
@example(domain=domains.PRESET_VALUE, values=[float(i) for i in range(1, POINTS + 1)],
         floats=[1.0, 2.0, 5.0], n_cells=POINTS).via("every function a valid case")
def test_preset_schema(tmp_path_factory, domain, values, floats, n_cells):
    """The presets' shared validator: ``number`` takes a value exactly when it is a finite
    number its domain holds (``Domain.check`` decides, an ``int`` back for an integer
    domain), ``text`` a string with more than blanks, ``column`` 2+ positive finite
    numbers, ``number_list`` 1+ finite numbers ≥ low, ``whole_increasing`` whole strictly
    increasing ones; each refusal a ``ValueError`` naming the file and the field.
    ``scalars`` reads a dataclass's fields by type; ``check_keys`` names an unknown or a
    missing key; ``read_toml`` names a file that is not TOML; ``read_columns`` reads a
    table of columns; ``load_folder`` answers equal presets until a file changes."""
    for v in values:
        if _domain_holds(v, domain):
            got = p_schema.number({"f": v}, "f", "x.toml", domain)
            assert got == v and isinstance(got, int if domain.integer else float)
        else:
            raises_naming("x.toml: field 'f'", p_schema.number, {"f": v}, "f", "x.toml", domain)
        if isinstance(v, str) and v.strip():
            assert p_schema.text({"f": v}, "f", "x.toml") == v
        else:
            raises_naming("x.toml: field 'f'", p_schema.text, {"f": v}, "f", "x.toml")
    for f in (p_schema.number, p_schema.text):
        tally(f, POINTS)
    cells = values[:n_cells]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in cells)
    finite = numbers and all(math.isfinite(v) for v in cells)
    if finite and len(cells) >= 2 and all(v > 0 for v in cells):
        arr = p_schema.column(cells, "x.toml [t].c")
        assert np.array_equal(arr, cells) and not arr.flags.writeable
        tally(p_schema.column)
    else:
        raises_naming("x.toml [t].c", p_schema.column, cells, "x.toml [t].c")
    if finite and cells and all(v >= 0.5 for v in cells):
        assert np.array_equal(p_schema.number_list(cells, "x.toml [t].c", low=0.5), cells)
        tally(p_schema.number_list)
    else:
        raises_naming("x.toml [t].c", p_schema.number_list, cells, "x.toml [t].c", low=0.5)
    grid = np.array(floats)
    if np.all(grid == np.round(grid)) and np.all(np.diff(grid) > 0):
        p_schema.whole_increasing(grid, "x.toml [t].b")
        tally(p_schema.whole_increasing)
    else:
        raises_naming("x.toml [t].b", p_schema.whole_increasing, grid, "x.toml [t].b")
    # a dataclass's fields, read by type
    assert p_schema.schema(_SchemaPreset) == {"id": (str, True), "count": (int, True),
                                             "share": (float, True), "size": (float, False),
                                             "notes": (tuple, False)}
    row = {"id": "p", "count": 3, "share": values[0], "notes": ["kept out"]}
    if _domain_holds(values[0], domain):
        assert p_schema.scalars(_SchemaPreset, row, "x.toml", {"share": domain}) == {
            "id": "p", "count": 3, "share": values[0]}
        tally(p_schema.scalars)
    else:
        raises_naming("'share'", p_schema.scalars, _SchemaPreset, row, "x.toml",
                      {"share": domain})
    p_schema.check_keys(row, ("id", "count", "share", "notes"), ("id",), "x.toml")
    tally(p_schema.check_keys)
    raises_naming("unknown field 'notes'", p_schema.check_keys, row, ("id", "count", "share"),
                  (), "x.toml")
    raises_naming("missing field 'size'", p_schema.check_keys, row, tuple(row) + ("size",),
                  ("size",), "x.toml")
    # files: a table of columns, a folder read once, a file that is not TOML
    folder = tmp_path_factory.mktemp("schema")
    good = [1.0, 2.0 + abs(floats[0]) if floats else 3.0]
    for i in range(2):
        (folder / f"c{i}.toml").write_text(
            f'id = "c{i}"\nname = "n"\nsource = "s"\n[columns]\n'
            f"b = {_toml_value(good)}\nc = {_toml_value([values[1], 1.0])}\n")
    first = folder / "c0.toml"
    table, where = p_schema.read_toml(first)
    assert where == "c0.toml" and table["columns"]["b"] == good
    tally(p_schema.read_toml)
    ok = _domain_holds(values[1], domains.PRESET_VALUE)
    if ok:
        _, arrays, _ = p_schema.read_columns(first, ("b", "c"), ("b",), "b")
        assert np.array_equal(arrays["b"], good)
        tally(p_schema.read_columns)
        parsed = []

        def load_stem(path):
            parsed.append(path.name)
            return _Loaded(path.stem)

        loaded = p_schema.load_folder(folder, load_stem)
        assert sorted(loaded) == ["c0", "c1"]
        loaded.clear()                                      # the caller's own dict
        again = p_schema.load_folder(folder, load_stem)
        assert sorted(again) == ["c0", "c1"] and parsed == ["c0.toml", "c1.toml"]  # once
        (folder / "c2.toml").write_text(first.read_text())
        assert sorted(p_schema.load_folder(folder, load_stem)) == ["c0", "c1", "c2"]
        assert parsed[2:] == ["c0.toml", "c1.toml", "c2.toml"]   # the changed folder again
        tally(p_schema.load_folder)
    else:
        raises_naming("c0.toml [columns].c", p_schema.read_columns, first, ("b", "c"), ("b",),
                      "b")
    first.write_text('id = "c0\n')
    raises_naming("c0.toml: not valid TOML", p_schema.read_toml, first)


@dataclasses.dataclass(frozen=True)
class _Loaded:
    id: str


def test_project_preset_folders_are_read_once(monkeypatch):
    """The project's preset folders are listed and parsed once per process: after a first
    read, the presets (and an LLM plan, which names a token law) come back with the disk
    out of reach, equal each time, a new dict each call."""
    import pathlib

    from engine.planner import default_spec
    readers = (presets.token_law_presets, presets.batch_profiles, presets.hardware_prices,
               presets.llm_batch_time_presets, presets.arrival_presets)
    first = [read() for read in readers]
    default_spec("llm")

    touched = []

    def watch(name):
        real = getattr(pathlib.Path, name)

        def method(self, *args, **kwargs):
            if self.is_relative_to(presets.PRESET_DIR):
                touched.append((name, self.name))
            return real(self, *args, **kwargs)
        return method

    for name in ("glob", "stat", "open", "read_bytes", "read_text"):
        monkeypatch.setattr(pathlib.Path, name, watch(name))
    again = [read() for read in readers]
    spec = default_spec("llm")
    monkeypatch.undo()
    assert touched == []
    for before, after in zip(first, again):
        assert after == before and after is not before and after
    assert spec.token_law in first[0]


FUZZED[p_schema] = {
    name: test_preset_schema for name in (
        "read_toml", "check_keys", "scalars", "text", "number", "column", "number_list",
        "whole_increasing", "read_columns", "load_folder")}


# ============================================================ engine.core: units, renamed, records

from engine.core import records as records_core  # noqa: E402
from engine.core import renamed as renamed_core  # noqa: E402
from engine.core import units as units_core  # noqa: E402
from dataclasses import dataclass  # noqa: E402


@FUZZ_VECTOR
@given(values=st.lists(st.floats(-1e12, 1e12), min_size=1, max_size=8))
def test_unit_converters(values):
    """Each converter is multiplication by its factor, and each pair inverts the other."""
    x = np.array(values)
    pairs = ((units_core.s_from_ms, units_core.ms_from_s, 1e-3),
             (units_core.hours_from_s, units_core.s_from_hours, 1 / 3600.0),
             (units_core.per_s_from_per_ms, units_core.per_ms_from_per_s, 1e3))
    for there, back, factor in pairs:
        tally(there), tally(back)
        assert np.allclose(there(x), x * factor, rtol=1e-15, atol=0.0)
        assert np.allclose(back(there(x)), x, rtol=1e-12, atol=1e-300)
        assert np.ndim(there(values[0])) == 0


@FUZZ
@given(value=st.floats(-1e6, 1e6), old=st.booleans())
def test_renamed_keywords(value, old):
    """The old keyword gives the new one's answer with a DeprecationWarning naming the
    new keyword; both at once is a TypeError; positional calls never warn."""
    import warnings

    @renamed_core.renamed_keywords(rate="rate_per_s")
    def doubled(rate_per_s):
        return 2.0 * rate_per_s
    tally(renamed_core.renamed_keywords)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = doubled(rate=value) if old else doubled(value)
    assert got == 2.0 * value
    assert [w.category for w in seen] == ([DeprecationWarning] if old else [])
    if old:
        assert "rate_per_s=" in str(seen[0].message) and renamed_core.REMOVED_IN in str(
            seen[0].message)
    with pytest.raises(TypeError, match="rate_per_s"):
        doubled(rate=value, rate_per_s=value)

    @dataclass(frozen=True)
    class Result:
        rate_per_s: float
        rate = renamed_core.renamed_attribute("rate_per_s")
    tally(renamed_core.renamed_attribute)
    with pytest.warns(DeprecationWarning, match=r"Result.rate is deprecated; use .rate_per_s"):
        assert Result(value).rate == value
    assert Result(value) == Result(value) and Result.rate.new == "rate_per_s"


@FUZZ_VECTOR
@given(values=st.lists(st.one_of(st.floats(-1e9, 1e9), st.just(math.nan), st.just(math.inf)),
                       min_size=0, max_size=500),
       n=st.integers(0, 10 ** 6), warmup=st.one_of(st.none(), st.integers(0, 10 ** 7)),
       rate=st.floats(1e-3, 1e3), seed=st.integers(0, 2 ** 32 - 1))
def test_records_summary(values, n, warmup, rate, seed):
    """summary_of: numpy's mean and linear percentiles of the finite values, ordered,
    count of the finite ones; the half-width non-negative.  warmup_count: n // 10 by
    default, never past n − 1.  drawn_arrivals: sorted Poisson times at the rate, or the
    trace itself."""
    v = np.array(values, dtype=float)
    finite = v[np.isfinite(v)]
    s = records_core.summary_of(v)
    tally(records_core.summary_of)
    assert s.count == finite.size
    if finite.size:
        assert s.mean == pytest.approx(finite.mean(), rel=1e-9, abs=1e-6)
        assert np.allclose([s.p50, s.p90, s.p95, s.p99], np.percentile(finite, [50, 90, 95, 99]),
                           rtol=1e-9, atol=1e-6)
        assert s.p50 <= s.p90 <= s.p95 <= s.p99
        assert s.ci95 >= 0.0
        assert records_core.mean_ci95(finite) == s.ci95
        tally(records_core.mean_ci95)
    else:
        assert math.isnan(s.mean)
    w = records_core.warmup_count(n, warmup)
    tally(records_core.warmup_count)
    assert 0 <= w <= max(n - 1, 0)
    if warmup is None and n >= 1:
        assert w == min(n // 10, n - 1)
    m = 1 + seed % 200
    times = records_core.drawn_arrivals(rate, m, np.random.default_rng(seed))
    tally(records_core.drawn_arrivals)
    assert times.shape == (m,) and np.all(np.diff(times) >= 0) and times[0] > 0
    trace = np.sort(np.abs(v[np.isfinite(v)]))
    if trace.size:
        assert np.array_equal(records_core.drawn_arrivals(rate, m, None, trace), trace)
    raises_naming("arrivals", records_core.drawn_arrivals, rate, m, np.random.default_rng(0),
                  [3.0, 1.0])


FUZZED[units_core] = {name: test_unit_converters for name in (
    "s_from_ms", "ms_from_s", "hours_from_s", "s_from_hours", "per_s_from_per_ms",
    "per_ms_from_per_s")}
FUZZED[renamed_core] = {"renamed_keywords": test_renamed_keywords,
                        "renamed_attribute": test_renamed_keywords}
FUZZED[records_core] = {"summary_of": test_records_summary, "mean_ci95": test_records_summary,
                        "warmup_count": test_records_summary,
                        "drawn_arrivals": test_records_summary,
                        "LatencySummary": (test_records_summary, "summary_of")}
