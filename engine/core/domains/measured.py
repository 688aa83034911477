"""Domains of the readers of real tools' files and the offline-to-online prediction
(engine/measured/)."""
from __future__ import annotations

from .base import Choice, Domain

GPU_SHARE = Domain("gpu_share", "fraction", low=0.0, high=1.0, typical=(0.2, 1.0),
                   description="share of a model instance's batch time that holds the GPU")
ONLINE_TERMS = Choice("terms", ("separated", "whole_table"),
                      description="offline to online prediction: the separated terms, or "
                                  "the whole offline table")
