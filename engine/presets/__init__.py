"""Hardware and workload presets: data files in ``presets/``, validated on load.

One preset per file, named by its id, fields carrying units, each file citing its
source; one module per kind of preset:

* ``batch_profile``   ``presets/gpu_batching/``: throughput (and power) by batch size
                      (Inoue 2021, Table 1, and measured profiles)
* ``token_latency``   ``presets/llm/``: request latency by token counts (Yang et al. Table I)
* ``llm_batch_time``  ``presets/llm_batching/``: LLM batch times H(b, l) (Yang et al. eq 18)
* ``token_law``       ``presets/token_laws/``: token-count histograms of request traces,
                      each rebuilt into an ``EmpiricalTokens`` law
* ``pipeline_specs``  ``presets/gpu_specs/`` and ``presets/pipeline_workloads/``: the
                      CPU-GPU pipeline's GPU datasheets and job types
* ``online_pair``     ``presets/online_pairs/``: one deployment measured offline and online
* ``arrival``         ``presets/arrivals/``: a request trace's arrival statistics and MMPP-2
* ``hardware_price``  ``presets/hardware_prices/``: a GPU's hourly price and power
* ``schema``          what they share: the file read, its keys checked against the preset's
                      dataclass, each number against its domain (``engine.core.domains``),
                      a folder parsed once per process

A bad file raises ``ValueError`` naming the file and the field: unknown or missing fields,
non-numeric, out-of-domain or non-finite values, columns of different lengths.  Besides
the papers' tables, the folders hold presets measured by others on real GPUs and servers
(DeepLearningExamples, Splitwise, the Azure LLM trace); ``docs/models/measured_presets.md``
derives them.  The LLM serving presets live with their model: ``engine.llm_serving``.
"""
from .arrival import ARRIVAL_DIR, ArrivalPreset, arrival_presets, load_arrival_preset
from .batch_profile import BATCH_PROFILE_DIR, BatchProfile, batch_profiles, load_batch_profile
from .hardware_price import (HARDWARE_PRICE_DIR, HardwarePrice, hardware_prices,
                             load_hardware_price)
from .llm_batch_time import (LLM_BATCH_TIME_DIR, LLMBatchTimePreset, llm_batch_time_presets,
                             load_llm_batch_time)
from .online_pair import (ONLINE_PAIR_DIR, PAIR_SOURCE_FORMAT, OnlinePair, load_online_pair,
                          online_pairs)
from .pipeline_specs import (GPU_SPEC_DIR, PIPELINE_WORKLOAD_DIR, GpuSpec, PipelineWorkload,
                             gpu_specs, load_gpu_spec, load_pipeline_workload,
                             pipeline_workloads)
from .schema import PRESET_DIR
from .token_latency import (TOKEN_LATENCY_DIR, TokenLatencyProfile, load_token_latency_profile,
                            token_latency_profiles)
from .token_law import (TOKEN_LAW_DIR, TOKEN_LAW_KINDS, TokenLawPreset, load_token_law_preset,
                        token_law_presets)

__all__ = [
    "PRESET_DIR",
    "BATCH_PROFILE_DIR", "BatchProfile", "load_batch_profile", "batch_profiles",
    "TOKEN_LATENCY_DIR", "TokenLatencyProfile", "load_token_latency_profile",
    "token_latency_profiles",
    "LLM_BATCH_TIME_DIR", "LLMBatchTimePreset", "load_llm_batch_time", "llm_batch_time_presets",
    "TOKEN_LAW_DIR", "TOKEN_LAW_KINDS", "TokenLawPreset", "load_token_law_preset",
    "token_law_presets",
    "GPU_SPEC_DIR", "PIPELINE_WORKLOAD_DIR", "GpuSpec", "PipelineWorkload", "load_gpu_spec",
    "load_pipeline_workload", "gpu_specs", "pipeline_workloads",
    "ONLINE_PAIR_DIR", "PAIR_SOURCE_FORMAT", "OnlinePair", "load_online_pair", "online_pairs",
    "ARRIVAL_DIR", "ArrivalPreset", "load_arrival_preset", "arrival_presets",
    "HARDWARE_PRICE_DIR", "HardwarePrice", "load_hardware_price", "hardware_prices",
]
