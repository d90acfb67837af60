"""Random seeds: printed, and reproducible through the ``GPUBLOCKS_SEED`` environment variable."""

import os
import random

from sim.errors import UsageError

__all__ = ["SEED_ENV", "pick_seed"]

SEED_ENV = "GPUBLOCKS_SEED"


def pick_seed(label=""):
    """The seed for one test or run: ``GPUBLOCKS_SEED`` when set, else a fresh random one.

    The seed is printed so a failing run can be repeated with ``GPUBLOCKS_SEED=<seed>``.
    """
    text = os.environ.get(SEED_ENV)
    if text:
        try:
            seed = int(text, 0)
        except ValueError:
            raise UsageError(f"{SEED_ENV}={text!r} is not an integer")
    else:
        seed = random.SystemRandom().randrange(1 << 31)
    print(f"[seed] {label or 'run'}: {SEED_ENV}={seed}", flush=True)
    return seed
