import numpy as np
import pytest

import tenpy_ad as tp

import deep_runs
from linalg_cases import DEFAULT_CONFIG


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def restore_linalg_config():
    """Runs a test with the documented defaults of ``tp.linalg.config`` and leaves the
    config as it found it, whatever the test changes (the linalg test files use it for
    every test)."""
    config = tp.linalg.config
    saved = (config.broadening, config.gauge_check, config.gauge_rtol,
             config.degeneracy_check)
    (config.broadening, config.gauge_check, config.gauge_rtol,
     config.degeneracy_check) = DEFAULT_CONFIG
    try:
        yield config
    finally:
        (config.broadening, config.gauge_check, config.gauge_rtol,
         config.degeneracy_check) = saved


def _is_deep(item) -> bool:
    return item.path.name == deep_runs.TEST_FILE


def pytest_collection_modifyitems(session, config, items):
    """The depth tests go last, so that their runs overlap the rest of the suite."""
    items[:] = [item for item in items if not _is_deep(item)] + [
        item for item in items if _is_deep(item)]


@pytest.fixture(scope="session", autouse=True)
def deep_graph_runs(request):
    """Starts the depth runs with the session's first test when any depth test is
    selected; the depth tests collect their results."""
    if not any(_is_deep(item) for item in request.session.items):
        yield None
        return
    runs = deep_runs.start_all()
    yield runs
    for run in runs.values():
        run.kill()
