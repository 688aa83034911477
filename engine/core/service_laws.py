"""Service-time laws (seconds): a number for a deterministic time, or any scipy.stats
frozen distribution (anything with ``cdf``/``rvs``/``mean``), built from a kind and a
mean or from measured times, and read back as a CDF or a sampler.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import stats

from .domains import NET_DELAY, SERVICE_LAW

SERVICE_LAWS = SERVICE_LAW.values


def service_law(kind, mean_s, sigma=1.0):
    """Service-time law with mean ``mean_s`` (s): a scipy.stats frozen
    exponential or lognormal (log-sd ``sigma``, scale e^(ln mean − σ²/2)), or
    the number ``mean_s`` for a deterministic time."""
    SERVICE_LAW.check(kind)
    mean = float(NET_DELAY.check(mean_s, "mean_s"))
    if mean <= 0:
        raise ValueError(f"mean_s must be a time > 0, got {mean:g}")
    if kind == "exponential":
        return stats.expon(scale=mean)
    if kind == "lognormal":
        s = float(sigma)
        if not 0.0 < s <= 5.0:
            raise ValueError(f"sigma must be a number in (0, 5], got {sigma!r}")
        return stats.lognorm(s=s, scale=mean * np.exp(-0.5 * s * s))
    return mean                                   # deterministic


def empirical_service(samples_s, bins=200):
    """Service-time law (s) from measured times: a scipy.stats ``rv_histogram``
    with ``cdf``/``ppf``/``rvs``/``mean``, usable wherever a service law is asked."""
    x = np.asarray(samples_s, dtype=float)
    if x.ndim != 1 or x.size < 2 or not np.all(np.isfinite(x)) or np.any(x < 0):
        raise ValueError("samples_s must be a 1-d array of at least 2 finite times >= 0")
    return stats.rv_histogram(np.histogram(x, bins=int(bins)), density=False)


def service_cdf(service) -> Callable:
    """CDF x ↦ P(S ≤ x) (x in s) of a service law given as a number or a distribution;
    ``ValueError`` naming ``service`` for anything else."""
    if hasattr(service, "cdf"):
        return service.cdf
    try:
        s = float(NET_DELAY.check(service, "service"))
    except ValueError:
        raise ValueError("service must be a time in seconds (deterministic) or a "
                         "distribution with a cdf (a scipy.stats frozen distribution)") from None
    return lambda x: (np.asarray(x) >= s).astype(float)


def service_sampler(service) -> tuple[Callable, float]:
    """(sampler(rng, size) of times in s, mean in s) of a service law given as a
    number (deterministic) or a distribution with ``rvs`` and ``mean``."""
    if np.ndim(service) == 0 and not hasattr(service, "rvs"):
        value = float(NET_DELAY.check(service, "service"))
        return (lambda rng, size: np.full(size, value)), value
    if not (hasattr(service, "rvs") and hasattr(service, "mean")):
        raise ValueError("service must be a time in seconds or a distribution with "
                         "rvs() and mean() (a scipy.stats frozen distribution)")
    return (lambda rng, size: np.asarray(service.rvs(size=size, random_state=rng),
                                         dtype=float)), float(service.mean())
