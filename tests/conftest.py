"""Shared pytest fixtures: every randomized test takes its seed from here (printed, reproducible)."""

import pytest

from sim.seed import pick_seed


@pytest.fixture
def seed(request):
    """The test's random seed: ``GPUBLOCKS_SEED`` when set, else fresh; printed and recorded."""
    value = pick_seed(request.node.nodeid)
    request.node.user_properties.append(("seed", value))
    return value
