"""Token-latency presets (``presets/llm/``): measured request latency by input and output
token counts for one device and model (Yang et al. Table I)::

    id = "a100_llama2_7b_table1"
    name = "..."
    source = "..."
    [columns]
    input_tokens = [128, ...]
    output_tokens = [128, ...]
    latency_s = [2.91, ...]

A bad file raises ``ValueError`` naming the file and the field (as batch profiles; token
counts whole, at least 2 distinct output counts).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .schema import IDENTITY, PRESET_DIR, load_folder, read_columns, schema

TOKEN_LATENCY_DIR = PRESET_DIR / "llm"

@dataclass(frozen=True)
class TokenLatencyProfile:
    """Measured request latency (s) by input and output token counts for one device and model."""

    id: str
    name: str
    source: str
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    latency_s: np.ndarray

    def fit(self):
        """S = a·n_out + c by least squares (the paper's model, §II-B)."""
        from ..fit import fit_token_latency
        return fit_token_latency(self.output_tokens, self.latency_s)

    def fit_with_input(self):
        """S = a·n_out + b·n_in + c by least squares."""
        from ..fit import fit_token_latency_with_input
        return fit_token_latency_with_input(self.output_tokens, self.input_tokens, self.latency_s)


# the file's [columns], from the dataclass: its array fields
_COLUMNS = tuple(k for k, (kind, _) in schema(TokenLatencyProfile).items() if kind is np.ndarray)


def load_token_latency_profile(path) -> TokenLatencyProfile:
    """Load and validate one token-latency TOML file (``ValueError`` naming file and field)."""
    data, arrays, where = read_columns(path, _COLUMNS, _COLUMNS, "output_tokens")
    for key in ("input_tokens", "output_tokens"):
        if np.any(arrays[key] != np.round(arrays[key])):
            raise ValueError(f"{where} [columns].{key}: must be whole numbers")
    if np.unique(arrays["output_tokens"]).size < 2:
        raise ValueError(f"{where} [columns].output_tokens: needs at least 2 distinct values")
    return TokenLatencyProfile(**{k: data[k] for k in IDENTITY}, **arrays)


def token_latency_profiles(directory=TOKEN_LATENCY_DIR) -> dict[str, TokenLatencyProfile]:
    """All token-latency presets in ``directory`` (one TOML file each), keyed by id."""
    return load_folder(directory, load_token_latency_profile)
