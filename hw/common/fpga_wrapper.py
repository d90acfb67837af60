"""FPGA build harness: any component between LFSR inputs and XOR-reduced pins (spec dfp DFP-P9).

A synthesis-only build must keep every port of the design alive without giving it hundreds of
pins, and must not let pin timing limit the design's clock. :class:`LfsrXorHarness` drives every
input of the component from flip-flops of a free-running LFSR and folds every output bit, after
an output register, through a pipelined XOR tree into 8 bits; :class:`Ulx3sTop` puts that on the
ULX3S: 25 MHz oscillator -> ECP5 PLL -> 100 MHz ``sync`` domain, the 8 bits on the 8 LEDs.
"""

from amaranth import Cat, ClockDomain, Const, Elaboratable, Instance, Module, Signal, Value
from amaranth.lib import io, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["GROUPINGS", "LfsrXorHarness", "Ulx3sTop", "port_bits"]

PINS = 8
XOR_FANIN = 4                 # one LUT4 per XOR node
# which output bits pin p XORs: "interleaved" bits p, p + 8, p + 16, ...; "contiguous" the p-th
# eighth of the bits in signature order, so a port's bits stay together and each tree's first
# levels beside it
GROUPINGS = ("interleaved", "contiguous")


def port_bits(component):
    """(input values, output values) of ``component``'s flattened signature, in signature order.

    Flattening resolves stream directions: ``ready`` of an ``Out`` stream is an input.
    """
    inputs, outputs = [], []
    for _path, member, value in component.signature.flatten(component):
        (inputs if member.flow == In else outputs).append(Value.cast(value))
    return inputs, outputs


class LfsrXorHarness(wiring.Component):
    """Drives ``dut`` from an LFSR and reduces its outputs to :data:`PINS` bits, in domain ``sync``.

    Every input bit of ``dut`` is one flip-flop of a Fibonacci LFSR as wide as all inputs together
    (at least 16 bits); its feedback includes the last stage, so the state never reaches zero and
    every bit keeps toggling. Every output bit is registered, goes to one pin (``grouping``), and
    each pin is the XOR of its bits through a tree of :data:`XOR_FANIN`-input XORs with a
    register after every level. Nothing of ``dut`` is
    constant or unobserved, so synthesis keeps all of it, and every harness path is one LUT
    between flip-flops, so the critical path is the design's.
    The LFSR and the tree are reset-less (bitstream initial values); ``dut`` gets the domain reset.

    Parameters
    ----------
    dut : wiring.Component
        The design under build; added as submodule ``dut``.
    grouping : str
        One of :data:`GROUPINGS`: bit i to pin i mod 8 (default), or contiguous eighths.

    Members
    -------
    pins : Out(8)
        The XOR-reduced outputs, registered.
    """

    def __init__(self, dut, grouping="interleaved"):
        if grouping not in GROUPINGS:
            raise ValueError(f"grouping {grouping!r} is not one of {', '.join(GROUPINGS)}")
        self.dut, self.grouping = dut, grouping
        self.in_bits, self.out_bits = (sum(len(v) for v in vs) for vs in port_bits(dut))
        super().__init__({"pins": Out(PINS)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.dut
        inputs, outputs = port_bits(self.dut)

        width = max(16, self.in_bits)
        lfsr = Signal(width, init=0x5A5A5A5A5A5A5A5A % (1 << width) | 1, reset_less=True)
        taps = sorted({width - 1, width - 2, width // 2, width // 3})
        feedback = Cat(lfsr[t] for t in taps).xor()
        m.d.sync += lfsr.eq(Cat(feedback, lfsr[:-1]))
        offset = 0
        for value in inputs:
            m.d.comb += value.eq(lfsr[offset:offset + len(value)])
            offset += len(value)

        captured = Signal(max(1, self.out_bits), reset_less=True)
        m.d.sync += captured.eq(Cat(*outputs))
        for pin in range(PINS):
            if self.grouping == "contiguous":
                lo, hi = (k * self.out_bits // PINS for k in (pin, pin + 1))
                level = [captured[i] for i in range(lo, hi)]
            else:
                level = [captured[i] for i in range(pin, self.out_bits, PINS)]
            while len(level) > 1:
                nxt = []
                for start in range(0, len(level), XOR_FANIN):
                    node = Signal(reset_less=True, name=f"xor_p{pin}")
                    m.d.sync += node.eq(Cat(*level[start:start + XOR_FANIN]).xor())
                    nxt.append(node)
                level = nxt
            m.d.comb += self.pins[pin].eq(level[0] if level else Const(0))
        return m


class Ulx3sTop(Elaboratable):
    """ULX3S board top: ``clk25`` -> EHXPLLL -> 100 MHz ``sync``, the harness pins on ``led`` 0..7.

    The PLL multiplies the 25 MHz oscillator to 100 MHz (dividers from ``ecppll -i 25 -o 100``:
    CLKI_DIV 1, CLKFB_DIV 4, CLKOP_DIV 6, VCO 600 MHz), so the design runs from a real 100 MHz
    clock. nextpnr derives the 100 MHz constraint of the PLL output from the board's 25 MHz
    constraint on ``clk25`` and the dividers ("Derived frequency constraint of 100.0 MHz for net
    clk"); an explicit constraint on the domain clock is not used because Amaranth names it after
    a submodule's port in the LPF, a net nextpnr does not find. Reset is the PLL's LOCK,
    inverted and synchronised through two flip-flops.

    Parameters
    ----------
    harness : LfsrXorHarness
        Added as submodule ``harness``.
    """

    def __init__(self, harness):
        self.harness = harness

    def elaborate(self, platform):
        m = Module()
        m.submodules.clk25 = clk25 = io.Buffer("i", platform.request("clk25", dir="-"))
        m.domains.sync = sync = ClockDomain("sync")
        lock = Signal(name="pll_lock")
        m.submodules.pll = Instance(
            "EHXPLLL",
            a_FREQUENCY_PIN_CLKI="25", a_FREQUENCY_PIN_CLKOP="100",
            a_ICP_CURRENT="12", a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1",
            a_MFG_GMCREF_SEL="2",
            p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED", p_STDBY_ENABLE="DISABLED",
            p_DPHASE_SOURCE="DISABLED", p_OUTDIVIDER_MUXA="DIVA", p_OUTDIVIDER_MUXB="DIVB",
            p_OUTDIVIDER_MUXC="DIVC", p_OUTDIVIDER_MUXD="DIVD",
            p_CLKI_DIV=1, p_CLKOP_ENABLE="ENABLED", p_CLKOP_DIV=6, p_CLKOP_CPHASE=2,
            p_CLKOP_FPHASE=0, p_FEEDBK_PATH="CLKOP", p_CLKFB_DIV=4,
            i_RST=0, i_STDBY=0, i_CLKI=clk25.i, o_CLKOP=sync.clk, i_CLKFB=sync.clk,
            i_PHASESEL0=0, i_PHASESEL1=0, i_PHASEDIR=1, i_PHASESTEP=1, i_PHASELOADREG=1,
            i_PLLWAKESYNC=0, i_ENCLKOP=0, o_LOCK=lock)

        # two-flip-flop synchroniser of ~LOCK; its second stage is the domain reset
        unlocked = Signal(init=1, reset_less=True)
        m.d.sync += [unlocked.eq(~lock), sync.rst.eq(unlocked)]

        m.submodules.harness = self.harness
        for i in range(PINS):
            m.submodules[f"led{i}"] = led = io.Buffer("o", platform.request("led", i, dir="-"))
            m.d.comb += led.o.eq(self.harness.pins[i])
        return m
