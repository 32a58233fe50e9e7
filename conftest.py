"""Hypothesis settings for every test of the workspace (pytest loads this file first).

No test may depend on the machine's speed (issue 8): the profile has no deadline, and no test
sets one, so a slow first run (imports, warm caches) or a loaded machine cannot fail a test.
Tests size themselves for a 2-core machine; UIR_HYPOTHESIS_SCALE=10 runs ten times the cases of
the differential tests.
"""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "uir", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile("uir")
