"""The program-trace format, its scaling to router requests (memrouter §4.13, MR-GV18) and the
valgrind Lackey converter (golden/memrouter/lackey.py) on an inline sample; when valgrind is
installed, also on a real ``valgrind --tool=lackey --trace-mem=yes /bin/true`` run."""

import gzip
from fractions import Fraction
import shutil
import subprocess

import pytest

from golden.memrouter import vectors as gv
from golden.memrouter.harness import Harness
from golden.memrouter.lackey import TOOL, convert_file, lackey_to_mtrace, main, parse_lackey
from golden.memrouter.params import reference
from golden.memrouter.trace import (expand, format_mtrace, load_mtrace, parse_mtrace, scale,
                                    stride)

SAMPLE = """\
==12345== Lackey, an example Valgrind tool
==12345== Command: ./prog
I  04001100,3
 S 1ffefffd48,8
I  04001103,2
 L 04225e70,8
 M 0422a000,4
 L 0422aff8,16
I  040011a0,5
 S 1ffeff0010,512
==12345==
==12345== Counted 1 call to main()
"""


@pytest.mark.req("MR-GV18")
def test_gv18_stride_ranks_share():
    for pages, s in gv.GV18["strides"].items():
        assert stride(pages) == s
    accesses = [("L", t << 12, 4) for t in range(6)]
    reqs, rep = scale(accesses, 12, 608, 8)
    assert [r.addr >> 12 for r in reqs] == gv.GV18["ranks"]
    assert rep == dict(distinct_pages=6, pages_folded=0, requests=6, stride=375)
    p, c = reference("D")
    assert Fraction(c.HBM_FRAMES, Harness(p, c).r.pages) == gv.GV18["hbm_share"]


def test_lackey_parser_sample():
    acc = list(parse_lackey(SAMPLE.splitlines()))
    assert acc == [("S", 0x1ffefffd48, 8), ("L", 0x04225e70, 8), ("M", 0x0422a000, 4),
                   ("L", 0x0422aff8, 16), ("S", 0x1ffeff0010, 512)]
    with pytest.raises(ValueError, match="lackey line 2"):
        list(parse_lackey(["I  1,1", " X 10,4"]))
    with pytest.raises(ValueError, match="lackey line 1"):
        list(parse_lackey([" L zz,4"]))


def test_mtrace_roundtrip_and_errors(tmp_path):
    text, acc = lackey_to_mtrace(SAMPLE.splitlines(), "prog", "-n 3", "in.txt")
    tr = parse_mtrace(text)
    assert tr.accesses == acc and tr.header["tool"] == TOOL and tr.header["accesses"] == "5"
    src = tmp_path / "lk.txt"
    src.write_text(SAMPLE)
    dst = tmp_path / "t.mtrace.gz"
    assert convert_file(src, dst, "prog") == 5
    assert load_mtrace(dst).accesses == acc
    assert gzip.decompress(dst.read_bytes()).decode().startswith("# program: prog")
    assert main([str(src), str(tmp_path / "u.mtrace"), "--program", "p"]) == 0
    assert main([str(tmp_path / "missing"), str(tmp_path / "v.mtrace"), "--program", "p"]) == 2
    with pytest.raises(ValueError, match="missing key 'input'"):
        parse_mtrace("# program: a\n# args: \n# tool: x\n# accesses: 0\n")
    with pytest.raises(ValueError, match="line 7"):
        parse_mtrace(format_mtrace(tr.header, acc[:1]) + "Q 10 4\n")


@pytest.mark.req("MR-GV18")
def test_scale_chunks_and_write_pattern():
    """M expands to R then W; a 512-B store becomes 2 chunks of 8 sectors and one of 1 (it
    starts mid-sector: 17 sectors); pieces split at page boundaries; write bytes carry
    (31·k + x) & 0xFF with exactly the accessed bytes enabled."""
    acc = list(parse_lackey(SAMPLE.splitlines()))
    assert [rw for rw, _, _ in expand(acc)] == ["W", "R", "R", "W", "R", "W"]
    reqs, rep = scale(acc, 12, 608, 8)
    assert rep["distinct_pages"] == 5 and rep["stride"] == 375
    big = [r for r in reqs if r.k == 5]
    assert [r.len + 1 for r in big] == [8, 8, 1]
    assert all(r.wr for r in big)
    spans = [r for r in reqs if r.k == 4]                            # 0x422aff8 + 16 crosses
    assert len(spans) == 2 and spans[0].addr >> 12 != spans[1].addr >> 12
    first = big[0]
    x0 = first.addr                                                  # partition address of sector
    enabled = [b for b in range(32) if first.be[0] >> b & 1]
    assert enabled == list(range(16, 32)) and first.be[1] == 0xFFFFFFFF
    assert all((first.data[0] >> (8 * b)) & 0xFF == (31 * 5 + x0 + b) & 0xFF for b in enabled)
    assert all((first.data[0] >> (8 * b)) & 0xFF == 0 for b in range(16))
    assert big[-1].be == (0xFFFF,)
    w4 = [r for r in reqs if r.k == 3]                               # the M's write, 4 bytes
    assert len(w4) == 1 and w4[0].be[0] == 0xF
    for r in reqs:
        assert r.len < 8 and (r.addr >> 12) == ((r.addr + 32 * r.len) >> 12)


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_real_lackey_run(tmp_path):
    """A real Lackey run of /bin/true converts, loads and scales into legal requests."""
    log = tmp_path / "lackey.txt"
    subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}",
                    "/bin/true"], check=True, timeout=120, capture_output=True)
    dst = tmp_path / "true.mtrace.gz"
    n = convert_file(log, dst, "/bin/true")
    assert n > 1000
    tr = load_mtrace(dst)
    reqs, rep = scale(tr.accesses, 12, 608, 8, n=20000)
    assert rep["requests"] == len(reqs) >= 20000
    h = Harness(*reference("D"))
    for r in reqs[:300]:
        assert r.len < 8 and r.addr + 32 * (r.len + 1) <= h.r.pages << 12
