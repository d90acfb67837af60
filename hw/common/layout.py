"""Amaranth view of the pure-Python field records in ``golden.common.fields``."""

from amaranth import signed, unsigned
from amaranth.lib import data

__all__ = ["struct_layout"]


def struct_layout(fields):
    """``StructLayout`` with the same fields, order and bit offsets as ``fields`` (a ``Fields``).

    Signed fields become ``signed(w)`` and array fields ``ArrayLayout(shape, count)``.
    """
    members = {}
    for name in fields.names:
        width, is_signed, count = fields.shapes[name]
        shape = signed(width) if is_signed else unsigned(width)
        members[name] = shape if count is None else data.ArrayLayout(shape, count)
    return data.StructLayout(members)
