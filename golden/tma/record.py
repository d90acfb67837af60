"""The observation record of ``gpublocks run tma``: what a run did at the unit's ports, in a JSON
form that the golden model and the RTL testbench (``tb.tma.run_tb``) both produce, so the flow
can compare them field by field (only the normative outputs of tma.md §4: request keys per path,
``err`` and ``done`` streams, smem rows and global lines written, barrier bytes).
"""

from golden.tma.formats import LINE, N_CTA, L2Op

WRITE_PATH = frozenset({L2Op.WRITE} | {L2Op(8 + k) for k in range(8)})


def request_entry(op, line, sectors, dtype, data, be):
    """One ``l2_req`` as ``{op, line, sectors[, dtype, be, data]}``; the write fields (hex data)
    only for WRITE/RED, where they are normative."""
    op = L2Op(op)
    entry = {"op": op.name, "line": int(line), "sectors": int(sectors)}
    if op in WRITE_PATH:
        entry.update(dtype=int(dtype) if op != L2Op.WRITE else 0, be=int(be),
                     data=bytes(data).hex())
    return entry


def is_write(entry):
    return L2Op[entry["op"]] in WRITE_PATH


def row_key(cta, row):
    return f"{cta}:{row:#x}"


def smem_image(read_row, rows):
    """``{"cta:row": hex}`` of the smem rows ``rows`` ((cta, row) pairs) as ``read_row`` gives them."""
    return {row_key(c, r): bytes(read_row(c, r)).hex() for c, r in sorted(rows)}


def gmem_image(read_line, lines):
    """``{"0xline": hex}`` of the global lines ``lines``."""
    return {f"{line:#x}": bytes(read_line(line)).hex() for line in sorted(lines)}


def beat_rows(beats):
    """(cta, row) of every beat with at least one byte enabled, per destination CTA."""
    return {(c, row) for row, be, mask in beats if be for c in range(N_CTA) if mask >> c & 1}


def mbar_totals(updates):
    """``{"addr:cta": bytes}`` summed over ``(addr, tx, mask)`` barrier updates."""
    out = {}
    for addr, tx, mask in updates:
        for c in range(N_CTA):
            if mask >> c & 1:
                key = f"{addr:#x}:{c}"
                out[key] = out.get(key, 0) + int(tx)
    return dict(sorted(out.items()))


def load_memories(stim, gmem_write, smem_write):
    """Store a normalized stimulus's global (descriptors included) and shared memory contents."""
    for addr, data in stim["gmem"]:
        gmem_write(addr, bytes.fromhex(data))
    for cta, addr, data in stim["smem"]:
        smem_write(cta, addr, bytes.fromhex(data))


def compare_records(expected, actual):
    """Mismatch descriptions between two records (empty when the normative outputs agree)."""
    problems = []
    for path in (False, True):
        want = [e for e in expected["requests"] if is_write(e) == path]
        got = [e for e in actual["requests"] if is_write(e) == path]
        what = "write" if path else "read"
        if len(want) != len(got):
            problems.append(f"{len(got)} {what} requests from the RTL, {len(want)} expected")
        for k, (w, g) in enumerate(zip(want, got)):
            if w != g:
                diff = [key for key in w if w[key] != g.get(key)]
                problems.append(f"{what} request {k}: {', '.join(diff)} differ (RTL line "
                                f"{g['line']:#x}, golden {w['line']:#x})")
    for key in ("errs", "done"):
        if expected[key] != actual[key]:
            problems.append(f"{key}: RTL {actual[key][:8]}, golden {expected[key][:8]}")
    for key, what in (("smem", "smem row"), ("gmem", "global line"), ("mbar_tx", "barrier")):
        want, got = expected[key], actual[key]
        for name in sorted(set(want) | set(got)):
            if want.get(name) != got.get(name):
                problems.append(f"{what} {name}: " + ("not written by the RTL" if name not in got
                                                      else "written by the RTL only"
                                                      if name not in want else "contents differ"))
    return problems


__all__ = ["LINE", "request_entry", "smem_image", "gmem_image", "beat_rows", "mbar_totals",
           "compare_records", "load_memories", "row_key", "is_write"]
