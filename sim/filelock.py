"""An exclusive lock file, shared by every flow that writes under build/ from several processes
(pytest-xdist workers, concurrent CLI runs)."""

import fcntl
from contextlib import contextmanager

__all__ = ["file_lock"]


@contextmanager
def file_lock(path):
    """Hold an exclusive lock on ``path`` (a lock file) while the block runs: one builder per
    build folder across pytest-xdist workers and concurrent CLI runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
