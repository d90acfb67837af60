"""The program-trace format and its scaling to router requests (spec §4.13).

A trace (``.mtrace`` text, usually gzip-compressed as ``.mtrace.gz``) has ``# key: value``
header lines (program, args, input, tool, accesses are required) and data lines
``<op> <hexaddr> <size>`` with op in L, S, M. :func:`scale` folds the trace's pages onto the
router's PAGES in first-touch order with a golden-ratio stride and cuts every page piece into
requests of at most MAX_LEN sectors, each carrying the deterministic write pattern."""

import gzip
from dataclasses import dataclass
from math import gcd

__all__ = ["REQUIRED_KEYS", "N_TRACE", "Trace", "TraceRequest", "parse_mtrace", "format_mtrace",
           "load_mtrace", "save_mtrace", "expand", "stride", "scale"]

REQUIRED_KEYS = ("program", "args", "input", "tool", "accesses")
N_TRACE = 200_000
OPS = ("L", "S", "M")


@dataclass
class Trace:
    header: dict
    accesses: list          # (op, addr, size)


@dataclass(frozen=True)
class TraceRequest:
    k: int                  # index of the expanded access
    addr: int
    len: int                # sectors - 1
    wr: bool
    data: tuple = ()        # writes: per sector 256-bit data
    be: tuple = ()          # writes: per sector byte enables


def parse_mtrace(text):
    """A :class:`Trace` from mtrace text; ValueError naming the line or key on bad input."""
    header, acc = {}, []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("#"):
            key, sep, value = line[1:].partition(":")
            if not sep:
                raise ValueError(f"mtrace line {n}: header line needs '# key: value'")
            header[key.strip()] = value.strip()
            continue
        f = line.split()
        if len(f) != 3 or f[0] not in OPS:
            raise ValueError(f"mtrace line {n}: expected '<L|S|M> <hexaddr> <size>', got {line!r}")
        try:
            acc.append((f[0], int(f[1], 16), int(f[2])))
        except ValueError:
            raise ValueError(f"mtrace line {n}: bad address or size in {line!r}") from None
        if acc[-1][2] < 1:
            raise ValueError(f"mtrace line {n}: size must be >= 1")
    for key in REQUIRED_KEYS:
        if key not in header:
            raise ValueError(f"mtrace header: missing key {key!r}")
    if int(header["accesses"]) != len(acc):
        raise ValueError(f"mtrace header: accesses = {header['accesses']} but "
                         f"{len(acc)} data lines")
    return Trace(header, acc)


def format_mtrace(header, accesses):
    h = dict(header)
    h["accesses"] = str(len(accesses))
    out = [f"# {k}: {h[k]}" for k in REQUIRED_KEYS]
    out += [f"# {k}: {v}" for k, v in h.items() if k not in REQUIRED_KEYS]
    out += [f"{op} {a:x} {size}" for op, a, size in accesses]
    return "\n".join(out) + "\n"


def load_mtrace(path):
    path = str(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return parse_mtrace(f.read())


def save_mtrace(path, header, accesses):
    path = str(path)
    text = format_mtrace(header, accesses)
    if path.endswith(".gz"):
        with gzip.open(path, "wt", compresslevel=9) as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def expand(accesses, n=N_TRACE):
    """L -> R, S -> W, M -> R then W; the first ``n`` expanded accesses as (rw, addr, size)."""
    out = []
    for op, a, size in accesses:
        for rw in {"L": "R", "S": "W", "M": "RW"}[op]:
            if len(out) == n:
                return out
            out.append((rw, a, size))
    return out


def stride(pages):
    """Smallest s >= floor(0.618034·PAGES) with gcd(s, PAGES) = 1 (MR-GV18)."""
    s = int(0.618034 * pages)
    while gcd(s, pages) != 1:
        s += 1
    return s


def scale(accesses, log2g, pages, max_len, n=N_TRACE):
    """The router requests of a trace (§4.13), and a report (distinct pages, folded, requests)."""
    g = 1 << log2g
    st = stride(pages)
    rank = {}
    reqs = []
    for k, (rw, a, size) in enumerate(expand(accesses, n)):
        b, end = a, a + size
        while b < end:
            e = min(end, (b // g + 1) * g)
            tp = b >> log2g
            if tp not in rank:
                rank[tp] = len(rank)
            ppn = (st * (rank[tp] % pages)) % pages
            pa = ppn * g + (b & (g - 1))
            pe = pa + (e - b)
            s0, s1 = pa >> 5, (pe - 1) >> 5
            for c0 in range(s0, s1 + 1, max_len):
                c1 = min(c0 + max_len - 1, s1)
                if rw == "R":
                    reqs.append(TraceRequest(k, c0 << 5, c1 - c0, False))
                    continue
                data, bes = [], []
                lo, hi = max(pa, c0 << 5), min(pe, (c1 + 1) << 5)
                for s in range(c0, c1 + 1):
                    d = be = 0
                    for x in range(max(lo, s << 5), min(hi, (s + 1) << 5)):
                        d |= ((31 * k + x) & 0xFF) << (8 * (x & 31))
                        be |= 1 << (x & 31)
                    data.append(d)
                    bes.append(be)
                reqs.append(TraceRequest(k, c0 << 5, c1 - c0, True, tuple(data), tuple(bes)))
            b = e
    report = dict(distinct_pages=len(rank), pages_folded=max(0, len(rank) - pages),
                  requests=len(reqs), stride=st)
    return reqs, report
