"""Bit-field records: the one definition of a payload layout for hardware, golden model and tb.

Hardware turns a :class:`Fields` into an Amaranth ``StructLayout`` (``hw.common.layout``);
golden models and testbenches pack and unpack the same integers with it.
"""

__all__ = ["Fields"]

_KINDS = ("unsigned", "signed")


class Fields:
    """Ordered named fields, the first at bit 0.

    Each field is ``(name, width)`` (unsigned), ``(name, width, kind)`` with kind ``"signed"`` or
    ``"unsigned"``, or ``(name, width, kind, count)`` for an array of ``count`` elements (element
    0 in the lowest bits, as Amaranth's ``ArrayLayout``). Signed values pack as two's complement
    and unpack as negative integers; arrays pack from and unpack to lists.

    >>> f = Fields(("tag", 4), ("addr", 12))
    >>> f.pack(tag=3, addr=0x10)
    259
    >>> f.unpack(259)
    {'tag': 3, 'addr': 16}
    >>> g = Fields(("a", 4, "signed", 2))
    >>> g.unpack(g.pack(a=[-1, 3]))
    {'a': [-1, 3]}
    """

    def __init__(self, *fields):
        self.fields = []          # (name, total width) in order, as before arrays existed
        self.shapes = {}          # name -> (element width, signed, count or None)
        self.offsets = {}
        offset = 0
        for spec in fields:
            spec = tuple(spec)
            if not 2 <= len(spec) <= 4:
                raise ValueError(f"field {spec!r}: expected (name, width[, kind[, count]])")
            name, width, kind, count = spec + ("unsigned", None)[len(spec) - 2:]
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"field name {name!r} is not an identifier")
            if name in self.offsets:
                raise ValueError(f"field {name!r} appears twice")
            if not isinstance(width, int) or width < 1:
                raise ValueError(f"field {name!r}: width must be a positive integer, got {width!r}")
            if kind not in _KINDS:
                raise ValueError(f"field {name!r}: kind must be 'signed' or 'unsigned', got {kind!r}")
            if count is not None and (not isinstance(count, int) or count < 1):
                raise ValueError(f"field {name!r}: count must be a positive integer, got {count!r}")
            total = width * (count or 1)
            self.fields.append((name, total))
            self.shapes[name] = (width, kind == "signed", count)
            self.offsets[name] = offset
            offset += total
        self.width = offset
        self.widths = dict(self.fields)

    @property
    def names(self):
        return [name for name, _ in self.fields]

    @staticmethod
    def _encode(name, value, width, signed):
        value = int(value)
        lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
        if not lo <= value <= hi:
            raise ValueError(f"field {name!r} = {value} does not fit in {width} "
                             f"{'signed' if signed else 'unsigned'} bits")
        return value & ((1 << width) - 1)

    @staticmethod
    def _decode(raw, width, signed):
        if signed and raw >> (width - 1):
            return raw - (1 << width)
        return raw

    def pack(self, **values):
        """The integer holding ``values``; missing fields are 0, out-of-range values raise."""
        word = 0
        for name, value in values.items():
            if name not in self.offsets:
                raise ValueError(f"unknown field {name!r}; fields: {', '.join(self.names)}")
            width, signed, count = self.shapes[name]
            if count is None:
                word |= self._encode(name, value, width, signed) << self.offsets[name]
                continue
            value = list(value)
            if len(value) != count:
                raise ValueError(f"field {name!r} needs {count} elements, got {len(value)}")
            for k, element in enumerate(value):
                word |= self._encode(f"{name}[{k}]", element, width, signed) << (
                    self.offsets[name] + k * width)
        return word

    def unpack(self, word):
        """Dict of field values from an integer (lists for arrays, negative for signed)."""
        word = int(word)
        out = {}
        for name, _ in self.fields:
            width, signed, count = self.shapes[name]
            base = word >> self.offsets[name]
            mask = (1 << width) - 1
            if count is None:
                out[name] = self._decode(base & mask, width, signed)
            else:
                out[name] = [self._decode((base >> (k * width)) & mask, width, signed)
                             for k in range(count)]
        return out

    def __repr__(self):
        def one(name):
            width, signed, count = self.shapes[name]
            if not signed and count is None:
                return f"({name!r}, {width})"
            kind = "signed" if signed else "unsigned"
            return f"({name!r}, {width}, {kind!r}" + (f", {count})" if count else ")")
        return "Fields(" + ", ".join(one(n) for n in self.names) + ")"
