"""Shared encodings of the memrouter (golden/memrouter/formats.py): stream payload layouts at the
default widths (§3.2), PT_DATA and free-list descriptor encodings, START args, and the event
sequence of each migration kind (§4.9)."""

import subprocess
import sys

import pytest

from golden.memrouter.formats import (CSRREQ, CSRRSP, EV_ALLOC, EV_DONE, EV_LINE_FULL, EV_PT_UPDATE,
                                      EV_START, EVT, FAR, MIGRATING, MREQ, MRSP, NEAR, PREQ, PRSP,
                                      PTE, STABLE, Desc, start_arg)
from golden.memrouter.harness import Harness
from golden.memrouter.params import MemrouterParams, config_error, reference


@pytest.mark.req("MR-C7")
def test_payload_layouts():
    assert PREQ.widths == dict(id=8, addr=32, len=4, wr=1, data=256, be=32, last=1)
    assert PRSP.widths == dict(id=8, data=256, err=2, last=1)
    assert MREQ.widths == dict(tag=8, addr=24, len=4, wr=1, cls=2, data=256, be=32, last=1)
    assert MRSP.widths == dict(tag=8, data=256, poison=1, last=1)
    assert CSRREQ.widths == dict(addr=12, we=1, wdata=32) and CSRRSP.widths == dict(rdata=32, err=1)
    assert EVT.widths == dict(code=4, line=4, ppn=16, arg=32)
    p = MemrouterParams(PT_ENTRIES=4096, LOG2G=16)
    assert (p.PT_ENTRIES - 1).bit_length() + p.LOG2G <= 32            # PA_W
    _, c = reference("B", HBM_FRAMES=4097)
    assert "DEV_W" in config_error(MemrouterParams(), c)               # > 2^24 device bytes


def test_pte_and_desc_encodings():
    e = PTE.of(MIGRATING, FAR, Desc(5, 0x123456))
    assert e.encode() == 2 | 1 << 2 | 5 << 3 | 0x123456 << 8
    assert PTE.decode(e.encode()) == e
    assert Desc.decode(Desc(3, 77).encode()) == Desc(3, 77)
    assert start_arg(3, 2, True, 0x1234) == 3 | 2 << 4 | 1 << 6 | 0x1234 << 16


def seq(h):
    return [(c, line, ppn) for c, line, ppn, _ in h.r.events]


@pytest.mark.req("MR-F49", "MR-F24", "MR-F31")
def test_event_sequences():
    h = Harness(*reference("B", NEAR_RESERVE=1))
    h.cmd(1, 200)
    assert seq(h) == [(EV_ALLOC, 0, 200), (EV_START, 0, 200), (EV_LINE_FULL, 0, 200),
                      (EV_PT_UPDATE, 0, 200), (EV_DONE, 0, 200)]
    assert h.r.events[3][3] == PTE.of(STABLE, NEAR, Desc(0, 63)).encode()
    h = Harness(*reference("B"))
    h.read(112 << 12)
    h.cmd(3, 112, 0)
    assert seq(h) == [(EV_ALLOC, 0, 112), (EV_START, 0, 112), (EV_LINE_FULL, 0, 112),
                      (EV_ALLOC, 1, 0), (EV_LINE_FULL, 1, 0), (EV_PT_UPDATE, 0, 112),
                      (EV_PT_UPDATE, 0, 0), (EV_DONE, 0, 112)]
    assert h.r.events[1][3] == start_arg(3, 0, True, 0)
    assert h.r.events[-1][3] == 2 * 128 - 1                          # one sector pre-valid


def test_golden_model_is_pure_python():
    """golden/memrouter never imports Amaranth, cocotb or the hardware package."""
    code = ("import sys, pkgutil, importlib, golden.memrouter as m\n"
            "for i in pkgutil.iter_modules(m.__path__):\n"
            "    importlib.import_module('golden.memrouter.' + i.name)\n"
            "bad = [k for k in sys.modules if k.split('.')[0] in ('amaranth', 'cocotb', 'hw')]\n"
            "print(bad); sys.exit(1 if bad else 0)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
