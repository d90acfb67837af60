"""Amaranth-simulator helpers for unit tests of small parts (no Verilator build): a clocked run
of one testbench, and the check that random stimulus reached every case it must."""

from amaranth.sim import Simulator

__all__ = ["run_clocked", "assert_reached"]


def run_clocked(dut, bench):
    """Simulate ``dut`` with a clock on its ``sync`` domain and ``bench`` as its testbench."""
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


def assert_reached(stats, seed):
    """Fail, naming them, when some of the cases counted in ``stats`` never occurred."""
    missing = [k for k, v in stats.items() if v == 0]
    assert not missing, f"seed {seed}: stimulus never reached {missing} ({stats})"
