"""Hypothesis settings for this package: no deadline (a first run imports and warms caches).

The differential tests size themselves for about a minute on 2 cores; set UIR_HYPOTHESIS_SCALE=10
to run ten times as many cases.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "uir", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("uir")
