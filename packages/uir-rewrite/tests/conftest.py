"""Hypothesis profiles: `default` keeps the package's tests near a minute on 2 cores; `thorough`
(HYPOTHESIS_PROFILE=thorough) runs ten times the cases."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "thorough", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=10_000
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
