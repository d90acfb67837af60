"""Amaranth view of the pure-Python field records in ``golden.common.fields``."""

from amaranth import signed, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.wiring import Out

__all__ = ["struct_layout", "always_ready_stream"]


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


def always_ready_stream(layout):
    """A stream signature without ``ready``: ``stream.Signature(layout, always_ready=True)``
    makes ``ready`` a constant member, which cannot be a Verilog port of the top, so streams
    that are never back-pressured (trackq TQ-I3, I4, I7, I8; memrouter ``evt``, MR-I6) carry
    only ``valid`` and ``payload``."""
    return wiring.Signature({"payload": Out(layout), "valid": Out(1)})
