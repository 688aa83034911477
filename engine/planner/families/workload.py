"""What the serving families' requests ask for: prompt and reply token counts as two
token-law presets (independent) or a trace's pairs taken together
(``ServingWorkload``, ``workload_from_laws``, ``workload_from_pairs``, ``workload_of``)."""
from __future__ import annotations

from dataclasses import dataclass, field
import hashlib

import numpy as np

from ...core.domains import Choice
from ...presets import token_law_presets


@dataclass(frozen=True, eq=False)
class ServingWorkload:
    """What the requests ask for: prompt and reply token counts as laws (independent)
    or a trace's pairs, request by request (``prompts``, ``replies``); ``label`` says
    which; compared by ``key``."""

    key: str
    label: str
    prompts: object = field(repr=False)
    replies: object = field(repr=False)

    def __eq__(self, other):
        return isinstance(other, ServingWorkload) and other.key == self.key

    def __hash__(self):
        return hash(self.key)

    @property
    def paired(self) -> bool:
        return isinstance(self.prompts, np.ndarray)

    def longest(self) -> int:
        """The most tokens one request holds (prompt + reply), at the laws' tops."""
        if self.paired:
            return int(np.max(self.prompts + self.replies))
        from ...core.token_laws import grid_top
        return int(grid_top(self.prompts) + grid_top(self.replies))

    def mean_prompt(self) -> float:
        return float(np.mean(self.prompts)) if self.paired else float(self.prompts.mean())

    def mean_reply(self) -> float:
        return float(np.mean(self.replies)) if self.paired else float(self.replies.mean())

    def longest_prompt(self) -> int:
        if self.paired:
            return int(np.max(self.prompts))
        from ...core.token_laws import grid_top
        return int(grid_top(self.prompts))

    def draw(self, n: int, seed) -> tuple:
        """(input_tokens, output_tokens) for a simulation of ``n`` requests: the laws,
        or pairs drawn from the trace with replacement."""
        if not self.paired:
            return self.prompts, self.replies
        idx = np.random.default_rng(seed).integers(0, self.prompts.size, n)
        return self.prompts[idx], self.replies[idx]


def workload_from_laws(prompt_law: str, token_law: str) -> ServingWorkload:
    """The workload of two token-law presets (prompts, replies), taken as independent."""
    laws = token_law_presets()
    for key, value in (("prompt_law", prompt_law), ("token_law", token_law)):
        Choice(key, tuple(sorted(laws))).check(value)
    return ServingWorkload(f"laws:{prompt_law}:{token_law}",
                           f"prompts {laws[prompt_law].name}; replies {laws[token_law].name}",
                           laws[prompt_law].law(), laws[token_law].law())


def workload_from_pairs(prompts, replies, name: str) -> ServingWorkload:
    """The workload of a trace's (prompt, reply) token pairs, taken together."""
    p = np.asarray(prompts, dtype=np.int64)
    r = np.asarray(replies, dtype=np.int64)
    if p.shape != r.shape or p.ndim != 1 or p.size < 2:
        raise ValueError("a token trace needs at least 2 requests, each with a prompt and a "
                         "reply token count")
    if np.any(p < 1) or np.any(r < 1):
        raise ValueError("a token trace's prompts and replies must hold at least 1 token")
    for a in (p, r):
        a.setflags(write=False)
    digest = hashlib.sha256(p.tobytes() + r.tobytes()).hexdigest()[:24]
    return ServingWorkload(f"pairs:{digest}", f"{name}: {p.size:,} requests' prompts and "
                           f"replies taken together", p, r)


def workload_of(spec, base_dir=None) -> ServingWorkload:
    """The workload ``spec`` names: the trace file ``token_trace`` (relative to
    ``base_dir``; any format ``engine.measured.read_trace`` reads with token counts)
    or the token-law presets ``prompt_law`` and ``token_law``."""
    if not spec.token_trace:
        return workload_from_laws(spec.prompt_law, spec.token_law)
    from pathlib import Path
    from ...measured import read_trace
    path = Path(base_dir or ".") / spec.token_trace
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"token_trace: cannot read {str(path)!r} ({exc.strerror})") from None
    t = read_trace(data)
    if t.input_tokens is None or t.output_tokens is None:
        raise ValueError(f"token_trace {path.name!r} has no prompt and reply token counts")
    keep = (np.asarray(t.input_tokens) >= 1) & (np.asarray(t.output_tokens) >= 1)
    return workload_from_pairs(np.asarray(t.input_tokens)[keep],
                               np.asarray(t.output_tokens)[keep], path.name)


__all__ = ["ServingWorkload", "workload_from_laws", "workload_from_pairs", "workload_of"]
