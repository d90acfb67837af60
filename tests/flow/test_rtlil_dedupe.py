"""sim.rtlil_dedupe: copies of one sub-block become one module; different ones stay apart."""

import re

from amaranth import Module
from amaranth.back import rtlil
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw.common.regfifo import RegFifo
from sim.rtlil_dedupe import dedupe_modules


class _Pair(wiring.Component):
    """Two 8-bit FIFOs and one 4-bit FIFO on the same strobes."""

    w_en: In(1)
    w_data: In(8)
    r_en: In(1)
    out_a: Out(8)
    out_b: Out(8)
    out_c: Out(4)

    def elaborate(self, platform):
        m = Module()
        fifos = {"fa": RegFifo(8, 2), "fb": RegFifo(8, 2), "fc": RegFifo(4, 2)}
        for name, f in fifos.items():
            m.submodules[name] = f
            m.d.comb += [f.w_en.eq(self.w_en), f.w_data.eq(self.w_data),
                         f.r_en.eq(self.r_en & f.r_rdy)]
        m.d.comb += [self.out_a.eq(fifos["fa"].r_data), self.out_b.eq(fifos["fb"].r_data),
                     self.out_c.eq(fifos["fc"].r_data)]
        return m


def _modules(text):
    return re.findall(r"^module (\S+)", text, re.M)


def test_identical_copies_merge_and_the_rest_stays():
    text = rtlil.convert(_Pair(), name="pair", emit_src=False)
    assert len(_modules(text)) == 4
    out, merged = dedupe_modules(text, r"\pair")
    assert merged == 1
    assert _modules(out) == [r"\pair", r"\pair.fa", r"\pair.fc"]
    cells = dict((inst, typ) for typ, inst in re.findall(r"^  cell (\\pair\.\S+) (\S+)$", out,
                                                        re.M))
    assert cells == {r"\fa": r"\pair.fa", r"\fb": r"\pair.fa", r"\fc": r"\pair.fc"}


def test_top_and_public_names_are_kept():
    text = rtlil.convert(_Pair(), name="pair", emit_src=False)
    out, _ = dedupe_modules(text, r"\pair")
    top = re.search(r"^module \\pair\n(.*?)^end\n", out, re.M | re.S).group(1)
    before = re.search(r"^module \\pair\n(.*?)^end\n", text, re.M | re.S).group(1)
    assert top == before.replace("cell \\pair.fb ", "cell \\pair.fa ")     # only the cell type
    def ports(rtlil_text, module):
        body = re.search(rf"^module {re.escape(module)}\n(.*?)^end\n", rtlil_text,
                         re.M | re.S).group(1)
        return re.findall(r"wire width \d+ (?:input|output) \d+ +(\S+)$", body, re.M)
    kept = ports(out, r"\pair.fa")
    assert kept == ports(text, r"\pair.fa") and r"\w_en" in kept and r"\r_data" in kept


def test_private_numbers_are_per_module():
    """The kept copy's private names count from 1, whatever the design-wide counter said."""
    text = rtlil.convert(_Pair(), name="pair", emit_src=False)
    out, _ = dedupe_modules(text, r"\pair")
    body = re.search(r"^module \\pair\.fa\n(.*?)^end\n", out, re.M | re.S).group(1)
    numbers = sorted({int(n) for n in re.findall(r"\$(\d+)", body)})
    assert numbers == list(range(1, len(numbers) + 1))


def test_nothing_to_merge_is_unchanged_text():
    fifo = RegFifo(8, 2)
    text = rtlil.convert(fifo, name="one", emit_src=False)
    out, merged = dedupe_modules(text, r"\one")
    assert merged == 0 and out == text
