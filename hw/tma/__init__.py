"""TMA unit (spec tma.md): RTL modules, one file per concept, and the top level
:class:`~hw.tma.top.Tma` (``hw.tma.Tma``, TMA-I13)."""

from hw.tma.top import Tma

__all__ = ["Tma"]
