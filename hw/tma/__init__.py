"""TMA unit (spec tma.md): RTL modules, one file per concept, the top level
:class:`~hw.tma.top.Tma` (``hw.tma.Tma``) and the memory-side reduction unit
:class:`~hw.tma.redunit.TmaRedUnit` (``hw.tma.TmaRedUnit``), TMA-I13."""

from hw.tma.redunit import TmaRedUnit
from hw.tma.top import Tma

__all__ = ["Tma", "TmaRedUnit"]
