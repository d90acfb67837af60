"""Lint waivers stay narrow: generator artefacts pass, real design problems still fail."""

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from sim.registry import Block, Param
from sim.verilog import lint, debug_alias_lines, write_verilog


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
    assert debug_alias_lines(path.read_text()), "expected Amaranth port aliases in the parent"
    ok, messages = lint(path, name)
    assert ok, messages


def test_a_real_unused_signal_still_fails_lint(tmp_path):
    path, name = write_verilog(BLOCK, {"dead": 1}, out_dir=tmp_path)
    ok, messages = lint(path, name)
    assert not ok and "Signal is not used: 'forgotten'" in messages


def test_debug_alias_lines_only_names_copies_of_instance_ports():
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
    assert debug_alias_lines(text) == [4]


def test_struct_payload_field_views_are_waived_but_not_other_dotted_names():
    text = """module top(i__payload, y);
  input [11:0] i__payload;
  wire [11:0] i__payload;
  wire [3:0] \\i__payload.a ;
  wire [7:0] \\other.b ;
  assign \\i__payload.a  = i__payload[3:0];
endmodule
"""
    assert debug_alias_lines(text) == [4]


def test_struct_stream_skid_buffer_lints_clean(tmp_path):
    from amaranth.lib import data

    from hw.common.skid import SkidBuffer

    layout = data.StructLayout({"tag": 4, "addr": 12, "last": 1})
    block = Block(name="skid_struct", kind="test", summary="struct payload", spec="-",
                  top=lambda x=0: SkidBuffer(layout), params=(Param("x", 0, "0", "unused"),))
    path, name = write_verilog(block, {"x": 0}, out_dir=tmp_path)
    assert "i__payload.tag" in path.read_text()
    ok, messages = lint(path, name)
    assert ok, messages


SPLIT_PORT_TEXT = """\
module top(clk, y);
  input clk;
  output [3:0] y;
  wire [3:0] y;
  wire \\$1 ;
  wire [2:0] \\$2 ;
  wire [3:0] fp32;
  wire [3:0] unused_design_net;
  \\top.child  child (
    .a_neg(\\$1 ),
    .\\port$7$0 (\\$2 ),
    .clk(clk)
  );
  assign fp32 = { \\$1 , \\$2  };
  assign unused_design_net = { \\$1 , y[0] };
  assign y = { \\$1 , \\$2  };
endmodule
module \\top.child (clk, \\port$7$0 , a_neg);
  input clk;
  output [2:0] \\port$7$0 ;
  wire [2:0] \\port$7$0 ;
  output a_neg;
  reg a_neg = 1'h0;
  wire [2:0] \\$3 ;
  wire [3:0] fp32;
  wire busy;
  assign fp32 = { a_neg, \\$3  };
  assign \\port$7$0  = \\$3 ;
  assign busy = 1'h0;
endmodule
"""


def test_split_and_constant_port_views_are_waived_design_nets_are_not():
    """Amaranth's split-port views (parent and child) and a dropped constant port's wire in a
    submodule are waived; an unused net of the design's own is not."""
    from sim.verilog import debug_alias_lines
    lines = SPLIT_PORT_TEXT.splitlines()
    waived = {lines[n - 1].strip() for n in debug_alias_lines(SPLIT_PORT_TEXT)}
    assert "wire [3:0] fp32;" in waived and "wire busy;" in waived
    numbers = debug_alias_lines(SPLIT_PORT_TEXT)
    assert {lines[n - 1].strip() for n in numbers if n < 18} == {"wire [3:0] fp32;"}
    assert sum(1 for n in numbers if lines[n - 1].strip() == "wire [3:0] fp32;") == 2


MERGED_PORT_TEXT = """\
module top(clk, fill__payload,
  y);
  input clk;
  input [5:0] fill__payload;
  output [3:0] y;
  wire [3:0] y;
  wire [1:0] fill_bank;
  wire [3:0] fill_dslot;
  wire [3:0] keep_me;
  wire [7:0] arr;
  wire [3:0] \\arr[0] ;
  wire [3:0] \\ghost[1] ;
  \\top.child  child (
    .\\port$0$0 (fill__payload),
    .clk(clk),
    .y(y)
  );
  assign fill_bank = fill__payload[1:0];
  assign fill_dslot = fill__payload[5:2];
  assign keep_me = fill__payload[5:2];
  assign \\arr[0]  = arr[3:0];
endmodule
module \\top.child (clk, \\port$0$0 , y);
  input clk;
  input [5:0] \\port$0$0 ;
  wire [5:0] \\port$0$0 ;
  output [3:0] y;
  wire [1:0] fill_bank;
  wire [3:0] fill_dslot;
  wire [3:0] design_copy;
  assign fill_bank = \\port$0$0 [1:0];
  assign fill_dslot = \\port$0$0 [5:2];
  assign design_copy = y;
  assign y = \\port$0$0 [5:2];
endmodule
"""


def test_merged_input_ports_and_array_views_are_waived_design_copies_are_not():
    """A wrapped module header is read whole; the wires Amaranth leaves for input ports it merged
    into one ``port$`` port (in the child, and the parent's copies of the same names) and
    ``s[k]`` element views of a declared signal are waived; a copy the design made of its own
    output, a wire of another name and a view of an undeclared signal are not."""
    lines = MERGED_PORT_TEXT.splitlines()
    waived = [lines[n - 1].strip() for n in debug_alias_lines(MERGED_PORT_TEXT)]
    assert sorted(waived) == sorted(["wire [1:0] fill_bank;", "wire [3:0] fill_dslot;",
                                     "wire [3:0] \\arr[0] ;", "wire [1:0] fill_bank;",
                                     "wire [3:0] fill_dslot;"]), waived
