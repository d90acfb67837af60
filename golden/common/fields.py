"""Bit-field records: the one definition of a payload layout for hardware, golden model and tb.

Hardware turns a :class:`Fields` into an Amaranth ``StructLayout`` (``hw.common.layout``);
golden models and testbenches pack and unpack the same integers with it.
"""

__all__ = ["Fields"]


class Fields:
    """Ordered named unsigned fields, the first at bit 0.

    >>> f = Fields(("tag", 4), ("addr", 12))
    >>> f.pack(tag=3, addr=0x10)
    259
    >>> f.unpack(259)
    {'tag': 3, 'addr': 16}
    """

    def __init__(self, *fields):
        self.fields = []
        self.offsets = {}
        offset = 0
        for name, width in fields:
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"field name {name!r} is not an identifier")
            if name in self.offsets:
                raise ValueError(f"field {name!r} appears twice")
            if not isinstance(width, int) or width < 1:
                raise ValueError(f"field {name!r}: width must be a positive integer, got {width!r}")
            self.fields.append((name, width))
            self.offsets[name] = offset
            offset += width
        self.width = offset
        self.widths = dict(self.fields)

    @property
    def names(self):
        return [name for name, _ in self.fields]

    def pack(self, **values):
        """The integer holding ``values``; missing fields are 0, out-of-range values raise."""
        word = 0
        for name, value in values.items():
            if name not in self.offsets:
                raise ValueError(f"unknown field {name!r}; fields: {', '.join(self.names)}")
            width = self.widths[name]
            value = int(value)
            if not 0 <= value < (1 << width):
                raise ValueError(f"field {name!r} = {value} does not fit in {width} bits")
            word |= value << self.offsets[name]
        return word

    def unpack(self, word):
        """Dict of field values from an integer."""
        word = int(word)
        return {name: (word >> self.offsets[name]) & ((1 << width) - 1)
                for name, width in self.fields}

    def __repr__(self):
        return "Fields(" + ", ".join(f"({n!r}, {w})" for n, w in self.fields) + ")"
