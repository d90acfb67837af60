"""TMA request queue: the command FIFO in front of the descriptor cache (spec tma.md §2.2 ReqQueue;
TMA-F1, F2, TMA-C4; seed ¶85)."""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.tma.formats import SEQ_W, cmd_fields
from golden.tma.params import RANGES, TmaParams
from hw.common.layout import struct_layout
from hw.common.params import check_int
from hw.tma.validate import eqc

__all__ = ["TmaReqQueue", "PeekSignature"]


class PeekSignature(wiring.Signature):
    """A read-only view of a queue entry: ``valid`` and ``payload``, no ``ready``.

    The look-ahead port of :class:`TmaReqQueue`: the consumer may look at the entry behind the
    head but cannot take it; it leaves through the head.

    Parameters
    ----------
    payload_shape : shape-castable
        Shape of the entry.

    Members
    -------
    valid : Out(1)
        The entry exists.
    payload : Out(payload_shape)
        The entry (meaningful only while ``valid``).
    """

    def __init__(self, payload_shape):
        super().__init__({"valid": Out(1), "payload": Out(payload_shape)})


class TmaReqQueue(wiring.Component):
    """FIFO of ``q_depth`` commands, with the head and the entry behind it visible.

    Every ``cmd`` handshake appends the command (TMA-F1); ``cmd.ready`` is high exactly when an
    entry is free (TMA-F2; a registered count, so it never depends on ``head.ready``). Commands
    leave through ``head`` strictly in acceptance order. ``next`` shows the entry behind the
    head (``next.valid`` when the queue holds two or more commands) so that the descriptor cache
    can fetch its descriptor ahead of time (TMA-F6); ``next`` always becomes the head when the
    head leaves.

    A command accepted into an empty queue in cycle t is on ``head`` in cycle t + 1. Entries are
    ``q_depth`` registers of the ``TmaCmd`` layout addressed by one-hot read and write pointers;
    ``head`` and ``next`` are AND-OR selections by the read pointer and its rotation, both stable
    while no command leaves, so ``head`` follows the stream rules and ``next`` does not change
    while ``next.valid`` stays high and the head stays.

    ``head_seq`` is the acceptance index of the head command modulo 2^SEQ_W (the first command
    after reset is 0). Setup numbers the commands it consumes in the same way (``job.seq``,
    ``hw.tma.setup``): since the queue is the only path into Setup and keeps acceptance order,
    the two numberings agree, and Setup needs no sequence number on its input
    (``golden.tma.jobs.setup_in_fields`` is command + descriptor only).

    Parameters
    ----------
    q_depth : int
        Q_DEPTH, 2..16 (TMA-C4).
    addr_w : int
        ADDR_W, 40..64 (TMA-C1): width of ``desc_addr`` and ``gaddr``.
    smem_aw : int
        SMEM_AW, 11..24 (TMA-C2).
    id_w : int
        ID_W, 1..16 (TMA-C3).
    nb_w : int
        NB_W, 1..28 (TMA-C7).

    Members
    -------
    cmd : In(stream.Signature(TmaCmd layout))
        Commands from the SM (TMA-I2, ``golden.tma.formats.cmd_fields``).
    head : Out(stream.Signature(TmaCmd layout))
        The oldest command; taken by the descriptor cache when it moves on to Setup.
    next : Out(PeekSignature(TmaCmd layout))
        The command behind the head (look-ahead).
    head_seq : Out(SEQ_W)
        Acceptance index of the head command modulo 2^SEQ_W.
    """

    def __init__(self, q_depth=4, addr_w=64, smem_aw=18, id_w=8, nb_w=20):
        check_int(self, "q_depth", q_depth, *RANGES["Q_DEPTH"])
        check_int(self, "addr_w", addr_w, *RANGES["ADDR_W"])
        check_int(self, "smem_aw", smem_aw, *RANGES["SMEM_AW"])
        check_int(self, "id_w", id_w, *RANGES["ID_W"])
        check_int(self, "nb_w", nb_w, *RANGES["NB_W"])
        self.depth = q_depth
        self.p = TmaParams(ADDR_W=addr_w, SMEM_AW=smem_aw, ID_W=id_w, NB_W=nb_w, Q_DEPTH=q_depth)
        self.cmd_layout = struct_layout(cmd_fields(self.p))
        super().__init__({
            "cmd": In(stream.Signature(self.cmd_layout)),
            "head": Out(stream.Signature(self.cmd_layout)),
            "next": Out(PeekSignature(self.cmd_layout)),
            "head_seq": Out(SEQ_W),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        width = self.cmd_layout.size
        entries = [Signal(width, name=f"entry{k}") for k in range(depth)]
        # one-hot pointers: the head entry, and the entry the next command is written to
        rsel = Signal(depth, init=1)
        wsel = Signal(depth, init=1)
        count = Signal(range(depth + 1))

        def rotate(sel):                    # the one-hot pointer advanced by one entry
            return Cat(sel[depth - 1], sel[:depth - 1])

        def select(sel):                    # AND-OR read of the entry chosen by ``sel``
            out = C(0, width)
            for k in range(depth):
                out = out | Mux(sel[k], entries[k], 0)
            return out

        push = self.cmd.valid & self.cmd.ready
        pop = self.head.valid & self.head.ready
        m.d.comb += [
            self.cmd.ready.eq(~eqc(count, depth)),
            self.head.valid.eq(count.any()),
            self.head.payload.eq(select(rsel)),
            self.next.valid.eq(count[1:].any()),
            self.next.payload.eq(select(rotate(rsel))),
        ]
        with m.If(push):
            m.d.sync += wsel.eq(rotate(wsel))
            for k in range(depth):
                with m.If(wsel[k]):
                    m.d.sync += entries[k].eq(self.cmd.payload)
        with m.If(pop):
            m.d.sync += [rsel.eq(rotate(rsel)), self.head_seq.eq(self.head_seq + 1)]
        with m.If(push & ~pop):
            m.d.sync += count.eq(count + 1)
        with m.Elif(pop & ~push):
            m.d.sync += count.eq(count - 1)
        return m
