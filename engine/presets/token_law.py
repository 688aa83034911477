"""Token-law presets (``presets/token_laws/``): a histogram of one request trace's token
counts (a summary, not the per-request data), rebuilt into the law of a request's count::

    id = "azure_2023_code_output"
    name = "..."
    source = "..."
    kind = "output"                  # "output" (generated tokens) or "prompt"
    [bins]
    first_tokens = [6, 7, ...]       # smallest count of each bin
    last_tokens = [6, 7, ...]        # largest count of each bin
    tokens = [6, 7, ...]             # the count that stands for the bin (first..last)
    requests = [729, 626, ...]       # requests in the bin
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.domains import TOKEN_LAW_KIND
from ..core.token_laws import MAX_TOKEN_GRID, EmpiricalTokens
from .schema import (IDENTITY, PRESET_DIR, check_keys, column, load_folder, read_toml, schema,
                     text)

TOKEN_LAW_DIR = PRESET_DIR / "token_laws"
TOKEN_LAW_KINDS = TOKEN_LAW_KIND.values


@dataclass(frozen=True)
class TokenLawPreset:
    """Token counts of a request trace as a histogram: bin ``i`` holds ``requests[i]``
    requests with counts in ``first_tokens[i]..last_tokens[i]``, standing for
    ``tokens[i]`` (whole token counts, increasing bins)."""

    id: str
    name: str
    source: str
    kind: str                      # "output" (generated tokens) or "prompt"
    first_tokens: np.ndarray
    last_tokens: np.ndarray
    tokens: np.ndarray
    requests: np.ndarray

    @property
    def n_requests(self) -> int:
        """Requests the histogram summarises."""
        return int(self.requests.sum())

    def law(self) -> EmpiricalTokens:
        """The law of a request's token count: ``tokens[i]`` with probability
        ``requests[i] / n_requests`` (``engine.core.token_laws.EmpiricalTokens``)."""
        n = self.n_requests
        return EmpiricalTokens(self.tokens.copy(), self.requests / n, n)


# the file's schema, from the dataclass: its text fields at the top, its columns in [bins]
_BINS = tuple(k for k, (kind, _) in schema(TokenLawPreset).items() if kind is np.ndarray)
_TOP = tuple(k for k in schema(TokenLawPreset) if k not in _BINS) + ("bins",)


def load_token_law_preset(path) -> TokenLawPreset:
    """Load and validate one token-law TOML file (``ValueError`` naming file and field):
    the four ``[bins]`` columns whole, positive and of one length (at least 2 bins), each
    ``tokens`` within its bin, the bins increasing without overlap, counts at most
    ``MAX_TOKEN_GRID``."""
    data, where = read_toml(path)
    check_keys(data, _TOP, _TOP, where)
    for key in IDENTITY + ("kind",):
        text(data, key, where)
    TOKEN_LAW_KIND.check(data["kind"], f"{where}: field 'kind'")
    bins = data["bins"]
    if not isinstance(bins, dict):
        raise ValueError(f"{where}: field 'bins' must be a table")
    check_keys(bins, _BINS, _BINS, f"{where} [bins]")
    cols = {k: column(bins[k], f"{where} [bins].{k}") for k in _BINS}
    n = cols["tokens"].size
    for key, arr in cols.items():
        if arr.size != n:
            raise ValueError(f"{where} [bins].{key}: {arr.size} rows, tokens has {n}")
        if np.any(arr != np.round(arr)):
            raise ValueError(f"{where} [bins].{key}: must be whole numbers")
    first, last, tokens = cols["first_tokens"], cols["last_tokens"], cols["tokens"]
    if np.any(last > MAX_TOKEN_GRID):
        raise ValueError(f"{where} [bins].last_tokens: at most {MAX_TOKEN_GRID} tokens")
    if np.any(last < first):
        raise ValueError(f"{where} [bins].last_tokens: must be at least first_tokens")
    if np.any(first[1:] <= last[:-1]):
        raise ValueError(f"{where} [bins].first_tokens: the bins must be increasing, "
                         f"each starting after the previous one's last_tokens")
    outside = (tokens < first) | (tokens > last)
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        raise ValueError(f"{where} [bins].tokens: row {i + 1} ({tokens[i]:g}) lies outside "
                         f"its bin {first[i]:g}..{last[i]:g}")
    return TokenLawPreset(id=data["id"], name=data["name"], source=data["source"],
                          kind=data["kind"], first_tokens=first, last_tokens=last,
                          tokens=tokens, requests=cols["requests"])


def token_law_presets(directory=TOKEN_LAW_DIR) -> dict[str, TokenLawPreset]:
    """All token-law presets in ``directory`` (one TOML file each), keyed by id."""
    return load_folder(directory, load_token_law_preset)
