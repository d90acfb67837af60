"""Converter from valgrind Lackey output (``valgrind --tool=lackey --trace-mem=yes PROG``) to the
block's trace format (spec §4.13).

Lackey prints one access per line: ``I  addr,size`` (instruction fetch), `` L addr,size``
(load), `` S addr,size`` (store), `` M addr,size`` (modify = load + store), with hexadecimal
addresses, and valgrind messages starting with ``==``. Instruction fetches and messages are
dropped; the data accesses become mtrace ``L/S/M <hexaddr> <size>`` lines.

Command line: ``python -m golden.memrouter.lackey LACKEY.txt OUT.mtrace.gz --program P
[--args A] [--input I]``.
"""

import argparse
import sys

from golden.memrouter.trace import save_mtrace, format_mtrace

__all__ = ["TOOL", "parse_lackey", "lackey_to_mtrace", "convert_file", "main"]

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


def convert_file(src, dst, program, args="", input="", **extra):
    """Convert a Lackey log file to ``dst`` (gzip when it ends in .gz); returns the count."""
    with open(src) as f:
        acc = list(parse_lackey(f))
    save_mtrace(dst, dict(program=program, args=args, input=input, tool=TOOL, **extra), acc)
    return len(acc)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m golden.memrouter.lackey",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--program", required=True)
    ap.add_argument("--args", default="")
    ap.add_argument("--input", default="")
    ns = ap.parse_args(argv)
    try:
        n = convert_file(ns.src, ns.dst, ns.program, ns.args, ns.input)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{n} accesses -> {ns.dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
