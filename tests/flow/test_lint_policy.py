"""Lint waivers stay narrow: generator artefacts pass, real design problems still fail."""

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sim.registry import Block, Param
from sim.verilog import lint, port_alias_lines, write_verilog


class _Leaf(wiring.Component):
    i: In(4)
    o: Out(4)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.o.eq(self.i + 1)
        return m


class _Top(wiring.Component):
    """Two chained submodules (port aliases in the parent); optionally a forgotten input."""

    def __init__(self, dead=0):
        self.dead = dead
        ports = {"a": In(4), "y": Out(4)}
        if dead:
            ports["forgotten"] = In(4)
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        m.submodules.first = first = _Leaf()
        m.submodules.second = second = _Leaf()
        m.d.comb += [first.i.eq(self.a), second.i.eq(first.o), self.y.eq(second.o)]
        return m


BLOCK = Block(name="hier", kind="test", summary="lint policy check", spec="-", top=_Top,
              params=(Param("dead", 0, "0, 1", "add an input port the design never reads"),))


def test_hierarchical_design_is_lint_clean(tmp_path):
    path, name = write_verilog(BLOCK, {"dead": 0}, out_dir=tmp_path)
    assert port_alias_lines(path.read_text()), "expected Amaranth port aliases in the parent"
    ok, messages = lint(path, name)
    assert ok, messages


def test_a_real_unused_signal_still_fails_lint(tmp_path):
    path, name = write_verilog(BLOCK, {"dead": 1}, out_dir=tmp_path)
    ok, messages = lint(path, name)
    assert not ok and "Signal is not used: 'forgotten'" in messages


def test_port_alias_lines_only_names_copies_of_instance_ports():
    text = """module top(a, y);
  input a;
  wire a;
  wire i;
  wire keep;
  sub u (
    .i(a),
    .o(y)
  );
  assign i = a;
endmodule
"""
    assert port_alias_lines(text) == [4]
