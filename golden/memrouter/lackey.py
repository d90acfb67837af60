"""Converter from valgrind Lackey output (``valgrind --tool=lackey --trace-mem=yes PROG``) to the
block's trace format (spec §4.13).

Lackey prints one access per line: ``I  addr,size`` (instruction fetch), `` L addr,size``
(load), `` S addr,size`` (store), `` M addr,size`` (modify = load + store), with hexadecimal
addresses, and valgrind messages starting with ``==``. Instruction fetches and messages are
dropped; the data accesses become mtrace ``L/S/M <hexaddr> <size>`` lines.

Command line: ``python -m golden.memrouter.lackey LACKEY.txt OUT.mtrace.gz --program P
[--args A] [--input I] [--skip M] [--limit N] [--command C]``.

``--skip M`` drops the first M data accesses and ``--limit N`` keeps at most N after that, so a
long program run can be cut to the prefix the benchmark uses (§4.13 keeps the first N_TRACE
expanded accesses). Both are recorded in the header (``skipped``, ``command``). ``--command C``
names the recording command line; the header's ``command`` key holds C followed by this
converter's own command line, so the file says how it was made.
"""

import argparse
import itertools
import shlex
import sys

from golden.memrouter.trace import save_mtrace, format_mtrace

__all__ = ["TOOL", "parse_lackey", "lackey_to_mtrace", "cut", "convert_file",
           "converter_command", "main"]

TOOL = "valgrind --tool=lackey --trace-mem=yes"


def parse_lackey(lines):
    """Yield (op, addr, size) for every L, S and M line; ValueError names a malformed line."""
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.startswith("==") or line.startswith("--"):
            continue
        if line.startswith("I"):
            continue
        if len(line) < 3 or line[0] != " " or line[1] not in "LSM" or line[2] != " ":
            raise ValueError(f"lackey line {n}: expected ' L|S|M addr,size', got {line!r}")
        addr, sep, size = line[3:].strip().partition(",")
        try:
            if not sep:
                raise ValueError
            a, s = int(addr, 16), int(size, 10)
        except ValueError:
            raise ValueError(f"lackey line {n}: bad 'addr,size' in {line!r}") from None
        if s < 1:
            raise ValueError(f"lackey line {n}: size must be >= 1, got {s}")
        yield line[1], a, s


def lackey_to_mtrace(lines, program, args="", input="", **extra):
    """mtrace text of the data accesses in Lackey output ``lines``."""
    acc = list(parse_lackey(lines))
    header = dict(program=program, args=args, input=input, tool=TOOL, **extra)
    return format_mtrace(header, acc), acc


def cut(accesses, skip=0, limit=None):
    """The data accesses after the first ``skip``, at most ``limit`` of them (None: all)."""
    if skip < 0 or (limit is not None and limit < 0):
        raise ValueError(f"skip and limit must be >= 0, got {skip}, {limit}")
    return itertools.islice(accesses, skip, None if limit is None else skip + limit)


def convert_file(src, dst, program, args="", input="", skip=0, limit=None, **extra):
    """Convert a Lackey log file to ``dst`` (gzip when it ends in .gz); returns the count.

    ``skip``/``limit`` cut the data accesses (:func:`cut`); the log is read only as far as
    needed, so a log cut short by stopping valgrind converts as long as it holds them. A
    non-zero ``skip`` is recorded as header key ``skipped``."""
    with open(src) as f:
        acc = list(cut(parse_lackey(f), skip, limit))
    if skip:
        extra = dict(skipped=f"first {skip} lackey data accesses", **extra)
    save_mtrace(dst, dict(program=program, args=args, input=input, tool=TOOL, **extra), acc)
    return len(acc)


def converter_command(ns):
    """This converter's command line for parsed options ``ns`` (without ``--command``)."""
    cmd = ["python", "-m", "golden.memrouter.lackey", ns.src, ns.dst, "--program", ns.program]
    for opt, value, default in (("--args", ns.args, ""), ("--input", ns.input, ""),
                                ("--skip", ns.skip, 0), ("--limit", ns.limit, None)):
        if value != default:
            cmd += [opt, str(value)]
    return shlex.join(cmd)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m golden.memrouter.lackey",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--program", required=True)
    ap.add_argument("--args", default="")
    ap.add_argument("--input", default="")
    ap.add_argument("--skip", type=int, default=0, metavar="M",
                    help="drop the first M data accesses")
    ap.add_argument("--limit", type=int, default=None, metavar="N",
                    help="keep at most N data accesses (after --skip)")
    ap.add_argument("--command", default=None, metavar="C",
                    help="the recording command line, stored in header key 'command'")
    ns = ap.parse_args(argv)
    extra = {}
    if ns.command is not None:
        extra["command"] = f"{ns.command} ; {converter_command(ns)}"
    try:
        n = convert_file(ns.src, ns.dst, ns.program, ns.args, ns.input, ns.skip, ns.limit,
                         **extra)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{n} accesses -> {ns.dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
