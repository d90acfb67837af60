"""The Lackey converter's cut options (golden/memrouter/lackey.py): ``--skip M`` / ``--limit N``
keep a prefix of a long program run (§4.13 keeps the first N_TRACE expanded accesses), a log
cut short by stopping valgrind converts as far as it is read, and ``--command`` records the
recording and conversion command lines in the header."""

import shlex

import pytest

from golden.memrouter.lackey import TOOL, convert_file, cut, main, parse_lackey
from golden.memrouter.trace import load_mtrace

LOG = """\
==7== Lackey, an example Valgrind tool
==7== Command: gzip -9 -c in.txt
I  04001100,3
 S 1fff000738,8
 L 04225e70,8
I  04001103,2
 M 0422a000,4
 L 0422aff8,16
 S 1ffeff0010,512
 L 00121060,4
 S 00121064,4
"""
ALL = list(parse_lackey(LOG.splitlines()))


def test_cut():
    assert list(cut(iter(ALL))) == ALL
    assert list(cut(iter(ALL), 2)) == ALL[2:]
    assert list(cut(iter(ALL), 1, 3)) == ALL[1:4]
    assert list(cut(iter(ALL), 0, 0)) == []
    assert list(cut(iter(ALL), 6, 5)) == ALL[6:]
    with pytest.raises(ValueError, match="must be >= 0"):
        cut(iter(ALL), -1)
    with pytest.raises(ValueError, match="must be >= 0"):
        cut(iter(ALL), 0, -2)


def test_convert_skip_limit_header(tmp_path):
    src = tmp_path / "lk.txt"
    src.write_text(LOG)
    dst = tmp_path / "t.mtrace.gz"
    assert convert_file(src, dst, "gzip", "-9 -c in.txt", "in.txt", skip=2, limit=3) == 3
    tr = load_mtrace(dst)
    assert tr.accesses == ALL[2:5]
    assert tr.header["accesses"] == "3" and tr.header["tool"] == TOOL
    assert tr.header["skipped"] == "first 2 lackey data accesses"
    assert convert_file(src, dst, "gzip", limit=4) == 4
    tr = load_mtrace(dst)
    assert tr.accesses == ALL[:4] and "skipped" not in tr.header


def test_truncated_log_converts_within_limit(tmp_path):
    """valgrind stopped mid-line: the partial last line is never read when the limit ends
    before it; without a limit it is reported."""
    src = tmp_path / "lk.txt"
    src.write_text(LOG + " L 0012")
    assert convert_file(src, tmp_path / "a.mtrace", "gzip", limit=len(ALL)) == len(ALL)
    with pytest.raises(ValueError, match="lackey line 12"):
        convert_file(src, tmp_path / "b.mtrace", "gzip")


def test_main_command_header(tmp_path, capsys):
    src = tmp_path / "lk.txt"
    src.write_text(LOG)
    dst = tmp_path / "c.mtrace.gz"
    rec = f"valgrind --tool=lackey --trace-mem=yes --log-file={src} gzip -9 -c in.txt > /dev/null"
    argv = [str(src), str(dst), "--program", "gzip 1.12", "--args", "-9 -c in.txt",
            "--input", "in.txt: cat a b", "--skip", "1", "--limit", "5", "--command", rec]
    assert main(argv) == 0
    assert "5 accesses" in capsys.readouterr().out
    tr = load_mtrace(dst)
    assert tr.accesses == ALL[1:6]
    first, conv = tr.header["command"].split(" ; ")
    assert first == rec
    assert shlex.split(conv) == ["python", "-m", "golden.memrouter.lackey"] + argv[:-2]
    assert main([str(src), str(tmp_path / "d.mtrace"), "--program", "p", "--limit", "-1"]) == 2
    assert "must be >= 0" in capsys.readouterr().err
