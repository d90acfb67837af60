"""Structure of the generated arbiter: its ports, and ptr as its only register (TQ-I12)."""

import re

import pytest

from sim import registry
from sim.verilog import convert


@pytest.mark.req("TQ-I12")
@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 48, 64])
def test_ports_and_only_ptr_is_state(n):
    block = registry.get("arbiter")
    text = convert(block, block.resolve_params({"n": n}), name="arb")
    header = re.search(r"module arb\(([^)]*)\)", text).group(1)
    assert sorted(p.strip() for p in header.split(",")) == \
        sorted(["advance", "clk", "rst", "grant", "grant_idx", "valid", "req"])
    idx_w = max(1, (n - 1).bit_length())
    for decl in (rf"input \[{n - 1}:0\] req;" if n > 1 else r"input req;",
                 rf"output \[{n - 1}:0\] grant;" if n > 1 else r"output grant;",
                 rf"output \[{idx_w - 1}:0\] grant_idx;" if idx_w > 1 else r"output grant_idx;",
                 r"output valid;", r"input advance;"):
        assert re.search(decl, text), decl
    registers = set(re.findall(r"always @\(posedge clk\)\s*\n\s*(\S+)\s*<=", text))
    assert registers == {"ptr"}
