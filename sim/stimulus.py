"""Reading stimulus files: JSON in, a clear one-line UsageError naming the field on any problem."""

import json
from pathlib import Path

from sim.errors import UsageError

__all__ = ["load_json", "field", "integer", "int_or_text", "checked_object"]


def load_json(path):
    """Parse a stimulus file; UsageError for a missing file or bad JSON (with line and column)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise UsageError(f"cannot read stimulus file {str(path)!r}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: the top level must be a JSON object")
    return data


def field(obj, key, where, kind=None, default=...):
    """``obj[key]`` checked for presence and type; ``where`` names the object in messages."""
    if key not in obj:
        if default is ...:
            raise UsageError(f"{where}: missing field {key!r}")
        return default
    value = obj[key]
    if kind is not None:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = "/".join(k.__name__ for k in kinds)
            raise UsageError(f"{where}.{key}: expected {names}, got {json.dumps(value)[:40]}")
    return value


def integer(value, where, lo=None, hi=None):
    """An int (not a bool) in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f"{where}: expected an integer, got {json.dumps(value)[:40]}")
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise UsageError(f"{where}: {value} is outside {lo}..{hi}")
    return value


def int_or_text(value, where, lo=None, hi=None):
    """An integer given as a JSON number or a "0x..." / decimal string, in [lo, hi]."""
    if isinstance(value, str):
        try:
            value = int(value, 0)
        except ValueError:
            raise UsageError(f"{where}: {value!r} is not an integer") from None
    return integer(value, where, lo, hi)


def checked_object(obj, where, keys):
    """``obj`` checked to be a JSON object whose fields are all in ``keys``."""
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected an object")
    unknown = set(obj) - set(keys)
    if unknown:
        raise UsageError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    return obj
