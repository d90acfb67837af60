"""Stream protocol checking (CONVENTIONS §2): valid holds until the transfer, payload stable
while ``valid & ~ready``, no X/Z on valid/ready, or on a presented payload.

:class:`StreamRules` is the pure per-cycle rule engine (testable without a simulator);
:class:`StreamProtocolChecker` feeds it from a cocotb simulation every cycle.
"""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from tb.common.stream import read_int, sim_cycle, stream_signals

__all__ = ["Violation", "StreamRules", "StreamProtocolChecker"]


class Violation(str):
    """A protocol violation message; ``cycle`` and ``kind`` say when and which rule."""

    def __new__(cls, text, cycle=None, kind=""):
        obj = super().__new__(cls, text)
        obj.cycle = cycle
        obj.kind = kind
        return obj


class StreamRules:
    """Stream rules checked on one sample per cycle, taken just before the rising edge.

    Call :meth:`step` once per cycle with the values of ``valid``, ``ready`` and ``payload``
    (None for an X/Z value) and the cycle number. A sample with ``valid & ready`` is a
    transfer. After a cycle with ``valid & ~ready`` the next sample must have ``valid`` high
    (``valid_dropped``) and the same payload (``payload_changed``). :meth:`reset` forgets the
    history (while the DUT is in reset).
    """

    def __init__(self, name="stream"):
        self.name = name
        self.violations = []
        self.transfers = 0
        self.cycles = 0
        self.stall_cycles = 0        # valid & ~ready
        self.idle_cycles = 0         # ~valid
        self._pending = None         # payload presented but not taken in the previous cycle
        self._has_pending = False

    def reset(self):
        self._pending = None
        self._has_pending = False

    def _violate(self, kind, cycle, text):
        self.violations.append(Violation(f"{self.name}: cycle {cycle}: {kind}: {text}", cycle, kind))

    def step(self, valid, ready, payload, cycle=None):
        """Check one cycle's sample; returns True when it is a transfer."""
        cycle = self.cycles if cycle is None else cycle
        self.cycles += 1
        if valid is None:
            self._violate("x_valid", cycle, "valid is X/Z")
            self.reset()
            return False
        if ready is None:
            self._violate("x_ready", cycle, "ready is X/Z")
        if valid and payload is None:
            self._violate("x_payload", cycle, "payload is X/Z while valid")
        if self._has_pending:
            if not valid:
                self._violate("valid_dropped", cycle,
                              "valid fell without a transfer (was valid & ~ready last cycle)")
            elif payload != self._pending:
                old = "X" if self._pending is None else f"{self._pending:#x}"
                new = "X" if payload is None else f"{payload:#x}"
                self._violate("payload_changed", cycle,
                              f"payload changed while valid & ~ready: {old} -> {new}")
        fire = bool(valid) and ready == 1
        if fire:
            self.transfers += 1
        elif valid:
            self.stall_cycles += 1
        else:
            self.idle_cycles += 1
        self._has_pending = bool(valid) and not fire
        self._pending = payload if self._has_pending else None
        return fire

    def check(self):
        """Raise AssertionError listing the violations, if any."""
        if self.violations:
            shown = "\n  ".join(self.violations[:20])
            more = f"\n  ... and {len(self.violations) - 20} more" if len(self.violations) > 20 else ""
            raise AssertionError(f"{self.name}: {len(self.violations)} stream protocol "
                                 f"violation(s):\n  {shown}{more}")


class StreamProtocolChecker:
    """Checks stream ``prefix`` of ``dut`` every cycle against :class:`StreamRules`.

    Samples in the ReadOnly phase after each rising edge; cycles with ``rst`` high (``reset``,
    default ``dut.rst`` when present) are not checked. :meth:`check` raises with the list of
    violations; :attr:`transfers` counts transfers.

    Parameters
    ----------
    dut, prefix, clk
        The DUT, the stream member name (``"o"`` for ``o__valid``...), the clock.
    name : str, optional
        Name in messages (default ``prefix``).
    reset : handle, optional
        Reset signal; checking pauses while it is 1.
    """

    def __init__(self, dut, prefix, clk, name=None, reset=None):
        self.prefix = prefix
        self.clk = clk
        self.valid, self.ready, self.payload = stream_signals(dut, prefix)
        self.reset = reset if reset is not None else getattr(dut, "rst", None)
        self.rules = StreamRules(name or prefix)
        self._task = cocotb.start_soon(self._run())

    @property
    def transfers(self):
        return self.rules.transfers

    @property
    def violations(self):
        return self.rules.violations

    def check(self):
        self.rules.check()

    def stop(self):
        self._task.cancel()

    async def _run(self):
        while True:
            await RisingEdge(self.clk)
            await ReadOnly()
            if self.reset is not None and read_int(self.reset) != 0:
                self.rules.reset()
                continue
            payload = read_int(self.payload) if self.payload is not None else 0
            self.rules.step(read_int(self.valid), read_int(self.ready), payload, sim_cycle())
