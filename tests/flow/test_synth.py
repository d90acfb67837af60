"""`gpublocks synth`: generic Yosys synthesis, cell counts and NAND2 equivalents.

A small design whose gate content is known by construction checks the counting (flip-flops,
XORs, memory bits); the arbiter runs through the CLI and the report files.
"""

import json

import pytest
from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from sim.synth import NAND2_EQ, SynthError, gate_equivalents, synth_component


class _Known(wiring.Component):
    """An 8-bit register of a ^ b, and a 16 × 4 memory written from a and read at b."""

    a: In(8)
    b: In(8)
    q: Out(8)
    rd: Out(4)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.q.eq(self.a ^ self.b)
        m.submodules.mem = mem = Memory(shape=4, depth=16, init=[])
        wr, rp = mem.write_port(), mem.read_port(domain="comb")
        m.d.comb += [wr.addr.eq(self.a[:4]), wr.data.eq(self.a[4:]), wr.en.eq(self.b[7]),
                     rp.addr.eq(self.b[:4]), self.rd.eq(rp.data)]
        return m


def test_weights_are_nand2_relative_and_unknown_cells_are_refused():
    assert NAND2_EQ["$_NAND_"] == 1.0 and NAND2_EQ["$_NOR_"] == 1.0
    assert NAND2_EQ["$_NOT_"] < 1.0 < NAND2_EQ["$_AND_"] < NAND2_EQ["$_XOR_"] < NAND2_EQ["$_DFF_P_"]
    assert gate_equivalents({"$_NAND_": 3, "$_NOR_": 2}) == 5
    with pytest.raises(SynthError, match=r"\$_DLATCH_P_"):
        gate_equivalents({"$_NAND_": 1, "$_DLATCH_P_": 1})


def test_known_design_counts(build):
    r = synth_component("known", _Known(), progress=lambda *a, **k: None)
    # q: 8 DFFs; the memory stays a macro: counted in bits, not in cells
    assert r["ff"] == 8
    assert r["memories"] == 1 and r["memory_bits"] == 64
    assert "$mem_v2" not in r["cells_by_type"]
    assert r["xor_xnor"] >= 8                          # a ^ b, bit by bit
    assert r["cells"] == sum(r["cells_by_type"].values())
    assert r["nand2_eq"] == gate_equivalents(r["cells_by_type"])
    assert set(r["cells_by_type"]) <= set(NAND2_EQ)


def test_synth_arbiter_cli_and_reports(cli, build):
    code, out, err = cli("synth", "arbiter")
    assert code == 0, out + err
    r = json.loads((build / "synth" / "report.json").read_text())["arbiter"]
    assert r["params"] == {"n": 4} and r["ff"] == 2            # ptr, 2 bits
    assert 0 < r["nand2_eq"] < 200 and r["memories"] == 0
    code, out, err = cli("synth", "arbiter", "-p", "n=16")
    assert code == 0, out + err
    report = json.loads((build / "synth" / "report.json").read_text())
    assert set(report) == {"arbiter", "arbiter_n16"} and report["arbiter_n16"]["ff"] == 4
    assert report["arbiter_n16"]["nand2_eq"] > r["nand2_eq"]
    table = (build / "synth" / "report.md").read_text()
    assert "| arbiter | n=4 |" in table and "| arbiter_n16 | n=16 |" in table
    code, out, _ = cli("synth", "arbiter")
    assert code == 0 and "reusing" in out


@pytest.mark.parametrize("argv, words", [
    (["synth", "nosuch"], "unknown block 'nosuch'"),
    (["synth"], "name a block or use --all"),
    (["synth", "arbiter", "-p", "n=0"], "n must be an integer in 1..1024"),
])
def test_synth_bad_arguments_one_line_exit_2(cli, build, argv, words):
    code, out, err = cli(*argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
