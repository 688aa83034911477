"""Hypothesis profiles: ``HYPOTHESIS_PROFILE=ci`` (set by .ci/run) makes every property
and fuzz test draw the same examples on every run, so a merge is judged on a fixed
sample; the default profile draws new examples each run and keeps failures in the
local example database, which is how the fuzz tests go on finding new inputs."""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "explore"))
