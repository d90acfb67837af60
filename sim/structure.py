"""Logic depth of an elaborated combinational component, read from its Amaranth statements.

Structural checks ("log-depth", "no priority chain") use it: tests count operators on the
longest input-to-output path instead of trusting a docstring. It reads Amaranth's private AST
classes (``amaranth.hdl._ast``; the version is pinned ``~= 0.5.0``).
"""

from amaranth.hdl import Const, Fragment, Signal
from amaranth.hdl._ast import Assign, Concat, Operator, Slice, SwitchValue

__all__ = ["operator_depths"]


def _name(v):
    return "mux" if isinstance(v, SwitchValue) else v.operator


def _operands(v):
    return [v.test] + [value for _, value in v.cases] if isinstance(v, SwitchValue) else v.operands


def operator_depths(component, counted=("+",)):
    """Structure of a flat combinational component, from its elaborated statements.

    Returns ``(depth, count)``: ``depth[(id(signal), bit)]`` is the largest number of
    ``counted`` operators (Amaranth operator names "+", "&", "~", ..., and "mux" for ``Mux``)
    on any path from an input to that bit, and ``count`` is how many ``counted`` operators the
    statements hold. Bits are followed one by one, statements may come in any order, and each
    bit is expected to be driven by one statement. Signals are keyed by id (Amaranth signals
    are not hashable).
    """
    fragment = Fragment.get(component, None)
    assert not fragment.subfragments, "expected a flat component"
    statements = list(fragment.statements.get("comb", []))
    assert all(isinstance(s, Assign) for s in statements)
    driven = {}                                   # id(signal) -> driven bit indices
    for s in statements:
        sig, lo = (s.lhs, 0) if isinstance(s.lhs, Signal) else (s.lhs.value, s.lhs.start)
        driven.setdefault(id(sig), set()).update(range(lo, lo + len(s.lhs)))
    depth = {}                                    # (id(signal), bit) -> longest-path count

    def signal_bits(sig, start, stop):
        bits = [depth.get((id(sig), b), None if b in driven.get(id(sig), ()) else 0)
                for b in range(start, stop)]
        return None if None in bits else bits

    def ev(v):                                    # list of per-bit depths, or None if unknown yet
        if isinstance(v, Const):
            return [0] * len(v)
        if isinstance(v, Signal):
            return signal_bits(v, 0, len(v))
        if isinstance(v, Slice) and isinstance(v.value, Signal):
            return signal_bits(v.value, v.start, v.stop)
        if isinstance(v, Slice):
            inner = ev(v.value)
            return None if inner is None else inner[v.start:v.stop]
        if isinstance(v, Concat):
            parts = [ev(p) for p in v.parts]
            return None if None in parts else [d for p in parts for d in p]
        if isinstance(v, (Operator, SwitchValue)):
            parts = [ev(p) for p in _operands(v)]
            if None in parts:
                return None
            worst = max((d for p in parts for d in p), default=0) + (_name(v) in counted)
            return [worst] * len(v)
        raise AssertionError(f"unexpected value {v!r}")

    pending = statements
    while pending:
        waiting = []
        for s in pending:
            bits = ev(s.rhs)
            if bits is None:
                waiting.append(s)
                continue
            sig, lo = (s.lhs, 0) if isinstance(s.lhs, Signal) else (s.lhs.value, s.lhs.start)
            bits = (bits + [0] * len(s.lhs))[:len(s.lhs)]
            for k, d in enumerate(bits):
                depth[(id(sig), lo + k)] = d
        assert len(waiting) < len(pending), "combinational loop in the statements"
        pending = waiting

    def operators(v):
        if isinstance(v, (Operator, SwitchValue)):
            return (_name(v) in counted) + sum(operators(p) for p in _operands(v))
        if isinstance(v, Slice):
            return operators(v.value)
        if isinstance(v, Concat):
            return sum(operators(p) for p in v.parts)
        return 0

    return depth, sum(operators(s.rhs) for s in statements)
