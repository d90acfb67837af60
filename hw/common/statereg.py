"""StateReg: a state machine's state as an explicit register, for control that must lint clean.

Amaranth 0.5's ``m.FSM`` writes its state decode as a ``casez`` without a default and compares
the state with constants narrower than the register, which ``verilator -Wall`` reports
(CASEINCOMPLETE, WIDTHEXPAND). Here the state is a plain register and each test is a full-width
comparison (``hw.common.lintops.eq_const``), used in ``m.If``/``m.Elif`` chains.
"""

from amaranth import Signal

from hw.common.lintops import eq_const

__all__ = ["StateReg"]


class StateReg:
    """The state register of one state machine.

    Parameters
    ----------
    states : sequence of str
        State names; the register encodes their indices.
    init : str
        The reset state.
    name : str
        Name of the register in the Verilog.
    """

    def __init__(self, states, init, name="fsm"):
        self.states = tuple(states)
        self.reg = Signal(range(len(self.states)), init=self.states.index(init), name=name)

    def at(self, state):
        """High while the machine is in ``state``."""
        return eq_const(self.reg, self.states.index(state))

    def code(self, state):
        """The register value of ``state`` (for a computed next state)."""
        return self.states.index(state)

    def goto(self, state):
        """The assignment (for ``m.d.sync``) that moves to ``state`` (a name, or a value built
        from :meth:`code` results) at the next edge."""
        return self.reg.eq(self.states.index(state) if isinstance(state, str) else state)
