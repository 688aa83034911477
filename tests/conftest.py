"""Hypothesis profiles: ``HYPOTHESIS_PROFILE=ci`` (set by .ci/run) makes every property
and fuzz test draw the same examples on every run, so a merge is judged on a fixed
sample; the default profile draws new examples each run and keeps failures in the
local example database, which is how the fuzz tests go on finding new inputs."""
import os

from hypothesis import settings

# No deadline: speed is measured in benchmarks, not in timed tests (a busy machine
# would otherwise fail a correct example).
settings.register_profile("ci", derandomize=True, database=None, print_blob=True,
                          deadline=None)
settings.register_profile("explore", print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "explore"))
