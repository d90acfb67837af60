"""Stream skid buffer (register slice): cuts every combinational path of a stream at full rate."""

from amaranth import Module, Signal
from amaranth.hdl import Shape
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["SkidBuffer"]


class SkidBuffer(wiring.Component):
    """Two-entry stream register slice with registered ``valid`` and ``ready``.

    Payloads go from ``i`` to ``o`` in order, one cycle after they are accepted (latency 1), at
    one transfer per cycle when ``o.ready`` stays high. ``o.valid`` and ``o.payload`` are the
    main register, and ``i.ready`` is the inverted occupancy flag of the skid register,
    so there is no combinational path from ``o.ready`` to ``i.ready``, nor from ``i.valid`` or
    ``i.payload`` to ``o``: a chain of skid buffers closes timing between any two stream ends.

    When the main register is empty or is being read, it takes the skid register's payload if
    there is one, else the incoming payload. When the main register is full and stalled, an
    incoming payload (accepted because ``i.ready`` was high) goes to the skid register and
    ``i.ready`` falls for the following cycles, until the skid register drains into the main
    register. ``o.payload`` changes only when the main register is empty or being read, so it
    is stable while ``o.valid & ~o.ready``. Nothing is dropped or duplicated.

    Parameters
    ----------
    shape : int or shape-castable
        Payload shape: a width in bits, 1..4096, or any Amaranth shape-castable object
        (for example a ``StructLayout`` from :func:`hw.common.layout.struct_layout`) whose width
        is 1..4096.

    Members
    -------
    i : In(stream.Signature(shape))
        Incoming stream. ``i.ready`` is ``~skid_full``, a register output.
    o : Out(stream.Signature(shape))
        Outgoing stream. ``o.valid`` and ``o.payload`` are register outputs.
    """

    MAX_WIDTH = 4096

    def __init__(self, shape=8):
        try:
            width = self._check_shape(shape)
        except ValueError:
            self._MustUse__silence = True      # a rejected component is not "unused"
            raise
        self.shape = shape
        self.width = width
        super().__init__({
            "i": In(stream.Signature(shape)),
            "o": Out(stream.Signature(shape)),
        })

    @classmethod
    def _check_shape(cls, shape):
        legal = f"an integer width in 1..{cls.MAX_WIDTH} or a shape-castable object"
        if isinstance(shape, bool):
            raise ValueError(f"SkidBuffer: shape must be {legal}, got {shape!r}")
        if isinstance(shape, int):
            if not 1 <= shape <= cls.MAX_WIDTH:
                raise ValueError(f"SkidBuffer: shape must be {legal}, got {shape!r}")
            return shape
        try:
            width = Shape.cast(shape).width
        except (TypeError, ValueError) as exc:
            raise ValueError(f"SkidBuffer: shape must be {legal}, got {shape!r} ({exc})") from None
        if not 1 <= width <= cls.MAX_WIDTH:
            raise ValueError(f"SkidBuffer: shape must be 1..{cls.MAX_WIDTH} bits wide, "
                             f"got {shape!r} of {width} bits")
        return width

    def elaborate(self, platform):
        m = Module()

        # o.valid and o.payload are the main register itself; i.ready is the inverted
        # occupancy flag of the skid register. (Driving the ports directly, rather than through
        # named copies, keeps the Verilog free of unused alias wires.)
        skid_full = Signal(name="skid_full")
        skid_data = Signal(self.width, name="skid_data")
        m.d.comb += self.i.ready.eq(~skid_full)

        with m.If(~self.o.valid | self.o.ready):
            # The main register is empty or is being read this cycle: refill it.
            with m.If(skid_full):
                m.d.sync += [
                    self.o.payload.eq(skid_data),
                    self.o.valid.eq(1),
                    skid_full.eq(0),
                ]
            with m.Else():
                # i.ready is high (skid empty): whatever is valid is accepted now.
                m.d.sync += self.o.valid.eq(self.i.valid)
                with m.If(self.i.valid):
                    m.d.sync += self.o.payload.eq(self.i.payload)
        with m.Elif(self.i.valid & ~skid_full):
            # Main register full and stalled: park the accepted payload in the skid register.
            m.d.sync += [
                skid_data.eq(self.i.payload),
                skid_full.eq(1),
            ]
        return m
