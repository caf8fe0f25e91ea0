# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Every rank runs the same tests in the same order (they are collective). Started by tca-run,
# mpirun or torchrun: `tca-run -n 2 python -m pytest python/tests`. tca starts once per
# process; the tests share it.
import os

import pytest

import tca


def pytest_configure(config):
    tca.init(timeout_ms=int(os.environ.get("TCA_TIMEOUT_MS", "30000")))
    if tca.rank() != 0:  # one rank's report is enough; a failure on another still fails its exit
        config.option.verbose = -1


def pytest_unconfigure(config):
    try:
        tca.finalize()
    except tca.NotInitializedError:
        pass


@pytest.fixture
def ranks():
    return tca.rank(), tca.size()
