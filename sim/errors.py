"""The one error type the CLI turns into a single line and exit status 2."""

__all__ = ["UsageError"]


class UsageError(Exception):
    """Bad arguments, parameters or stimulus: the message names the offending item."""
