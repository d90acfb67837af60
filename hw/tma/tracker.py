"""The TMA completion tracker: tags, placements and the outstanding counter (spec tma.md §2.2
Tracker; TMA-F27, F28, F29, TMA-C6, TMA-I4, I5, §4.11 tag reuse and outstanding counter).

Layouts (``golden.common.fields.Fields``, first field at bit 0):

- :func:`track_fields` -- a request to issue (the tracker's input ``i``): the ``l2_req`` fields
  without the tag, followed by the placement fields of ``golden.tma.formats.placement_fields``
  except ``op`` (the placement's op is the request's op);
- :func:`line_fields` -- a READ response for the shared-memory writer (output ``o``): the
  placement without ``op``, then the 128-byte line.
"""

from amaranth import C, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.common.fields import Fields
from golden.tma.formats import (DATA_W, SEQ_W, L2Op, l2_req_fields, l2_resp_fields,
                                placement_fields)
from golden.tma.params import TmaParams
from hw.common.layout import struct_layout
from hw.common.params import reject

__all__ = ["track_fields", "line_fields", "check_params", "TmaTracker"]


def _eq(x, value):
    """``x == value`` for an unsigned ``x`` and a constant (no width-mismatch compare in Verilog)."""
    return ~(x ^ C(value, len(x))).any()


def _scalar_fields(fields, drop=()):
    return [(n, w) for n, w in fields.fields if n not in drop]


def track_fields(p):
    """Tracker input: ``line, sectors, op, dtype, data, be`` (``l2_req`` without ``tag``), then
    ``seq, dst, lane, nbytes, swizzle, mask, mbar`` (the placement without ``op``)."""
    return Fields(*_scalar_fields(l2_req_fields(p), drop=("tag",)),
                  *_scalar_fields(placement_fields(p), drop=("op",)))


def line_fields(p):
    """Tracker -> writer: ``seq, dst, lane, nbytes, swizzle, mask, mbar`` and ``data`` (the
    returned 128-byte line, lane j in bits [8j+7:8j], unrequested sectors arbitrary)."""
    return Fields(*_scalar_fields(placement_fields(p), drop=("op",)), ("data", DATA_W))


def check_params(component, params):
    """``params`` if it is a :class:`TmaParams` (whose constructor has checked every range), else
    a ValueError naming ``params``."""
    if params is None:
        return TmaParams()
    if not isinstance(params, TmaParams):
        reject(component, f"params must be a golden.tma.params.TmaParams, got {params!r}")
    return params


class TmaTracker(wiring.Component):
    """Tag table for the tracked L2 requests of the TMA unit.

    Every request arriving on ``i`` is issued on ``l2_req`` (one per cycle at most, in arrival
    order). A tracked request (op READ, WRITE or RED_*, i.e. anything but PREFETCH) takes a free
    tag, and its placement is written into a TRK_ENTRIES-entry table at that tag; a PREFETCH
    carries tag 0, takes no entry and expects no response. While no tag is free, tracked requests
    stall (``i.ready`` low, TMA-F27).

    Free tags come first from a counter of never-used tags (0, 1, ... after reset), then from a
    FIFO of released tags. A tag answered by an ``l2_resp`` handshake in cycle t enters that FIFO
    at the end of cycle t+1, so a request can carry it again from cycle t+3 on (§4.11 allows
    t+1; the later reuse costs nothing while the table has a free tag). Responses are
    accepted in any order (TMA-F28): the handshake reads the entry (synchronous read), and one
    cycle later a READ's placement and line go out on ``o``, while a WRITE/RED response is
    acknowledged on ``ack_valid``/``ack_seq`` for that one cycle.

    ``outstanding`` counts tracked ``l2_req`` handshakes minus ``l2_resp`` handshakes (TMA-F29).
    ``l2_req`` passes ``i`` through in the same cycle (the tag is chosen combinationally; it stays
    stable while the request waits, since only an issue takes a tag), so a request costs no
    cycle here (TMA-P4). ``i`` must therefore follow the stream rules itself. ``o.valid`` is a
    register; the other combinational paths are ``l2_req.ready`` -> ``i.ready`` and ``o.ready``
    -> ``l2_resp.ready``.

    Parameters
    ----------
    params : TmaParams, optional
        Uses ADDR_W, SMEM_AW and TRK_ENTRIES (TMA-C1, C2, C6: a power of two, 4..256;
        TAG_W = log2 TRK_ENTRIES). Default: the spec's defaults.

    Members
    -------
    i : In(stream.Signature(track_fields(params)))
        Requests to issue, with their placements.
    l2_req : Out(stream.Signature(l2_req_fields(params)))
        TMA-I4.
    l2_resp : In(stream.Signature(l2_resp_fields(params)))
        TMA-I5: one response per tracked request, any order.
    o : Out(stream.Signature(line_fields(params)))
        READ responses: placement and line, in response order, for the shared-memory writer.
    ack_valid : Out(1)
        A WRITE/RED response was processed (one cycle per response).
    ack_seq : Out(SEQ_W)
        Its command sequence number (valid with ``ack_valid``).
    outstanding : Out(TAG_W + 1)
        Tracked requests issued and not yet answered (TMA-I10).
    busy : Out(1)
        A response is held inside, a tag is being released, or a request is outstanding.
    """

    def __init__(self, params=None):
        p = self.p = check_params(self, params)
        self.entries = p.TRK_ENTRIES
        self.tag_w = p.TAG_W
        self.track = track_fields(p)
        self.line = line_fields(p)
        self.placement = placement_fields(p)
        super().__init__({
            "i": In(stream.Signature(struct_layout(self.track))),
            "l2_req": Out(stream.Signature(struct_layout(l2_req_fields(p)))),
            "l2_resp": In(stream.Signature(struct_layout(l2_resp_fields(p)))),
            "o": Out(stream.Signature(struct_layout(self.line))),
            "ack_valid": Out(1),
            "ack_seq": Out(SEQ_W),
            "outstanding": Out(self.tag_w + 1),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n, tw = self.entries, self.tag_w
        i, req, resp, o = self.i, self.l2_req, self.l2_resp, self.o

        # -- free tags: never-used counter, then a FIFO of released tags ----------------------
        fresh = Signal(tw + 1, name="fresh")              # next never-used tag; n = exhausted
        use_fresh = ~fresh[tw]
        m.submodules.free_mem = free_mem = Memory(shape=tw, depth=n, init=[])
        free_wp = free_mem.write_port()
        free_rp = free_mem.read_port(domain="comb")
        free_rd = free_rp.addr                             # registers driven directly, so the
        free_wr = free_wp.addr                             # Verilog has no unread copies
        free_cnt = Signal(tw + 1, name="free_cnt")        # released tags in the FIFO
        tag_avail = use_fresh | free_cnt.any()
        alloc_tag = Mux(use_fresh, fresh[:tw], free_rp.data)

        # -- placement table ------------------------------------------------------------------
        m.submodules.table = table = Memory(shape=struct_layout(self.placement), depth=n, init=[])
        tab_wp = table.write_port()
        tab_rp = table.read_port()                         # synchronous, holds while en = 0

        # -- request side ---------------------------------------------------------------------
        ip = i.payload
        tracked = ~_eq(ip.op, L2Op.PREFETCH)
        issuable = tag_avail | ~tracked
        m.d.comb += [
            req.valid.eq(i.valid & issuable),
            i.ready.eq(req.ready & issuable),
            req.payload.line.eq(ip.line), req.payload.sectors.eq(ip.sectors),
            req.payload.op.eq(ip.op), req.payload.dtype.eq(ip.dtype),
            req.payload.data.eq(ip.data), req.payload.be.eq(ip.be),
            req.payload.tag.eq(Mux(tracked, alloc_tag, C(0, tw))),
        ]
        accept = i.valid & i.ready
        alloc = accept & tracked
        with m.If(alloc):
            with m.If(use_fresh):
                m.d.sync += fresh.eq(fresh + 1)
            with m.Else():
                m.d.sync += free_rd.eq(free_rd + 1)
        m.d.comb += [
            tab_wp.en.eq(alloc), tab_wp.addr.eq(alloc_tag),
            tab_wp.data.seq.eq(ip.seq), tab_wp.data.op.eq(ip.op), tab_wp.data.dst.eq(ip.dst),
            tab_wp.data.lane.eq(ip.lane), tab_wp.data.nbytes.eq(ip.nbytes),
            tab_wp.data.swizzle.eq(ip.swizzle), tab_wp.data.mask.eq(ip.mask),
            tab_wp.data.mbar.eq(ip.mbar),
        ]

        # -- response side: read the entry, then forward (READ) or acknowledge (WRITE/RED) ----
        s1_valid = Signal(name="s1_valid")
        s1_data = Signal(DATA_W, name="s1_data")
        pl = tab_rp.data
        is_read = _eq(pl.op, L2Op.READ)
        s1_free = ~s1_valid | ~is_read | o.ready
        m.d.comb += resp.ready.eq(s1_free)
        resp_hs = resp.valid & resp.ready
        # (the address is only used with en; gating it keeps the port signal a logic output)
        m.d.comb += [tab_rp.addr.eq(Mux(resp_hs, resp.payload.tag, 0)), tab_rp.en.eq(resp_hs)]
        with m.If(s1_free):
            m.d.sync += s1_valid.eq(resp.valid)
        with m.If(resp_hs):
            m.d.sync += s1_data.eq(resp.payload.data)
        m.d.comb += [
            o.valid.eq(s1_valid & is_read),
            o.payload.seq.eq(pl.seq), o.payload.dst.eq(pl.dst), o.payload.lane.eq(pl.lane),
            o.payload.nbytes.eq(pl.nbytes), o.payload.swizzle.eq(pl.swizzle),
            o.payload.mask.eq(pl.mask), o.payload.mbar.eq(pl.mbar), o.payload.data.eq(s1_data),
            self.ack_valid.eq(s1_valid & ~is_read),
            self.ack_seq.eq(pl.seq),
        ]

        # release the answered tag into the FIFO: written in the cycle after the handshake,
        # readable (and reissued at the earliest) in the cycle after that
        m.d.sync += [free_wp.en.eq(resp_hs), free_wp.data.eq(resp.payload.tag)]
        with m.If(free_wp.en):
            m.d.sync += free_wr.eq(free_wr + 1)
        pop = alloc & ~use_fresh
        m.d.sync += free_cnt.eq(free_cnt + free_wp.en - pop)

        # -- outstanding counter (TMA-F29) ----------------------------------------------------
        req_hs_tracked = req.valid & req.ready & ~_eq(req.payload.op, L2Op.PREFETCH)
        m.d.sync += self.outstanding.eq(self.outstanding + req_hs_tracked - resp_hs)
        m.d.comb += self.busy.eq(s1_valid | self.outstanding.any() | free_wp.en)
        return m
