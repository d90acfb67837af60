"""What a testbench receives from the flow: seed, parameters, stimulus file, result file.

``sim.cocotb_run`` passes them as environment variables; testbenches read them only here.
"""

import json
import os
import random

import numpy as np

__all__ = ["seed", "params", "rng", "np_rng", "stimulus", "write_result"]


def seed():
    """The run's seed (``GPUBLOCKS_SEED``; cocotb's own seed when run outside the flow)."""
    text = os.environ.get("GPUBLOCKS_SEED")
    if text is not None:
        return int(text, 0)
    import cocotb
    return cocotb.RANDOM_SEED


def params():
    """The top component's parameters as built (``GPUBLOCKS_PARAMS``)."""
    return json.loads(os.environ.get("GPUBLOCKS_PARAMS", "{}"))


def rng(stream=0):
    """A ``random.Random`` for one independent stream of the run's randomness."""
    return random.Random(seed() * 1_000_003 + stream)


def np_rng(stream=0):
    """A numpy ``Generator`` for one independent stream of the run's randomness."""
    return np.random.default_rng([seed(), stream])


def stimulus():
    """The normalized stimulus of ``gpublocks run`` (``GPUBLOCKS_STIM``), or None."""
    path = os.environ.get("GPUBLOCKS_STIM")
    if not path:
        return None
    with open(path) as handle:
        return json.load(handle)


def write_result(result):
    """Hand the RTL's observed outputs back to the flow (``GPUBLOCKS_RESULT``)."""
    path = os.environ.get("GPUBLOCKS_RESULT")
    if path:
        with open(path, "w") as handle:
            json.dump(result, handle)
