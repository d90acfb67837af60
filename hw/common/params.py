"""Construction-time parameter checks shared by every component (CONVENTIONS §2)."""

__all__ = ["check_int", "reject"]


def reject(component, message):
    """Raise ValueError(message) from a constructor without Amaranth's UnusedElaboratable warning.

    The object already exists when ``__init__`` runs; a rejected component is not "unused".
    """
    component._MustUse__silence = True
    raise ValueError(f"{type(component).__name__}: {message}")


def check_int(component, name, value, lo, hi):
    """``value`` if it is an int (not a bool) in lo..hi, else a ValueError naming ``name``."""
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        reject(component, f"{name} must be an integer in {lo}..{hi}, got {value!r}")
    return value
