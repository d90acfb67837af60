"""Amaranth view of the pure-Python field records in ``golden.common.fields``."""

from amaranth.lib import data

__all__ = ["struct_layout"]


def struct_layout(fields):
    """``StructLayout`` with the same fields, order and bit offsets as ``fields`` (a ``Fields``)."""
    return data.StructLayout({name: width for name, width in fields.fields})
