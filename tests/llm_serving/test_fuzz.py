"""Fuzz tests of LLM serving (engine.llm_serving): the contract of tests/fuzzing.py over
every public function's declared domains (engine/core/domains/llm_serving.py: STEP_MS ...
CONCURRENCY).  Inside the domains: a result without NaN (where none is documented),
every request served in order (first token not before the send, finish not before the
first token), a finite capacity; outside: ``ValueError`` naming the parameter; any
text given to a reader: a result or a ``ValueError``, never another exception.
``FUZZED`` maps each public name to the test that fuzzes it (checked by
tests/test_fuzz_contract.py).

Cost.  A simulated run here holds at most 60 requests of at most 300 + 80 tokens
(~1 ms compiled); the calibration and the vllm-bench comparison replay runs dozens of
times per call, so they get a handful of cases.  Bugs the fuzzing found are kept
as regression cases at the end of the file (each with its minimal
reproducer), so the suite stays green while they stand.
"""
import inspect
import json

from scipy import stats

from tests.fuzzing import *  # noqa: F401,F403 (settings, checks, engine modules, domains)
from engine.core.domains import (BLOCK_SIZE, CONCURRENCY, KV_CACHE_TOKENS, MAX_BATCHED_TOKENS,
                                 MAX_NUM_SEQS, RATE_PER_S, SERVING_TOKENS, STEP_MS,
                                 STEP_MS_PER_CONTEXT, STEP_MS_PER_SEQ, STEP_MS_PER_TOKEN,
                                 STEP_MS_PER_TOKEN_SQ)
from engine.arrivals import Poisson
from engine.core.jit import BACKEND
from engine.llm_serving import blockcache as serving_blockcache
from engine.llm_serving import capacity as serving_capacity
from engine.llm_serving import compare as serving_compare
from engine.llm_serving import cost as serving_cost
from engine.llm_serving import disaggregated as serving_disaggregated
from engine.llm_serving import fleet as serving_fleet
from engine.llm_serving import kernel as serving_kernel
from engine.llm_serving import measured_fits as serving_measured_fits
from engine.llm_serving import presets as serving_presets
from engine.llm_serving import published_fits as serving_published_fits
from engine.llm_serving import result as serving_result
from engine.llm_serving import scheduler as serving_scheduler
from engine.llm_serving import sim as serving_sim
from engine.llm_serving import slo as serving_slo
from engine.llm_serving import step_fit as serving_step_fit
from engine.llm_serving import workload as serving_workload
from engine.llm_serving.cost import StepCost
from engine.llm_serving.scheduler import Scheduler
from engine.measured import read_request_records

simulate_serving = serving_sim.simulate_serving

COST_DOMAINS = {"base_ms": STEP_MS, "prefill_base_ms": STEP_MS,
                "prefill_ms_per_token": STEP_MS_PER_TOKEN,
                "prefill_ms_per_token_sq": STEP_MS_PER_TOKEN_SQ,
                "decode_ms_per_seq": STEP_MS_PER_SEQ,
                "context_ms_per_token": STEP_MS_PER_CONTEXT, "frontend_ms": STEP_MS}
COST_FIELDS = tuple(COST_DOMAINS)
SCHEDULER_DOMAINS = {"max_num_seqs": MAX_NUM_SEQS, "max_num_batched_tokens": MAX_BATCHED_TOKENS,
                     "kv_cache_tokens": KV_CACHE_TOKENS, "block_size": BLOCK_SIZE}
NOT_A_FLAG = st.sampled_from([0, 1, "yes", None, 1.0, math.nan])
BAD_WATERMARK = st.sampled_from([-0.1, 1.0, 1.5, math.nan, math.inf, "x", True, None])
ALLOWED_NAN = ("mean", "p50", "p90", "p95", "p99", "ci95")   # a LatencySummary of count 0


def invalid_kv(domain):
    """``invalid(domain)`` without ±inf for ``kv_cache_tokens`` (+inf means unbounded;
    -inf is taken as unbounded too: a bug kept in ``test_scheduler_negative_inf_kv``)."""
    if domain is KV_CACHE_TOKENS:
        return invalid(domain).filter(lambda x: not (isinstance(x, float) and math.isinf(x)))
    return invalid(domain)


# ------------------------------------------------------------ shared strategies

def cost_values(high: float = 1e3):
    """Valid ``StepCost`` keyword values: each field over its domain (0 and the
    extremes included), bounded by ``high`` times its typical top to bound the times.
    ``prefill_base_ms`` is sometimes left out (it defaults to ``base_ms``)."""
    parts = {f: valid(d, high=high * max(d.typical[1], 1e-6)) for f, d in COST_DOMAINS.items()}
    return st.fixed_dictionaries(parts).flatmap(
        lambda v: st.one_of(st.just(v), st.just({k: x for k, x in v.items()
                                                 if k != "prefill_base_ms"})))


def positive_costs():
    """StepCosts whose every step takes time (base and prompt base > 0)."""
    floor = st.floats(1e-3, 50.0)
    return st.builds(
        lambda b, pb, a, a2, d, k, f: StepCost(base_ms=b, prefill_base_ms=pb,
                                               prefill_ms_per_token=a, prefill_ms_per_token_sq=a2,
                                               decode_ms_per_seq=d, context_ms_per_token=k,
                                               frontend_ms=f),
        floor, floor, st.one_of(st.just(0.0), st.floats(0.0, 0.2)),
        st.one_of(st.just(0.0), st.floats(0.0, 1e-5)),
        st.one_of(st.just(0.0), st.floats(0.0, 1.0)),
        st.one_of(st.just(0.0), st.floats(0.0, 1e-3)),
        st.one_of(st.just(0.0), st.floats(0.0, 20.0)))


def blocks_needed(l, o, bs) -> int:
    return int(np.max(-(-(np.asarray(l) + np.asarray(o) - 1) // bs)))


@st.composite
def served(draw, max_n=60, max_in=300, max_out=80):
    """(scheduler, prompts, replies) where every request can run: the KV cache (when
    bounded) holds the longest request's l + o − 1 tokens even after the admission
    watermark, but is drawn small enough to preempt; without chunked prefill the token
    budget holds the longest prompt."""
    n = draw(st.integers(1, max_n), label="n")
    l = np.array(draw(st.lists(st.integers(1, max_in), min_size=n, max_size=n)), np.int64)
    o = np.array(draw(st.lists(st.integers(1, max_out), min_size=n, max_size=n)), np.int64)
    bs = draw(st.one_of(st.sampled_from([1, 16]), st.integers(1, 64)), label="block_size")
    chunked = draw(st.booleans(), label="chunked_prefill")
    low_budget = 1 if chunked else int(l.max())
    budget = draw(st.one_of(st.integers(low_budget, max(low_budget, 64)),
                            st.integers(low_budget, max(low_budget, 4096))), label="budget")
    watermark = draw(st.one_of(st.just(0.0), st.floats(0.0, 0.3)), label="kv_watermark")
    kv = None
    if draw(st.integers(0, 3), label="bounded") > 0:
        need = blocks_needed(l, o, bs)
        m = draw(st.integers(need, 3 * need + 4), label="kv blocks")
        while m - int(watermark * m) < need:
            m += 1
        kv = m * bs + draw(st.integers(0, bs - 1), label="kv spare tokens")
    sched = Scheduler(max_num_seqs=draw(st.integers(1, 24), label="max_num_seqs"),
                      max_num_batched_tokens=budget, kv_cache_tokens=kv, block_size=bs,
                      chunked_prefill=chunked, prefix_caching=draw(st.booleans()),
                      kv_watermark=watermark)
    return sched, l, o


def small_laws():
    """Token-count laws with a short tail (a run stays small)."""
    return st.one_of(
        st.builds(lambda lo, w: token_laws.uniform(lo, lo + w), st.floats(0.0, 50.0),
                  st.floats(1.0, 200.0)),
        st.builds(lambda m, s: token_laws.lognormal(m, s), st.floats(0.0, 4.0),
                  st.floats(0.05, 0.5)),
        st.builds(lambda c: token_laws.EmpiricalTokens.from_counts(c),
                  st.lists(st.integers(1, 50), min_size=1, max_size=8)))


def check_records(rec, n):
    """Every request served in order, with finite times and counts."""
    assert rec.n_requests == n
    for name in ("arrival_s", "first_token_s", "finish_s"):
        assert np.all(np.isfinite(getattr(rec, name))), name
    assert np.all(rec.first_token_s >= rec.arrival_s)
    assert np.all(rec.finish_s >= rec.first_token_s)
    assert np.all(rec.ttft_ms >= 0) and np.all(rec.e2e_ms >= rec.ttft_ms)
    tpot = rec.tpot_ms
    assert np.array_equal(np.isnan(tpot), rec.output_tokens < 2)
    assert np.all(tpot[~np.isnan(tpot)] >= 0)
    assert np.all(rec.preemptions >= 0)
    assert np.all((rec.cached_tokens >= 0) & (rec.cached_tokens < rec.input_tokens))


def check_result(res, sched, n, warmup, degenerate=False):
    """The summaries of a run: NaN only where documented (a summary of no value;
    ITL percentiles without a histogram), counts, fractions and means in range."""
    allowed = ALLOWED_NAN + (("throughput_requests_per_s", "output_tokens_per_s")
                             if degenerate else ())
    bad = [p for p in nan_fields(res) if p.split(".")[-1] not in allowed
           and ".records." not in p and "_ttft_tpot" not in p]
    assert not bad, f"NaN in {bad}"
    for s in (res.ttft_ms, res.e2e_ms, res.queue_ms, res.tpot_ms, res.itl_ms):
        if s.count:
            assert not math.isnan(s.mean) and s.mean >= 0
    assert res.n_requests == n - warmup and res.warmup_requests == warmup
    assert res.ttft_ms.count == n - warmup
    if not degenerate:
        assert np.isfinite(res.throughput_requests_per_s) and res.throughput_requests_per_s > 0
        assert np.isfinite(res.output_tokens_per_s) and res.output_tokens_per_s > 0
    assert 0.0 <= res.preempted_fraction <= 1.0
    assert 0.0 <= res.mean_running <= sched.max_num_seqs * (1 + 1e-9)
    assert res.mean_waiting >= 0 and res.steps >= 1
    if sched.kv_cache_tokens is None:
        assert res.kv_peak_fraction is None
    else:
        assert 0.0 <= res.kv_peak_fraction <= 1.0


# ============================================================ engine.llm_serving.cost

@fuzz(400, 4)
@given(cost_values(high=1e6), st.lists(st.tuples(st.integers(0, 10 ** 5), st.integers(0, 4096),
                                                 st.integers(0, 10 ** 6)),
                                       min_size=4, max_size=4),
       st.floats(0.0, 10.0), st.floats(0.5, 2.0), st.data())
def test_step_cost(values, steps, overhead, factor, data):
    """StepCost over its fields' domains: step_ms is the documented linear law,
    broadcasts like a ufunc (prompt-only steps from prefill_base_ms, an empty step 0),
    prompt_ms/decode_ms are its special cases, with_overhead adds what it says;
    one field out of its domain: ValueError naming the field; kv_bytes_per_token and
    kv_capacity_tokens: finite positive sizes, bad arguments named."""
    c = StepCost(**values, label="fuzz")
    assert_no_nan(c)
    pbase = values.get("prefill_base_ms", values["base_ms"])
    assert c.prefill_base_ms == float(pbase)
    assert np.array_equal(c.as_array(), [getattr(c, f) for f in
                                         ("base_ms", "prefill_base_ms", "prefill_ms_per_token",
                                          "prefill_ms_per_token_sq", "decode_ms_per_seq",
                                          "context_ms_per_token", "frontend_ms")])
    p = np.array([s[0] for s in steps], dtype=float)
    d = np.array([s[1] for s in steps], dtype=float)
    k = np.where(d > 0, np.array([s[2] for s in steps], dtype=float), 0.0)
    q = p * (p + 7)
    got = c.step_ms(p[:, None], q[:, None], d[None, :], k[None, :])     # 4 × 4: broadcasts
    assert got.shape == (4, 4)
    base = np.where(d[None, :] > 0, c.base_ms, np.where(p[:, None] > 0, c.prefill_base_ms, 0.0))
    want = (base + c.prefill_ms_per_token * p[:, None] + c.prefill_ms_per_token_sq * q[:, None]
            + c.decode_ms_per_seq * d[None, :] + c.context_ms_per_token * k[None, :])
    assert np.all(np.isfinite(got) & (got >= 0)) and close(got, want, 1e-12)
    assert float(c.step_ms(0, 0, 0, 0)) == 0.0
    assert close(c.prompt_ms(p), c.step_ms(p, p * p, 0, 0))
    assert close(c.decode_ms(d, k), c.step_ms(0, 0, d, k))
    more = c.with_overhead(step_ms=overhead, per_seq_ms=overhead / 10, prompt_factor=factor,
                           frontend_ms=overhead)
    assert close(more.base_ms, c.base_ms + overhead)
    assert close(more.prefill_base_ms, c.prefill_base_ms * factor + overhead)
    assert close(more.prefill_ms_per_token, c.prefill_ms_per_token * factor)
    assert more.frontend_ms == overhead and more.label == c.label
    assert c.with_overhead() == c
    assert isinstance(c.formula(), str) and "step =" in c.formula()
    tally(StepCost, 4)
    # one field out of its domain
    field = data.draw(st.sampled_from(COST_FIELDS), label="bad field")
    bad = data.draw(invalid(COST_DOMAINS[field]), label="bad value")
    raises_naming(field, StepCost, **{**values, field: bad})
    raises_naming("label", StepCost, **values, label=3)
    # KV sizes
    layers, heads, dim = (data.draw(st.integers(1, 200)), data.draw(st.integers(1, 128)),
                          data.draw(st.sampled_from([64, 80, 128, 256])))
    per = serving_cost.kv_bytes_per_token(layers=layers, kv_heads=heads, head_dim=dim)
    assert per == 2.0 * layers * heads * dim * 2.0
    tally(serving_cost.kv_bytes_per_token)
    memory = data.draw(st.floats(1.0, 200.0), label="gpu_memory_gib")
    weights = data.draw(st.floats(0.0, 300.0), label="weights_gib")
    util = data.draw(st.floats(0.05, 1.0), label="gpu_memory_utilization")
    tp = data.draw(st.integers(1, 8), label="tensor_parallel")
    args = dict(gpu_memory_gib=memory, weights_gib=weights, layers=layers, kv_heads=heads,
                head_dim=dim, gpu_memory_utilization=util, tensor_parallel=tp)
    room = (tp * memory * util - weights) * 2 ** 30
    if room > per * (1 + 1e-9):
        tokens = serving_cost.kv_capacity_tokens(**args)
        assert isinstance(tokens, int) and tokens >= 1
        assert tokens == int(room // per) or abs(tokens - room / per) <= 1
        tally(serving_cost.kv_capacity_tokens)
    elif room < per * (1 - 1e-9):
        with pytest.raises(ValueError, match="no room"):
            serving_cost.kv_capacity_tokens(**args)
    name = data.draw(st.sampled_from(["layers", "kv_heads", "head_dim"]), label="bad kv arg")
    bad = data.draw(st.sampled_from([0, -1, math.nan, math.inf, "x", True, None]))
    raises_naming(name, serving_cost.kv_bytes_per_token,
                  **{"layers": layers, "kv_heads": heads, "head_dim": dim, name: bad})
    raises_naming(name, serving_cost.kv_capacity_tokens, **{**args, name: bad})
    name = data.draw(st.sampled_from(["gpu_memory_gib", "weights_gib", "activation_gib",
                                      "tensor_parallel", "gpu_memory_utilization"]))
    bad = data.draw(st.sampled_from([-1.0, math.nan, math.inf, "x", True, None]))
    raises_naming(name, serving_cost.kv_capacity_tokens, **{**args, name: bad})
    raises_naming("gpu_memory_utilization", serving_cost.kv_capacity_tokens,
                  **{**args, "gpu_memory_utilization": data.draw(st.sampled_from([0.0, 1.5]))})


# ============================================================ engine.llm_serving.scheduler

@fuzz(1000, 4)
@given(st.fixed_dictionaries({
    "max_num_seqs": valid(MAX_NUM_SEQS), "max_num_batched_tokens": valid(MAX_BATCHED_TOKENS),
    "block_size": valid(BLOCK_SIZE), "kv_cache_tokens": st.one_of(
        st.none(), st.just(math.inf), valid(KV_CACHE_TOKENS, low=4096)),
    "chunked_prefill": st.booleans(), "prefix_caching": st.booleans(),
    "kv_watermark": st.one_of(st.just(0.0), st.floats(0.0, 0.999))}),
    st.lists(st.integers(0, 10 ** 9), min_size=4, max_size=4), st.data())
def test_scheduler(settings_, tokens, data):
    """Scheduler over its fields' domains: whole numbers kept, inf KV as unbounded,
    kv_blocks = ⌊kv/b⌋, watermark_blocks = ⌊w·blocks⌋, blocks_for = ⌈tokens/b⌉
    (broadcast); one field out of its domain (or a non-bool flag, a watermark outside
    [0, 1), a cache smaller than a block): ValueError naming it."""
    s = Scheduler(**settings_)
    assert_no_nan(s)
    for name in ("max_num_seqs", "max_num_batched_tokens", "block_size"):
        assert getattr(s, name) == int(settings_[name]) and type(getattr(s, name)) is int
    kv = settings_["kv_cache_tokens"]
    if kv is None or kv == math.inf:
        assert s.kv_cache_tokens is None and s.kv_blocks is None and s.watermark_blocks == 0
    else:
        assert s.kv_blocks == int(kv) // s.block_size
        assert s.watermark_blocks == int(s.kv_watermark * s.kv_blocks)
    t = np.array(tokens)
    assert np.array_equal(s.blocks_for(t), -(-t // s.block_size))
    assert s.blocks_for(t[:, None]).shape == (4, 1)
    assert "max_num_seqs" in s.describe()
    tally(Scheduler, 4)
    field = data.draw(st.sampled_from(sorted(SCHEDULER_DOMAINS)), label="bad field")
    bad = data.draw(invalid_kv(SCHEDULER_DOMAINS[field]), label="bad value")
    raises_naming(field, Scheduler, **{**settings_, field: bad})
    flag = data.draw(st.sampled_from(["chunked_prefill", "prefix_caching"]))
    raises_naming(flag, Scheduler, **{**settings_, flag: data.draw(NOT_A_FLAG)})
    raises_naming("kv_watermark", Scheduler, **{**settings_, "kv_watermark":
                                                data.draw(BAD_WATERMARK)})
    bs = data.draw(st.integers(2, 4096))
    raises_naming("kv_cache_tokens", Scheduler, block_size=bs,
                  kv_cache_tokens=data.draw(st.integers(1, bs - 1)))


# ============================================================ engine.llm_serving.disaggregated

@fuzz(60)
@given(served(max_n=30), served(max_n=30), cost_values(), cost_values(), st.integers(1, 3),
       st.integers(1, 3), st.floats(1e3, 1e7), st.floats(0.01, 1e3), st.floats(0.0, 5.0),
       st.sampled_from(["prefill_instances", "decode_instances", "link_gb_per_s",
                        "kv_bytes_per_token", "link_latency_ms"]),
       st.sampled_from([-1, math.nan, "x", None]))
def test_simulate_disaggregated(pre, dec, pv, dv, n_p, n_d, kv_bytes, gb, latency, bad_name,
                                bad):
    """Every request served: first token after its send, finish after the first token
    (one-token replies end at the prefill side), the copy's time between a first and a
    second token; a bad instance count, link or KV size refused naming it."""
    p_sched, l, _ = pre
    d_sched, _, o = dec
    n = min(l.size, o.size)
    l, o = l[:n], o[:n]
    need = blocks_needed(l, o, d_sched.block_size)
    if d_sched.kv_blocks is not None and (
            d_sched.kv_blocks - d_sched.watermark_blocks < need):
        return
    if p_sched.kv_blocks is not None and p_sched.kv_blocks - p_sched.watermark_blocks \
            < blocks_needed(l, 1, p_sched.block_size):
        return
    if not p_sched.chunked_prefill and l.max() > p_sched.max_num_batched_tokens:
        return
    if not d_sched.chunked_prefill and l.max() > d_sched.max_num_batched_tokens:
        return
    args = dict(prefill_scheduler=p_sched, decode_scheduler=d_sched, prefill_instances=n_p,
                decode_instances=n_d, kv_bytes_per_token=kv_bytes, link_gb_per_s=gb,
                link_latency_ms=latency, input_tokens=l, output_tokens=o,
                arrival_s=np.arange(n) * 0.01, return_records=True)
    r = serving_disaggregated.simulate_disaggregated(StepCost(**pv), StepCost(**dv), **args)
    tally(serving_disaggregated.simulate_disaggregated)
    rec = r.records
    check_records(rec, n)
    assert np.all(rec.first_token_s >= rec.arrival_s) and np.all(rec.finish_s >= rec.first_token_s)
    copy = serving_disaggregated.transfer_ms(l, kv_bytes, gb, latency)
    tally(serving_disaggregated.transfer_ms)
    two = o >= 2
    assert np.all((rec.finish_s - rec.first_token_s)[two] * 1e3 >= copy[two] * (1 - 1e-9))
    assert np.array_equal(rec.finish_s[~two], rec.first_token_s[~two])
    raises_naming(bad_name, serving_disaggregated.simulate_disaggregated, StepCost(**pv),
                  StepCost(**dv), **{**args, bad_name: bad})


# ============================================================ engine.llm_serving.slo

@fuzz(200)
@given(st.floats(1e-3, 1e4), st.floats(0.0, 1.5), st.floats(0.5, 100.0, exclude_max=True),
       st.lists(st.floats(0.01, 1.0), min_size=1, max_size=8, unique=True),
       st.integers(0, 8), st.sampled_from(["capacity_per_s", "ttft_ms", "tpot_ms",
                                           "percentile"]),
       st.sampled_from([0.0, -1.0, math.nan, "x", 100.0]))
def test_largest_rate_meeting(cap, share_ok, pct, shares, refine, bad_name, bad):
    """Over a stand-in run that meets the target below share_ok × capacity: the answer
    holds, the next rate fails, both within [0, capacity]; bad arguments named."""
    shares = sorted(shares)
    limit = share_ok * cap

    class Run:
        def __init__(self, rate):
            self.ok = rate <= limit

        def goodput_fraction(self, *, ttft_ms, tpot_ms, percentile):
            return 1.0 if self.ok else 0.0

    got = serving_slo.largest_rate_meeting(Run, capacity_per_s=cap, ttft_ms=1.0,
                                           tpot_ms=1.0, percentile=pct, shares=shares,
                                           refine=refine)
    tally(serving_slo.largest_rate_meeting)
    tally(serving_slo.meets_target)
    assert 0.0 <= got.rate_per_s <= got.fails_at_per_s <= cap * (1 + 1e-12)
    assert got.rate_per_s == 0.0 or got.rate_per_s <= limit
    assert got.fails_at_per_s >= min(limit, cap) or got.fails_at_per_s == cap
    args = dict(capacity_per_s=cap, ttft_ms=1.0, tpot_ms=1.0, percentile=pct)
    if not (bad_name == "capacity_per_s" and bad == 100.0) and not (
            bad_name in ("ttft_ms", "tpot_ms") and bad == 100.0):
        raises_naming(bad_name, serving_slo.largest_rate_meeting, Run, **{**args, bad_name: bad})


# ============================================================ engine.llm_serving.fleet

@fuzz(60)
@given(served(max_n=40), cost_values(), st.integers(1, 5),
       st.sampled_from(["random", "round_robin", "least_outstanding"]),
       st.sampled_from([("replicas", 0), ("replicas", 1.5), ("replicas", None),
                        ("dispatch", "least"), ("dispatch", None)]))
def test_simulate_fleet(case, values, replicas, dispatch, bad):
    """Every request served once, in order of its own times; round robin puts request i
    on replica i mod R; bad replicas or dispatch refused naming them."""
    sched, l, o = case
    n = l.size
    args = dict(replicas=replicas, dispatch=dispatch, input_tokens=l, output_tokens=o,
                arrival_s=np.arange(n) * 0.005, return_records=True)
    r = serving_fleet.simulate_fleet(StepCost(**values), sched, **args)
    tally(serving_fleet.simulate_fleet)
    check_records(r.records, n)
    assert np.all(r.records.first_token_s >= r.records.arrival_s)
    assert np.all(r.records.finish_s >= r.records.first_token_s)
    raises_naming(bad[0], serving_fleet.simulate_fleet, StepCost(**values), sched,
                  **{**args, bad[0]: bad[1]})


# ============================================================ engine.llm_serving.sim

SIM_DOMAINS = {"input_tokens": SERVING_TOKENS, "output_tokens": SERVING_TOKENS,
               "n_requests": N_REQUESTS, "warmup_requests": WARMUP, "rate_per_s": RATE_PER_S,
               "concurrency": CONCURRENCY}


@fuzz(240)
@given(served(), cost_values(), st.sampled_from(["rate", "concurrency", "arrival_s", "process"]),
       valid(RATE_PER_S, high=1e4, allow_inf=False), st.integers(1, 8),
       st.one_of(st.none(), st.integers(0, 4)), st.integers(0, 6), st.booleans(), st.data())
def test_simulate_serving(case, values, load, rate, clients, shared_streams, timeline, warm,
                          data):
    """simulate_serving on drawn valid servers (KV small enough to preempt, every request
    fits), costs (zero terms included) and loads (Poisson rate, closed loop, replayed
    times, an arrival process): every request served in order, TTFT > 0 where a step
    takes time, TPOT ≥ 0, throughput finite, the running count ≤ max_num_seqs and the
    closed loop ≤ its clients, prefix-cache hits whole blocks of the shared prompt;
    a previous run's prefix cache warms the next; a parameter out of its domain:
    ValueError naming it."""
    sched, l, o = case
    n = l.size
    cost = StepCost(**values)
    if load == "rate":
        kwargs = dict(rate_per_s=rate)
    elif load == "concurrency":
        kwargs = dict(concurrency=clients)
    elif load == "process":
        kwargs = dict(arrivals=Poisson(rate))
    else:
        gaps = data.draw(st.lists(st.floats(0.0, 2.0), min_size=n, max_size=n), label="gaps")
        kwargs = dict(arrival_s=np.cumsum(gaps))
    prefix = {}
    if shared_streams is not None:
        streams = np.array(data.draw(st.lists(st.integers(-1, shared_streams), min_size=n,
                                              max_size=n), label="streams"))
        shared = np.array([data.draw(st.integers(0, int(x)), label="shared") for x in l])
        prefix = dict(prefix_stream=streams, prefix_tokens=shared)
    w = data.draw(st.one_of(st.none(), st.integers(0, n - 1)), label="warmup")
    res = simulate_serving(cost, sched, input_tokens=l, output_tokens=o, seed=1,
                           warmup_requests=w, return_records=True, timeline_steps=timeline,
                           **kwargs, **prefix)
    rec = res.records
    check_records(rec, n)
    assert np.array_equal(rec.input_tokens, l) and np.array_equal(rec.output_tokens, o)
    degenerate = float(np.max(rec.finish_s)) == 0.0      # every step took 0 ms: see xfail
    warm_default = 0 if load in ("concurrency", "arrival_s") else n // 10
    check_result(res, sched, n, warm_default if w is None else w, degenerate)
    # TTFT > 0 where every first token takes time the clock can resolve: the simulator's
    # clock is float ms, so a 1e-4 ms step at t = 5e11 ms (rate 1e-8 per s) is lost
    floor = max(cost.frontend_ms, min(cost.base_ms, cost.prefill_base_ms))
    if floor > 1e-9 * max(1.0, 1e3 * float(np.max(rec.finish_s))):
        assert np.all(rec.ttft_ms > 0)
    if load == "arrival_s":
        assert np.allclose(rec.arrival_s, kwargs["arrival_s"], rtol=1e-12, atol=1e-12)
    if load == "concurrency":
        inside = [(np.sum((rec.arrival_s <= a) & (rec.finish_s > a))) for a in rec.arrival_s]
        assert max(inside) <= clients
        assert np.sum(rec.arrival_s == 0) >= min(clients, n)
    if shared_streams is None or not sched.prefix_caching:
        assert np.all(rec.cached_tokens == 0)
    else:
        ok = prefix["prefix_stream"] >= 0
        assert np.all(rec.cached_tokens[~ok] == 0)
        assert np.all(rec.cached_tokens <= prefix["prefix_tokens"])
        assert np.all(rec.cached_tokens % sched.block_size == 0)
    if timeline:
        tl = res.timeline
        assert tl.time_s.size <= min(timeline, res.steps)
        assert np.all(np.diff(tl.time_s) >= 0) and np.all(tl.running <= sched.max_num_seqs)
        assert np.all(tl.waiting >= 0) and np.all(np.diff(tl.preemptions) >= 0)
        if sched.kv_blocks is not None:
            assert np.all(tl.kv_blocks <= sched.kv_blocks) and tl.kv_blocks_total == sched.kv_blocks
    else:
        assert res.timeline is None
    tally(simulate_serving)
    if warm and sched.kv_blocks is not None and sched.prefix_caching:
        assert res.prefix_cache.dtype == np.int64 and res.prefix_cache.size <= sched.kv_blocks
        again = simulate_serving(cost, sched, input_tokens=l, output_tokens=o, seed=2,
                                 return_records=True, warm_prefix_cache=res.prefix_cache,
                                 **kwargs, **prefix)
        check_records(again.records, n)
        tally(simulate_serving)
    # the same run as laws and scalars: served, counts drawn ≥ 1
    law = data.draw(small_laws(), label="law")
    one = simulate_serving(cost, Scheduler(max_num_seqs=sched.max_num_seqs,
                                           max_num_batched_tokens=sched.max_num_batched_tokens),
                           input_tokens=law, output_tokens=int(o[0]), n_requests=min(n, 20),
                           seed=3, return_records=True, **kwargs if load != "arrival_s" else
                           dict(concurrency=clients))
    check_records(one.records, min(n, 20))
    tally(simulate_serving)
    # out of its domain
    params = dict(input_tokens=int(l[0]), output_tokens=int(o[0]), n_requests=n,
                  warmup_requests=0, **({"concurrency": clients} if load == "concurrency"
                                        else {"rate_per_s": rate}))
    p, bad = corrupt(data, params, SIM_DOMAINS)
    raises_naming(bad, simulate_serving, cost, sched, **p)
    raises_naming("cost", simulate_serving, values, sched, input_tokens=1, output_tokens=1,
                  concurrency=1)
    raises_naming("scheduler", simulate_serving, cost, "vllm", input_tokens=1, output_tokens=1,
                  concurrency=1)
    raises_naming("concurrency", simulate_serving, cost, sched, input_tokens=1, output_tokens=1,
                  concurrency=clients, rate_per_s=rate)
    raises_naming("rate_per_s", simulate_serving, cost, sched, input_tokens=1, output_tokens=1,
                  rate_per_s=math.inf)
    raises_naming("warmup_requests", simulate_serving, cost, sched, input_tokens=l,
                  output_tokens=o, concurrency=clients, warmup_requests=n)
    raises_naming("input_tokens", simulate_serving, cost, sched, input_tokens=stats.pareto(0.5),
                  output_tokens=1, concurrency=1, n_requests=2)
    raises_naming("n_requests", simulate_serving, cost, sched, input_tokens=l, output_tokens=o,
                  concurrency=1, n_requests=n + 1)
    raises_naming("prefix_stream", simulate_serving, cost, sched, input_tokens=l,
                  output_tokens=o, concurrency=1, prefix_stream=-2, prefix_tokens=1)
    raises_naming("prefix_tokens", simulate_serving, cost, sched, input_tokens=l,
                  output_tokens=o, concurrency=1, prefix_stream=0, prefix_tokens=-1)
    raises_naming("prefix_tokens", simulate_serving, cost, sched, input_tokens=l,
                  output_tokens=o, concurrency=1, prefix_stream=0)


@fuzz(500, 4)
@given(served(max_n=12, max_in=2000, max_out=2000), small_laws(),
       st.integers(1, 12), st.data())
def test_request_lengths_and_fit(case, law, n, data):
    """request_lengths: a number → n copies, a list of n → itself, a law → n counts ≥ 1;
    anything else (out of the domain, a wrong length, an infinite-mean law, text):
    ValueError naming the argument.  check_fits: ValueError exactly when a request's
    l + o − 1 tokens need more KV blocks than the cache holds, or (whole prompts) a
    prompt exceeds the token budget."""
    sched, l, o = case
    rng = np.random.default_rng(n)
    assert np.array_equal(serving_sim.request_lengths(int(l[0]), n, rng, "x"), np.full(n, l[0]))
    assert np.array_equal(serving_sim.request_lengths(l, l.size, rng, "x"), l)
    drawn = serving_sim.request_lengths(law, n, rng, "input_tokens")
    assert drawn.shape == (n,) and drawn.dtype == np.int64 and np.all(drawn >= 1)
    tally(serving_sim.request_lengths, 3)
    bad = data.draw(invalid(SERVING_TOKENS), label="bad tokens")
    raises_naming("prompt", serving_sim.request_lengths, bad, n, rng, "prompt")
    raises_naming("prompt", serving_sim.request_lengths, l, l.size + 1, rng, "prompt")
    raises_naming("prompt", serving_sim.request_lengths, stats.pareto(0.9), n, rng, "prompt")
    for junk in (None, "12", b"12", True):
        raises_naming("prompt", serving_sim.request_lengths, junk, n, rng, "prompt")
    # check_fits on a drawn scheduler, with the lengths scaled to cross its limits
    scale = data.draw(st.sampled_from([1, 2, 5, 50]), label="scale")
    ll, oo = l * scale, o * scale
    first = (ll + oo - 1 if not sched.chunked_prefill
             else np.minimum(ll + oo - 1, sched.max_num_batched_tokens))
    too_long = (sched.kv_blocks is not None
                and bool(np.any(sched.blocks_for(ll + oo - 1) > sched.kv_blocks)
                         or np.any(sched.blocks_for(first)
                                   > sched.kv_blocks - sched.watermark_blocks)))
    too_wide = not sched.chunked_prefill and bool(np.any(ll > sched.max_num_batched_tokens))
    if too_long or too_wide:
        with pytest.raises(ValueError) as err:
            serving_sim.check_fits(sched, ll, oo)
        assert ("KV blocks" if too_long else "max_num_batched_tokens") in str(err.value)
    else:
        assert serving_sim.check_fits(sched, ll, oo) is None
    tally(serving_sim.check_fits)


# ============================================================ engine.llm_serving.result

FINITE_MS = st.floats(0.0, 1e6, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@fuzz(600, 4)
@given(st.lists(st.one_of(FINITE_MS, st.sampled_from([math.nan, math.inf, -math.inf])),
                max_size=400),
       st.lists(st.tuples(FINITE_MS, FINITE_MS, FINITE_MS, st.integers(1, 5000),
                          st.integers(1, 500)), min_size=1, max_size=60),
       st.integers(0, 59), st.floats(0.0, 1e6), st.floats(0.0, 1e3),
       st.one_of(st.none(), st.floats(0.01, 99.99)), st.data())
def test_summaries(values, rows, warmup, ttft_limit, tpot_limit, percentile, data):
    """summary_of: the finite values' count, mean between min and max, ordered
    percentiles, a non-negative half-width (inf for one value), all NaN for none;
    summarize on drawn records: throughput = completed / last finish, TTFT/TPOT/e2e
    per request by their definitions, ServingResult.goodput_fraction a share (0 under
    a missed percentile), table and frames; bad percentiles named."""
    s = serving_result.summary_of(values)
    finite = np.array([v for v in values if math.isfinite(v)])
    assert s.count == finite.size
    if finite.size == 0:
        assert all(math.isnan(x) for k, x in s.as_dict().items() if k != "count")
    else:
        assert finite.min() - 1e-9 * finite.max() <= s.mean <= finite.max() * (1 + 1e-12)
        assert s.p50 <= s.p90 <= s.p95 <= s.p99
        assert s.ci95 >= 0 and (math.isinf(s.ci95) == (finite.size == 1))
        assert close(s.p50, np.percentile(finite, 50))
        assert s.percentile(99) == s.p99 and s.percentile(50.0) == s.p50
    tally(serving_result.summary_of)
    tally(serving_result.LatencySummary)
    raises_naming("percentile", s.percentile, data.draw(st.sampled_from([75, 0, -1, 99.5])))
    # drawn records: send, ttft, e2e − ttft (ms), prompt, reply
    send = np.cumsum([r[0] for r in rows]) / 1e3
    ttft = np.array([r[1] for r in rows]) + 1e-3
    gap = np.array([r[2] for r in rows])
    out = np.array([r[4] for r in rows])
    rec = serving_result.ServingRecords(
        arrival_s=send, first_token_s=send + ttft / 1e3, finish_s=send + (ttft + gap) / 1e3,
        input_tokens=np.array([r[3] for r in rows]), output_tokens=out,
        preemptions=np.zeros(len(rows), np.int64), cached_tokens=np.zeros(len(rows), np.int64))
    w = min(warmup, len(rows) - 1)
    res = serving_result.summarize(rec, warmup_requests=w, keep_records=True)
    assert res.n_requests == len(rows) - w and res.records is rec
    assert close(res.throughput_requests_per_s, len(rows) / rec.finish_s.max())
    assert close(res.ttft_ms.mean, np.mean(rec.ttft_ms[w:]), 1e-9)
    assert res.tpot_ms.count == int(np.sum(out[w:] >= 2))
    share = res.goodput_fraction(ttft_ms=ttft_limit, tpot_ms=tpot_limit)
    assert 0.0 <= share <= 1.0
    want = np.mean((rec.ttft_ms[w:] <= ttft_limit) & ~(rec.tpot_ms[w:] > tpot_limit))
    assert close(share, want)
    if percentile is not None:
        got = res.goodput_fraction(ttft_ms=ttft_limit, tpot_ms=tpot_limit, percentile=percentile)
        assert got == (share if share * 100 >= percentile - 1e-9 else 0.0)
        raises_naming("percentile", res.goodput_fraction, percentile=-percentile - 1)
    assert res.table().shape == (5, 7)
    frame = rec.to_frame()
    assert len(frame) == len(rows) and np.allclose(frame["e2e_ms"], ttft + gap)
    for s in (res.ttft_ms, res.e2e_ms):
        assert_no_nan(s)
    for f in (serving_result.summarize, serving_result.ServingRecords,
              serving_result.ServingResult):
        tally(f)


# ============================================================ engine.llm_serving.capacity

@st.composite
def token_inputs(draw):
    """A token count: a number, a sample (one per request) or a law."""
    kind = draw(st.sampled_from(["number", "sample", "law"]))
    if kind == "number":
        return draw(st.integers(1, 4000))
    if kind == "sample":
        return draw(st.lists(st.integers(1, 4000), min_size=1, max_size=30))
    return draw(small_laws())


@fuzz(300, POINTS)
@given(positive_costs(), st.fixed_dictionaries({
    "max_num_seqs": st.integers(1, 512), "max_num_batched_tokens": st.integers(1, 65536),
    "block_size": st.sampled_from([1, 16, 32]),
    "kv_cache_tokens": st.one_of(st.none(), st.integers(10 ** 4, 10 ** 7))}),
    token_inputs(), token_inputs(), loads(), st.data())
def test_capacity(cost, settings_, inputs, outputs, rho, data):
    """workload_moments, capacity_limit, max_rate_per_s, approximate_serving (chunked
    prefill, every step taking time): the moments in range, the capacity finite and
    positive with the binding limit's seats, approximate latencies finite, positive and
    stable exactly below the capacity and inf (unstable) from it on, broadcast over a
    rate array's shape; rates and token counts out of their domains: ValueError naming
    them."""
    sched = Scheduler(**settings_, chunked_prefill=True)
    m = serving_capacity.workload_moments(inputs, outputs)
    assert_no_nan(m)
    assert m.mean_input >= 1 and m.mean_output >= 1 and m.context_sum >= 0
    assert m.mean_input_sq >= m.mean_input ** 2 * (1 - 1e-9)
    assert m.held_tokens >= 1
    tally(serving_capacity.workload_moments)
    lim = serving_capacity.capacity_limit(cost, sched, inputs, outputs)
    assert_no_nan(lim)
    assert math.isfinite(lim.rate_per_s) and lim.rate_per_s > 0
    assert lim.binding in ("max_num_seqs", "token budget", "KV cache") and lim.seats >= 1
    assert lim.step_ms > 0 and lim.exact == (lim.binding == "max_num_seqs")
    if lim.binding == "max_num_seqs":
        assert lim.seats == sched.max_num_seqs
    rate = serving_capacity.max_rate_per_s(cost, sched, inputs, outputs)
    assert rate == lim.rate_per_s
    for f in (serving_capacity.capacity_limit, serving_capacity.max_rate_per_s):
        tally(f)
    lam = at_load(np.where(rho == 0, 1e-6, rho), rate).reshape(4, POINTS // 4)
    a = serving_capacity.approximate_serving(cost, sched, input_tokens=inputs,
                                             output_tokens=outputs, rate_per_s=lam)
    assert a.ttft_ms.shape == lam.shape == a.stable.shape
    assert a.rate_limit_per_s == rate
    bad = data.draw(invalid(RATE_PER_S), label="bad rate")
    cells = lam.astype(object).ravel()
    cells[data.draw(st.integers(0, cells.size - 1))] = bad
    raises_naming("rate_per_s", serving_capacity.approximate_serving, cost, sched,
                  input_tokens=inputs, output_tokens=outputs, rate_per_s=list(cells))
    name = data.draw(st.sampled_from(["input_tokens", "output_tokens"]))
    tokens = {"input_tokens": inputs, "output_tokens": outputs,
              name: data.draw(st.sampled_from([0, -3, math.nan, math.inf, [], [1, 0],
                                               stats.pareto(0.5)]))}
    for f in (serving_capacity.workload_moments, serving_capacity.max_rate_per_s):
        if f is serving_capacity.workload_moments:
            raises_naming(name, f, **tokens)
        else:
            raises_naming(name, f, cost, sched, **tokens)
    unstable = lam >= rate * (1 - 1e-9)
    assert np.array_equal(a.stable, ~unstable)
    for name in ("ttft_ms", "tpot_ms", "e2e_ms", "mean_running"):
        assert np.all(getattr(a, name)[unstable] == np.inf), name
    tally(serving_capacity.approximate_serving, POINTS)
    q = data.draw(st.floats(50.0, 99.99), label="percentile")
    pq = serving_capacity.approximate_percentiles(cost, sched, input_tokens=inputs,
                                                  output_tokens=outputs, rate_per_s=lam,
                                                  percentile=q)
    assert pq.ttft_ms.shape == lam.shape and pq.percentile == q
    assert_no_nan(pq)
    for name in ("ttft_ms", "tpot_ms", "e2e_ms"):
        assert np.all(getattr(pq, name)[unstable] == np.inf), name
    both = pq.stable & a.stable
    assert np.all(pq.tpot_ms[both] >= a.tpot_ms[both] * (1 - 1e-9))  # never below the mean
    assert not np.any(pq.stable & unstable)
    raises_naming("percentile", serving_capacity.approximate_percentiles, cost, sched,
                  input_tokens=inputs, output_tokens=outputs, rate_per_s=lam,
                  percentile=data.draw(st.sampled_from([0.0, 100.0, -5, math.nan, "x"])))
    tally(serving_capacity.approximate_percentiles, POINTS)
    if lim.seats != math.floor(lim.seats):
        return      # fractional seats: negative latencies (test_approximation_fractional_seats)
    for name in ("ttft_ms", "tpot_ms", "e2e_ms", "mean_running"):
        assert_inf_iff(getattr(a, name), unstable, name)
    ok = ~unstable
    assert np.all(a.ttft_ms[ok] > 0) and np.all(a.tpot_ms[ok] >= 0)
    assert np.all(a.e2e_ms[ok] >= a.ttft_ms[ok] * (1 - 1e-12))
    assert np.all(a.mean_running[ok] >= 0)
    assert close(a.e2e_ms[ok], a.ttft_ms[ok] + (m.mean_output - 1) * a.tpot_ms[ok], 1e-9)


# ============================================================ engine.llm_serving.compare

def records_csv(rec) -> str:
    """A measured run's CSV (what read_request_records reads) of simulated records."""
    return "send_s,prompt_tokens,reply_tokens,ttft_ms,e2e_ms\n" + "".join(
        f"{float(a)!r},{i},{o},{float(t)!r},{float(e)!r}\n" for a, i, o, t, e in zip(
            rec.arrival_s, rec.input_tokens, rec.output_tokens, rec.ttft_ms, rec.e2e_ms))


@fuzz(8)
@given(served(max_n=14, max_in=200, max_out=30), positive_costs(),
       st.floats(1.0, 200.0), st.floats(0.5, 50.0),
       st.lists(st.sampled_from(serving_compare.OVERHEAD_TERMS), min_size=1, max_size=2,
                unique=True))
def test_replay_and_calibration(case, cost, rate, frontend, terms):
    """A simulated run written as a measured CSV, read back and replayed with its own cost
    and scheduler: compare_replay's errors are 0, calibrate_step_cost finds no overhead
    to add (rms log error 0), and the front end of a run simulated with one is found
    from a cost without it; bad terms or records: ValueError naming them."""
    sched, l, o = case
    if l.size < 2:
        l, o = np.append(l, l), np.append(o, o)
    run = simulate_serving(cost, sched, input_tokens=l, output_tokens=o, rate_per_s=rate,
                           seed=5, return_records=True).records
    measured = read_request_records(records_csv(run))
    m = serving_compare.measured_records(measured)
    assert np.allclose(m.ttft_ms, measured.ttft_ms) and m.n_requests == l.size
    assert serving_compare.measured_records(m) is m
    tally(serving_compare.measured_records)
    again = serving_compare.replay(measured, cost, sched)
    check_records(again.records, l.size)
    assert np.allclose(again.records.ttft_ms, measured.ttft_ms, rtol=1e-6, atol=1e-6)
    tally(serving_compare.replay)
    table = serving_compare.compare_replay(measured, cost, sched)
    assert list(table.columns) == ["metric", "statistic", "measured_ms", "predicted_ms",
                                   "error_pct"] and len(table) == 12
    got = table.dropna(subset=["error_pct"])
    assert np.all(np.abs(got["error_pct"]) <= 1e-4), table
    tally(serving_compare.compare_replay)
    cal = serving_compare.calibrate_step_cost(cost, measured, sched, terms=terms)
    assert isinstance(cal.cost, StepCost) and cal.n_requests == l.size
    # exact from the grid's neutral point; a front end fitted beside another term starts
    # off it (the grid holds frontend_ms at 0: another term may take its place, and the
    # least squares from there can stop in a local minimum of the stepwise loss)
    if "frontend_ms" not in terms or len(terms) == 1 or cost.frontend_ms == 0:
        assert cal.rms_log_error <= 1e-6, (cal.overhead, cal.rms_log_error)
    assert math.isfinite(cal.rms_log_error) and cal.rms_log_error >= 0
    assert_no_nan(cal.cost)
    assert set(cal.overhead) == set(serving_compare.OVERHEAD_TERMS)
    assert len(cal.tables) == 1
    tally(serving_compare.calibrate_step_cost)
    # a front end the cost lacks is found (it shifts every TTFT alike)
    late = simulate_serving(cost.with_overhead(frontend_ms=cost.frontend_ms + frontend), sched,
                            input_tokens=l, output_tokens=o, rate_per_s=rate, seed=5,
                            return_records=True).records
    found = serving_compare.calibrate_step_cost(cost, late, sched, terms=("frontend_ms",))
    assert found.overhead["frontend_ms"] == pytest.approx(cost.frontend_ms + frontend,
                                                          rel=1e-6, abs=1e-6)
    tally(serving_compare.calibrate_step_cost)
    raises_naming("terms", serving_compare.calibrate_step_cost, cost, measured, sched,
                  terms=("nope",))
    raises_naming("terms", serving_compare.calibrate_step_cost, cost, measured, sched, terms=())
    one = read_request_records(records_csv(run).split("\n", 2)[0] + "\n"
                               + records_csv(run).split("\n")[1] + "\n")
    raises_naming("records", serving_compare.calibrate_step_cost, cost, one, sched)
    raises_naming("records", serving_compare.measured_records, object())


def vllm_run(cost: StepCost, prompt: int, reply: int, *, budget=2048, concurrency=1, n=6,
             date="20260101-000000") -> str:
    """A ``vllm bench serve --save-result`` summary of n requests of ``prompt`` and
    ``reply`` tokens, TTFT and TPOT from ``cost.step_ms`` as a lone request sees them."""
    ttft, end = cost.frontend_ms, 0
    while end < prompt:
        x = min(budget, prompt - end)
        end += x
        ttft += float(cost.step_ms(x, x * end, 0, 0))
    tpot = float(np.mean(cost.step_ms(0, 0, 1, prompt + np.arange(1, max(reply, 2)))))
    return json.dumps({
        "date": date, "endpoint_type": "openai", "label": None, "model_id": "m",
        "num_prompts": n, "request_rate": "inf", "max_concurrency": concurrency,
        "duration": 10.0, "completed": n, "total_input_tokens": n * prompt,
        "total_output_tokens": n * reply, "request_throughput": 0.6, "mean_ttft_ms": ttft,
        "median_ttft_ms": ttft, "p99_ttft_ms": ttft, "mean_tpot_ms": tpot,
        "p99_tpot_ms": tpot})


@fuzz(10)
@given(positive_costs(), st.lists(st.integers(10, 6000), min_size=1, max_size=4, unique=True),
       st.integers(2, 40), st.lists(st.integers(2, 6), max_size=2),
       st.one_of(st.none(), st.integers(20_000, 200_000)), st.integers(64, 4096))
def test_compare_vllm_bench(cost, prompts, reply, concurrencies, kv, budget):
    """compare_vllm_bench on drawn runs (concurrency-1 runs at drawn prompts, then
    closed-loop runs): one row per run in date order, every prediction finite and
    positive; runs without a concurrency-1 run, unreadable or without a
    max_concurrency: ValueError."""
    runs = [vllm_run(cost, p, reply, budget=budget, date=f"2026010{i}-000000")
            for i, p in enumerate(prompts)]
    runs += [vllm_run(cost, prompts[0], reply, budget=budget, concurrency=c, n=8,
                      date=f"2026020{i}-000000") for i, c in enumerate(concurrencies)]
    order = list(reversed(runs))                       # sorted back by date
    table = serving_compare.compare_vllm_bench(order, kv_cache_tokens=kv,
                                               max_num_batched_tokens=budget)
    assert len(table) == len(runs)
    assert table["max_concurrency"].tolist() == [1] * len(prompts) + concurrencies
    assert table.attrs["ordered_by_date"]
    for col in ("predicted_mean_ttft_ms", "predicted_p99_ttft_ms",
                "predicted_throughput_requests_per_s"):
        assert np.all(np.isfinite(table[col])) and np.all(table[col] > 0), col
    assert np.all(np.isfinite(table["mean_ttft_ms_error_pct"]))
    tally(serving_compare.compare_vllm_bench)
    with pytest.raises(ValueError, match="concurrency-1"):
        serving_compare.compare_vllm_bench(runs[len(prompts):] or [vllm_run(cost, 100, 5,
                                                                             concurrency=2)])
    with pytest.raises(ValueError, match="run 1"):
        serving_compare.compare_vllm_bench(["{}", *runs])
    no_cap = json.loads(runs[0])
    del no_cap["max_concurrency"]
    with pytest.raises(ValueError, match="max_concurrency"):
        serving_compare.compare_vllm_bench([json.dumps(no_cap)])
    raises_naming("runs", serving_compare.compare_vllm_bench, [])


# ============================================================ engine.llm_serving.sources

@st.composite
def junk(draw, samples=()):
    """Any text or bytes, or a valid sample cut, spliced with junk or garbled."""
    kind = draw(st.sampled_from(["text", "bytes", "garbled"] if samples else ["text", "bytes"]))
    if kind == "text":
        return draw(st.text(max_size=300))
    if kind == "bytes":
        return draw(st.binary(max_size=300))
    text = draw(st.sampled_from(samples))
    i = draw(st.integers(0, len(text)))
    j = draw(st.integers(i, min(len(text), i + 40)))
    return text[:i] + draw(st.text(max_size=8)) + text[j:]


def read_or_refuse(fn, *args, **kwargs):
    """``fn(*args)``'s result, or None when it raised a ``ValueError`` with a message."""
    try:
        return fn(*args, **kwargs)
    except ValueError as err:
        assert str(err), "a ValueError without a message"
        return None


def check_fit(fit):
    assert isinstance(fit, serving_step_fit.StepCostFit) and isinstance(fit.cost, StepCost)
    assert_no_nan(fit.cost)
    assert all(getattr(fit.cost, f) >= 0 and math.isfinite(getattr(fit.cost, f))
               for f in COST_FIELDS)
    assert fit.n_points >= 1 and all(isinstance(n, str) for n in fit.notes)
    for group, r2 in fit.r2.items():
        assert not math.isnan(r2) and r2 <= 1 + 1e-9, (group, r2)
        assert np.all(np.isfinite(fit.residuals_ms[group]))
    assert set(fit.held_at_zero) <= set(COST_FIELDS)
    assert all(getattr(fit.cost, f) == 0 for f in fit.held_at_zero)


def distserve_text(c: StepCost, threshold, large: StepCost) -> str:
    def dec(x):
        return [x.base_ms, x.context_ms_per_token, x.decode_ms_per_seq]
    return json.dumps({"facebook/opt-13b": {"1": {
        "decoding_large_small_bs_threshold": threshold,
        "prefill": [c.prefill_base_ms, c.prefill_ms_per_token, c.prefill_ms_per_token_sq],
        "decoding_smallbs": dec(c), "decoding_largebs": dec(large)}}}, indent=2)


SW_HEADER = ("model,hardware,prompt_size,batch_size,token_size,peak_power,average_power,"
             "prompt_time,token_time,e2e_time,tensor_parallel")


def splitwise_text(c: StepCost, hardware="a100-80gb", tp=8) -> str:
    rows = []
    points = ([(l, 1, 128) for l in (128, 512, 2048, 8192)] + [(512, b, 128) for b in (2, 8, 32)]
              + [(512, 1, t) for t in (256, 1024)])
    for l, b, t in points:
        prompt = float(c.step_ms(b * l, b * l * l, 0, 0))
        token = float(np.mean(c.step_ms(0, 0, b, b * (l + np.arange(1, t)))))
        rows.append(f"llama2-70b,{hardware},{l},{b},{t},1.0,0.7,{prompt!r},{token!r},"
                    f"{prompt + (t - 1) * token!r},{tp}")
    return "\n".join([SW_HEADER, *rows]) + "\n"


def steps_text(c: StepCost, seed) -> str:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(24):
        p = int(rng.integers(1, 8192)) if i % 3 < 2 else 0
        d = int(rng.integers(1, 256)) if i % 3 > 0 else 0
        q = p * int(rng.integers(p, p + 4096)) if p else 0
        k = d * int(rng.integers(16, 4096)) if d else 0
        rows.append(f"{p},{q},{d},{k},{float(c.step_ms(p, q, d, k))!r}")
    return "prompt_tokens,prompt_tokens_sq,decoding,context_tokens,step_ms\n" + "\n".join(rows)


SOURCE_SAMPLES = (
    distserve_text(StepCost(base_ms=20, prefill_base_ms=15, prefill_ms_per_token=0.1,
                            decode_ms_per_seq=0.05, context_ms_per_token=5e-4), 95,
                   StepCost(base_ms=17, decode_ms_per_seq=0.1, context_ms_per_token=4e-4)),
    splitwise_text(StepCost(base_ms=44, prefill_base_ms=30, prefill_ms_per_token=0.2,
                            decode_ms_per_seq=0.25, context_ms_per_token=3e-4)),
    steps_text(StepCost(base_ms=20, prefill_base_ms=15, prefill_ms_per_token=0.1,
                        decode_ms_per_seq=0.05, context_ms_per_token=5e-4), 0),
    vllm_run(StepCost(base_ms=15, prefill_base_ms=12, prefill_ms_per_token=0.09), 3000, 200))


@fuzz(100)         # ~60 ms a case: a DistServe joint fit samples up to 6,400 points
@given(positive_costs(), positive_costs(), st.integers(1, 200),
       st.sampled_from(["joint", "small", "large"]), st.integers(0, 2 ** 16),
       st.lists(st.integers(10, 60_000), min_size=1, max_size=5, unique=True),
       st.integers(1, 4096), junk(SOURCE_SAMPLES), st.data())
def test_sources(cost, large, threshold, decode, seed, prompts, budget, garbage, data):
    """The step-cost sources on files generated from drawn costs: a StepCostFit with a
    finite non-negative cost, R² ≤ 1, finite residuals, held fields at 0 (DistServe's
    prefill copied exactly, a CSV of exact step times recovered to its step times);
    bad arguments named; any text (random, or a valid file garbled), any model,
    hardware or degree: a fit or a ValueError, never another exception."""
    ds = serving_published_fits.step_cost_from_distserve(distserve_text(cost, threshold, large),
                                                  "opt-13b", 1, decode=decode)
    check_fit(ds)
    assert (ds.cost.prefill_base_ms, ds.cost.prefill_ms_per_token,
            ds.cost.prefill_ms_per_token_sq) == (cost.prefill_base_ms, cost.prefill_ms_per_token,
                                                 cost.prefill_ms_per_token_sq)
    if decode == "small":
        assert ds.cost.base_ms == cost.base_ms
    tally(serving_published_fits.step_cost_from_distserve)
    sw = serving_published_fits.step_cost_from_splitwise(splitwise_text(cost), "llama2-70b",
                                                  "a100-80gb", 8)
    check_fit(sw)
    assert sw.r2["prefill"] > 1 - 1e-6
    tally(serving_published_fits.step_cost_from_splitwise)
    text = steps_text(cost, seed)
    fit = serving_measured_fits.step_cost_from_csv(text)
    check_fit(fit)
    design = np.array([[float(x) for x in row.split(",")] for row in text.splitlines()[1:]])
    assert close(fit.cost.step_ms(*design[:, :4].T), design[:, 4], 1e-6)
    tally(serving_measured_fits.step_cost_from_csv)
    runs = [vllm_run(cost, p, 64, budget=budget) for p in prompts]
    vb = serving_measured_fits.fit_step_cost_vllm_bench(runs, max_num_batched_tokens=budget)
    check_fit(vb)
    assert vb.n_points == len(prompts) and "decode_ms_per_seq" in vb.held_at_zero
    tally(serving_measured_fits.fit_step_cost_vllm_bench)
    tally(serving_step_fit.StepCostFit, 4)
    # bad arguments
    good_ds = SOURCE_SAMPLES[0]
    raises_naming("decode", serving_published_fits.step_cost_from_distserve, good_ds, "opt-13b", 1,
                  decode="medium")
    raises_naming("context_tokens", serving_published_fits.step_cost_from_distserve, good_ds,
                  "opt-13b", 1, context_tokens=data.draw(st.sampled_from(
                      [(0, 10), (100, 100), (200, 100), (1, math.inf), (math.nan, 5)])))
    raises_naming("typical_context", serving_published_fits.step_cost_from_distserve, good_ds,
                  "opt-13b", 1, typical_context=data.draw(st.sampled_from(
                      [0, -1, math.nan, math.inf, "1000"])))
    raises_naming("tensor_parallel", serving_published_fits.step_cost_from_distserve, good_ds,
                  "opt-13b", data.draw(st.sampled_from([0, 1.5, -2, "x", None, True, math.nan])))
    raises_naming("max_num_batched_tokens", serving_measured_fits.fit_step_cost_vllm_bench, runs,
                  max_num_batched_tokens=data.draw(st.sampled_from([0, -1, 1.5, "2048", None])))
    raises_naming("runs", serving_measured_fits.fit_step_cost_vllm_bench, 5)
    with pytest.raises(ValueError, match="concurrency 1"):
        serving_measured_fits.fit_step_cost_vllm_bench([vllm_run(cost, 100, 5, concurrency=4)])
    # any text, any choice
    word = data.draw(st.one_of(st.text(max_size=12), st.sampled_from(
        ["opt-13b", "llama2-70b", "a100-80gb", "1", "8"])), label="choice")
    tp = data.draw(st.one_of(st.integers(-2, 16), st.text(max_size=3), st.none(),
                             st.floats(allow_nan=True)), label="tp")
    read_or_refuse(serving_published_fits.step_cost_from_distserve, garbage, word, tp)
    read_or_refuse(serving_published_fits.step_cost_from_distserve, good_ds, word, tp)
    read_or_refuse(serving_published_fits.step_cost_from_splitwise, garbage, word, word, tp)
    read_or_refuse(serving_published_fits.step_cost_from_splitwise, SOURCE_SAMPLES[1], word,
                   "a100-80gb", tp)
    read_or_refuse(serving_measured_fits.step_cost_from_csv, garbage)
    read_or_refuse(serving_measured_fits.fit_step_cost_vllm_bench, garbage)
    read_or_refuse(serving_measured_fits.fit_step_cost_vllm_bench, [runs[0], garbage])


# ============================================================ engine.llm_serving.presets

PRESET_TEXT = {p.stem: p.read_text() for p in sorted(serving_presets.SERVING_PRESET_DIR.glob(
    "*.toml"))}
BAD_TOML_VALUES = st.sampled_from(["-1", "0", "1.5", "2", '"text"', '""', "true", "nan", "inf",
                                   "-inf", "[]", "{}", '["base_ms"]', "1e400", "[1, 2]",
                                   "{decode = 2.0}", '"step_cost_from_csv"', "67895"])


@fuzz(150)
@given(st.sampled_from(sorted(PRESET_TEXT)), st.data())
def test_serving_presets(tmp_path_factory, preset_id, data):
    """serving_presets loads the shipped presets; a preset file with one line's value
    replaced by a drawn value, or the line dropped: a preset whose scheduler and cost
    are valid (no NaN), or a ValueError naming the file; refit from unreadable files:
    a ValueError."""
    presets = serving_presets.serving_presets()
    assert set(presets) == set(PRESET_TEXT)
    tally(serving_presets.serving_presets)
    text = PRESET_TEXT[preset_id]
    lines = text.splitlines()
    fields = [i for i, line in enumerate(lines) if " = " in line and not line.startswith("#")]
    i = data.draw(st.sampled_from(fields), label="line")
    key = lines[i].split(" = ", 1)[0].strip()
    if data.draw(st.booleans(), label="drop"):
        lines[i] = ""
    else:
        lines[i] = f"{key} = {data.draw(BAD_TOML_VALUES, label='value')}"
    folder = tmp_path_factory.mktemp("serving_presets")
    path = folder / f"{preset_id}.toml"
    path.write_text("\n".join(lines) + "\n")
    try:
        p = serving_presets.load_serving_preset(path)
    except ValueError as err:
        assert path.name in str(err), str(err)
    else:
        assert_no_nan(p.cost)
        assert isinstance(p.scheduler(), Scheduler) and p.id == preset_id
        assert_no_nan(p.r2)
    again = serving_presets.load_serving_preset(preset_id)
    assert again.cost == presets[preset_id].cost
    tally(serving_presets.load_serving_preset, 2)
    tally(serving_presets.ServingPreset)
    garbage = data.draw(junk(), label="refit text")
    read_or_refuse(again.refit, lambda name: garbage)
    raises_naming("nope", serving_presets.load_serving_preset, "nope")


# ============================================================ engine.llm_serving.blockcache

BC = serving_blockcache
BLOCKCACHE_PUBLIC = {name for name, obj in vars(BC).items()     # new_cache (and, without
                     if not name.startswith("_") and callable(obj)  # numba, the operations)
                     and getattr(obj, "__module__", None) == BC.__name__
                     and (inspect.isfunction(obj) or name == "new_cache")}
BC_OPS = st.lists(st.tuples(st.sampled_from(["add0", "add1", "find", "hold", "drop", "evict",
                                             "run"]),
                            st.one_of(st.integers(0, 40), st.integers(0, 2 ** 62)),
                            st.integers(1, 5)), max_size=60)


def bc_state(pool):
    state = np.zeros(BC.VERSION + 1, np.int64)
    state[BC.HEAD] = state[BC.TAIL] = BC.NONE
    state[BC.POOL_TOP] = pool.size
    return state


def bc_order(entries, state):
    """The eviction list from its head: (key or None for a run, blocks) per row."""
    out, e, seen = [], state[BC.HEAD], 0
    while e != BC.NONE:
        out.append((None if entries[e, BC.KEY] == BC.NONE else int(entries[e, BC.KEY]),
                    int(entries[e, BC.COUNT])))
        e = entries[e, BC.NEXT]
        seen += 1
        assert seen <= entries.shape[0], "the eviction list loops"
    return out


@fuzz(400)
@given(st.integers(1, 16), BC_OPS)
def test_block_cache(capacity, ops):
    """The compiled prefix cache (new_cache and its operations) against a plain model:
    a dict of keyed blocks with references and the unreferenced rows (keyed blocks and
    key-less runs) in least-recently-released order.  After every operation: find gives
    each cached key's row (NONE for the others), the eviction list from HEAD is the
    model's, EVICTABLE counts its blocks, FREE the blocks evicted; with no row left and
    nothing to forget, add and add_run refuse.  A new row made by forgetting the oldest
    unreferenced block is left to the xfail cases test_block_cache_forget_*: both
    ways it goes wrong are bugs."""
    table, entries, pool = BC.new_cache(capacity)
    assert table.size >= 2 * capacity and table.size & (table.size - 1) == 0
    assert entries.shape == (capacity, 5) and np.all(table == BC.NONE)
    assert sorted(pool.tolist()) == list(range(capacity))
    tally(BC.new_cache)
    state = bc_state(pool)
    refs, lru, free, runs = {}, [], 0, 0                # lru: [key or ("run", id), blocks]
    used = 0
    for op, key, count in ops:
        if op in ("add0", "add1") and key in refs:
            continue                                    # add takes keys not cached yet
        if op in ("add0", "add1", "run"):
            if used == capacity:
                if not lru:                             # nothing to forget: refused
                    if op == "run":
                        assert not BC.add_run(table, entries, pool, state, count)
                    else:
                        assert BC.add(table, entries, pool, state, key,
                                      int(op == "add1")) == BC.NONE
                continue        # a row made by forgetting the oldest block: the xfail cases
            if op == "run":
                assert BC.add_run(table, entries, pool, state, count)
                runs += 1
                lru.append([("run", runs), count])
            else:
                e = BC.add(table, entries, pool, state, key, int(op == "add1"))
                assert e != BC.NONE and entries[e, BC.KEY] == key
                refs[key] = int(op == "add1")
                if op == "add0":
                    lru.append([key, 1])
            used += 1
        elif op == "find":
            e = BC.find(table, entries, key)
            assert (e == BC.NONE) == (key not in refs)
        elif op == "hold" and refs:
            k = sorted(refs)[key % len(refs)]
            BC.hold(entries, state, BC.find(table, entries, k))
            if refs[k] == 0:
                lru[:] = [x for x in lru if x[0] != k]
            refs[k] += 1
        elif op == "drop" and any(refs.values()):
            held = sorted(k for k, r in refs.items() if r > 0)
            k = held[key % len(held)]
            BC.drop(entries, state, BC.find(table, entries, k))
            refs[k] -= 1
            if refs[k] == 0:
                lru.append([k, 1])
        elif op == "evict" and lru:
            got = BC.evict(table, entries, pool, state, count)
            head = lru[0]
            if isinstance(head[0], tuple) and head[1] > count:
                head[1] -= count
                assert got == count
            else:
                lru.pop(0)
                assert got == head[1]
                if not isinstance(head[0], tuple):
                    del refs[head[0]]
                used -= 1
            free += got
        # the cache against the model
        for k, r in refs.items():
            e = BC.find(table, entries, k)
            assert e != BC.NONE and entries[e, BC.REFS] == r, (k, r)
        want = [(None if isinstance(k, tuple) else k, c) for k, c in lru]
        assert bc_order(entries, state) == want
        assert state[BC.EVICTABLE] == sum(c for _, c in lru)
        assert state[BC.FREE] == free and state[BC.POOL_TOP] == capacity - used
    for name in BLOCKCACHE_PUBLIC - {"new_cache"}:          # plain-Python backend only
        tally(getattr(BC, name))


# ============================================================ regressions (bugs the fuzzing found)

def test_zero_cost_throughput():
    """Steps of 0 ms: everything finishes at 0 s, an unbounded throughput (not NaN)."""
    res = simulate_serving(StepCost(), Scheduler(), input_tokens=1, output_tokens=1,
                           concurrency=1, n_requests=1)
    assert res.throughput_requests_per_s == math.inf == res.output_tokens_per_s


@pytest.mark.parametrize("chunked", [True, False])
def test_watermark_blocks_a_prompt(chunked):
    sched = Scheduler(kv_cache_tokens=160, block_size=16, kv_watermark=0.5,
                      chunked_prefill=chunked)
    try:
        simulate_serving(StepCost(base_ms=1.0), sched, input_tokens=100, output_tokens=2,
                         concurrency=1, n_requests=1)
    except ValueError:
        pass


def test_whole_prompt_capacity_of_a_free_step():
    try:
        serving_capacity.capacity_limit(StepCost(), Scheduler(chunked_prefill=False), 10, 5)
    except ValueError:
        pass


def test_whole_prompt_capacity_one_token_replies():
    cost, sched = StepCost(base_ms=1.0), Scheduler(chunked_prefill=False, max_num_seqs=4)
    rate = serving_capacity.max_rate_per_s(cost, sched, 10, 1)
    # a step holds at most 4 requests and takes 1 ms: at most 4,000 requests per s
    assert rate <= 4000 * 1.05, rate
    a = serving_capacity.approximate_serving(cost, sched, input_tokens=10, output_tokens=1,
                                             rate_per_s=[100.0, 1000.0])
    assert_no_nan(a)


def test_whole_prompt_approximation_near_capacity():
    cost, sched = StepCost(base_ms=1.0), Scheduler(chunked_prefill=False, max_num_seqs=4)
    rate = serving_capacity.max_rate_per_s(cost, sched, 10, 2)
    a = serving_capacity.approximate_serving(cost, sched, input_tokens=10, output_tokens=2,
                                             rate_per_s=0.999 * rate)
    assert bool(a.stable) and a.ttft_ms > 0 and a.tpot_ms > 0, (a.ttft_ms, a.tpot_ms)


@pytest.mark.parametrize("q", [None, "p99", [50]])
def test_latency_summary_percentile_junk(q):
    raises_naming("percentile", serving_result.summary_of([1.0, 2.0]).percentile, q)


def test_distserve_zero_decode_piece():
    text = json.dumps({"m": {"1": {"decoding_large_small_bs_threshold": 3,
                                   "prefill": [1.0, 0.1, 0.0], "decoding_smallbs": [0, 0, 0],
                                   "decoding_largebs": [0, 0, 0]}}})
    fit = serving_published_fits.step_cost_from_distserve(text, "m", 1)
    assert_no_nan(fit)


def test_scheduler_negative_inf_kv():
    raises_naming("kv_cache_tokens", Scheduler, kv_cache_tokens=-math.inf)


def test_approximation_fractional_seats():
    cost, sched = StepCost(base_ms=1.0), Scheduler(max_num_seqs=2, max_num_batched_tokens=4)
    assert serving_capacity.capacity_limit(cost, sched, 3, 1).seats == pytest.approx(4 / 3)
    a = serving_capacity.approximate_serving(cost, sched, input_tokens=3, output_tokens=1,
                                             rate_per_s=1200.0)      # 0.9 of 1,333 per s
    assert bool(a.stable) and a.ttft_ms > 0 and a.tpot_ms > 0, (a.ttft_ms, a.tpot_ms)


def test_block_cache_forget_a_run_at_the_head():
    table, entries, pool = BC.new_cache(2)
    state = bc_state(pool)
    BC.add(table, entries, pool, state, 7, 1)          # a held block
    assert BC.add_run(table, entries, pool, state, 3)  # 3 unreferenced blocks, one row
    BC.add(table, entries, pool, state, 9, 0)          # no row left: forget one block
    assert BC.find(table, entries, 7) != BC.NONE, "the held key 7 was overwritten"
    assert state[BC.POOL_TOP] >= 0


def test_block_cache_forget_keeps_the_free_count():
    table, entries, pool = BC.new_cache(1)
    state = bc_state(pool)
    BC.add(table, entries, pool, state, 5, 0)          # one unreferenced block, no row left
    BC.add(table, entries, pool, state, 6, 0)          # forgets 5 to make a row for 6
    assert BC.find(table, entries, 5) == BC.NONE and BC.find(table, entries, 6) != BC.NONE
    assert state[BC.FREE] == 0, state[BC.FREE]


@pytest.mark.parametrize("capacity", [math.inf, None])
def test_block_cache_bad_capacity(capacity):
    raises_naming("capacity", BC.new_cache, capacity)


def test_workload_moments_text_tokens():
    raises_naming("input_tokens", serving_capacity.workload_moments, "ten", 5)


# ============================================================ engine.llm_serving.workload

@FUZZ
@given(st.lists(st.integers(0, 5000), min_size=2, max_size=40), st.data())
def test_workload(prompts, data):
    """trace_tokens keeps the requests with a prompt and a reply token (counted by hand
    here), TraceTokens.draw draws whole requests, and the load axis ends at share ×
    capacity rounded up to 2 significant digits with a power-of-ten step."""
    from engine.measured import RequestTrace
    n = len(prompts)
    replies = data.draw(st.lists(st.integers(0, 500), min_size=n, max_size=n), label="replies")
    trace = RequestTrace(np.arange(n, dtype=float), np.array(prompts), np.array(replies),
                         "plain_csv", ())
    kept = [(p, r) for p, r in zip(prompts, replies) if p >= 1 and r >= 1]
    if len(kept) < 2:
        raises_naming("fewer than 2 requests", serving_workload.trace_tokens, trace, "k", "t")
    else:
        t = serving_workload.trace_tokens(trace, "k", "t")
        assert t.n_requests == len(kept) and t.dropped == n - len(kept)
        assert t.prompts.tolist() == [p for p, _ in kept] and not t.prompts.flags.writeable
        assert t.mean_prompt_tokens == pytest.approx(sum(p for p, _ in kept) / len(kept))
        assert t.mean_reply_tokens == pytest.approx(sum(r for _, r in kept) / len(kept))
        inp, out = t.draw(50, [1, 2])
        assert set(zip(inp.tolist(), out.tolist())) <= set(kept)
        assert np.array_equal(t.draw(50, [1, 2])[0], inp)         # the same seed, the same draw
        tally(serving_workload.trace_tokens)
        tally(serving_workload.TraceTokens)
        raises_naming("n", t.draw, 0, 1)
    no_tokens = RequestTrace(np.arange(3.0), None, None, "plain_csv", ())
    raises_naming("token counts", serving_workload.trace_tokens, no_tokens, "k", "t")
    raises_naming("trace", serving_workload.trace_tokens, "a.csv", "k", "t")
    cap = data.draw(st.floats(1e-3, 1e6), label="capacity")
    share = data.draw(st.floats(0.5, 2.0), label="share")
    top = serving_workload.load_axis_top_per_s(cap, share)
    unit = 10.0 ** (math.floor(math.log10(cap * share)) - 1)
    assert cap * share * (1 - 1e-12) <= top < cap * share + unit * (1 + 1e-9)
    assert abs(top / unit - round(top / unit)) < 1e-6 and round(top / unit) < 100 + 1
    tally(serving_workload.load_axis_top_per_s)
    step = serving_workload.rate_step_per_s(top)
    assert 100 * (1 - 1e-12) <= top / step < 1000 * (1 + 1e-12)
    assert math.log10(step) == pytest.approx(round(math.log10(step)), abs=1e-9)
    tally(serving_workload.rate_step_per_s)
    raises_naming("capacity_per_s", serving_workload.load_axis_top_per_s, -1.0)
    raises_naming("top_per_s", serving_workload.rate_step_per_s, math.inf)


# ============================================================ the table

# kernel.serve is a numba dispatcher (not a Python function: no public name to fuzz)
# when numba is installed; on the plain-Python backend it is a function, fuzzed through
# simulate_serving, its only caller.
def plain_functions(module) -> set:
    """The names tests/test_fuzz_contract.py's public_names gives for ``module``'s
    functions: compiled ones are numba dispatchers, not functions, unless numba is
    missing (the plain-Python backend)."""
    return {name for name, obj in vars(module).items()
            if not name.startswith("_") and inspect.isfunction(obj)
            and obj.__module__ == module.__name__}


KERNEL_PUBLIC = plain_functions(serving_kernel)

FUZZED = {
    serving_cost: {"StepCost": test_step_cost, "kv_bytes_per_token": test_step_cost,
                   "kv_capacity_tokens": test_step_cost},
    serving_scheduler: {"Scheduler": test_scheduler},
    serving_sim: {"simulate_serving": test_simulate_serving,
                  "request_lengths": test_request_lengths_and_fit,
                  "check_fits": test_request_lengths_and_fit},
    serving_result: {"summarize": test_summaries, "ServingRecords": test_summaries,
                     "ServingResult": test_summaries,
                     "Timeline": (test_simulate_serving, "timeline_steps")},
    serving_capacity: {"workload_moments": test_capacity, "capacity_limit": test_capacity,
                       "max_rate_per_s": test_capacity, "approximate_serving": test_capacity,
                       "WorkloadMoments": (test_capacity, "workload_moments"),
                       "CapacityLimit": (test_capacity, "capacity_limit"),
                       "ServingApproximation": (test_capacity, "approximate_serving"),
                       "approximate_percentiles": test_capacity,
                       "ServingPercentiles": (test_capacity, "approximate_percentiles")},
    serving_compare: {"measured_records": test_replay_and_calibration,
                      "replay": test_replay_and_calibration,
                      "compare_replay": test_replay_and_calibration,
                      "calibrate_step_cost": test_replay_and_calibration,
                      "Calibration": (test_replay_and_calibration, "calibrate_step_cost"),
                      "compare_vllm_bench": test_compare_vllm_bench},
    serving_published_fits: {"step_cost_from_distserve": test_sources,
                             "step_cost_from_splitwise": test_sources},
    serving_measured_fits: {"step_cost_from_csv": test_sources,
                            "fit_step_cost_vllm_bench": test_sources},
    serving_step_fit: {"StepCostFit": test_sources},
    serving_disaggregated: {"simulate_disaggregated": test_simulate_disaggregated,
                            "transfer_ms": test_simulate_disaggregated},
    serving_fleet: {"simulate_fleet": test_simulate_fleet},
    serving_slo: {"largest_rate_meeting": test_largest_rate_meeting,
                  "meets_target": (test_largest_rate_meeting, "largest_rate_meeting"),
                  "SloRate": (test_largest_rate_meeting, "largest_rate_meeting")},
    serving_presets: {"serving_presets": test_serving_presets,
                      "load_serving_preset": test_serving_presets,
                      "ServingPreset": test_serving_presets},
}
FUZZED[serving_workload] = {"TraceTokens": test_workload, "trace_tokens": test_workload,
                             "load_axis_top_per_s": test_workload,
                             "rate_step_per_s": test_workload}
FUZZED[serving_blockcache] = {name: test_block_cache for name in BLOCKCACHE_PUBLIC}
if KERNEL_PUBLIC:                                      # the plain-Python backend
    FUZZED[serving_kernel] = {name: (test_simulate_serving, "simulate_serving")
                              for name in KERNEL_PUBLIC}
assert BACKEND == "numba" or KERNEL_PUBLIC
