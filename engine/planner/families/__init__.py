"""The planner's workload families, one module each (numpy.polynomial's pattern: a
small base, ``base.Family``, and one subclass per family):

* ``gpu``: image-model servers doing dynamic batching (``gpu_batching``)
* ``llm``: LLM servers running whole batches, the batch model (``llm_batch``)
* ``llm_serving``: LLM servers as vLLM runs them, colocated replicas (``llm_serving``)
* ``llm_disaggregated``: prefill and decode on separate servers (``llm_disaggregated``)

A new family is one more module here and one more line in ``FAMILIES``.
"""
from __future__ import annotations

from ...core.domains import Choice
from .base import METRICS, Family, Knob, sla_column, sla_text
from .gpu_batching import FAMILY as _GPU
from .llm_batch import FAMILY as _LLM
from .llm_serving import FAMILY as _SERVING
from .llm_disaggregated import FAMILY as _DISAGGREGATED

FAMILIES = {f.name: f for f in (_GPU, _LLM, _SERVING, _DISAGGREGATED)}


def family(name: str) -> Family:
    """The family called ``name`` (``ValueError`` naming the choices otherwise)."""
    return FAMILIES[Choice("workload", tuple(FAMILIES)).check(name)]


__all__ = ["FAMILIES", "Family", "Knob", "METRICS", "family", "sla_column", "sla_text"]
