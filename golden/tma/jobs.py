"""Internal RTL payloads of the TMA front end and their golden values (spec tma.md §2.2 Setup and
ReqGen, §4.5, §4.7, §4.8 fill; TMA-F9, F12..F15, F22..F26, F45..F50).

These layouts are not ports of the unit; they connect its modules and are shared, like every
format, by hardware (``hw.tma.setup``, ``hw.tma.reqgen``, the tracker and the smem writer), the
golden model and the testbenches. Four payloads:

``setup_in``  Setup input: the command (``cmd_fields``) and, for tensor ops, its 128-byte
              descriptor (``DESC_FIELDS``; don't care for block and control ops).
``job``       Setup -> ReqGen: one accepted command, decoded and precomputed (§4.5, §4.6). ReqGen
              walks rows (tile rows, im2col pixels) with an odometer of four levels and splits
              each row's in-bounds span at 128-byte lines; everything it needs per row is an add
              or a compare on these fields.
``piece``     ReqGen -> Tracker / StorePath: one request (§4.7). Its low bits are exactly a
              ``placement_fields`` word (what a tracker entry keeps), followed by the L2 fields.
``fill``      ReqGen -> SmemWriter: one maximal run of consecutive OOB dense bytes of a
              TENSOR_LOAD, to be written with the fill pattern (TMA-F22, F23).
``fin``       ReqGen -> Completion: one per job, after its last piece and fill, with the number of
              tracked requests and the barrier bytes the command will credit.

Golden functions: :func:`golden_job` (what Setup must produce for an accepted command),
:func:`golden_pieces`, :func:`golden_fills`, :func:`golden_fin` (what ReqGen must produce for that
job). They reuse ``geometry``, ``rows`` (``tile_rows`` / ``im2col_rows``), ``row_pieces`` and
``block_pieces``; nothing of the traversal or the line split is re-derived here.

The odometer levels k = 0..3 of a job are the outer dimensions 1..4 in tile mode; in im2col mode
(S = rank - 2 spatial dimensions) levels 0..S-1 are the spatial dimensions W, H, D, level S is the
image index n and the levels above it are unused. A level holds an exact coordinate: tile c_d,
im2col the *pixel* coordinate pos_s + off_s (so the in-bounds test is ``0 <= c < size`` in both
modes) and n.
"""

from golden.common.fields import Fields
from golden.tma.formats import (BLOCK, BLOCK_OPS, CONTROL_OPS, DESC_FIELDS, ESIZE, LINE, SEQ_W,
                                CmdOp, DType, L2Op, Mode, Swizzle, cmd_fields, l2_red_op,
                                placement_fields)
from golden.tma.geometry import geometry
from golden.tma.im2col import im2col_box
from golden.tma.l2req import block_pieces, pieces as split_pieces, row_pieces
from golden.tma.tile import fill_bytes, rows as tensor_rows

__all__ = ["OUTER", "SPATIAL", "ROW_W", "COORD_W", "POS_W", "RESTART_W", "PX_W", "PIECE_S2S",
           "TRACKED_OPS", "span_w", "setup_in_fields",
           "job_fields", "piece_fields", "fill_fields", "fin_fields", "es_log2", "job_l2op",
           "replicate_pattern", "golden_job", "job_key", "golden_pieces", "golden_fills",
           "golden_fin"]

OUTER = 4                 # odometer levels: tile dimensions 1..4; im2col W, (H, (D,)) n
SPATIAL = 3               # im2col spatial dimensions at most (rank 5: W, H, D)
ROW_W = 12                # rows are at most 256 elements * 8 = 2048 bytes (box[0], range_c)
COORD_W = 33              # start coordinate of a level: tile coord (32-bit signed); im2col pixel
                          #   pos + off in [-2^15, 2^31 + 2^16) or n (32-bit signed)
POS_W = 34                # walked coordinates (§4.5 Arithmetic): below 2^32 + 2^17 in magnitude
RESTART_W = 18            # im2col restart pixel lo_s + off_s in [-2^15, 2^15 + 2^16)
PX_W = 10                 # im2col pixel index 0 .. range_ndhw - 1 <= 1023
PIECE_S2S = 3             # internal piece op (an unused L2Op code): BLOCK_S2S smem->smem copy piece
TRACKED_OPS = frozenset({L2Op.READ, L2Op.WRITE} | {L2Op(8 + k) for k in range(8)})


def span_w(p):
    """Width of a row's byte counts: tile rows (< 2^12) or a block op's 16 * num_blocks."""
    return max(ROW_W, p.NB_W + 4)


def setup_in_fields(p):
    """Setup input: ``cmd`` (``cmd_fields(p)``) at bit 0, then ``desc`` (``DESC_FIELDS``, byte j in
    bits [8j+7:8j] of the field, as on ``desc_rd_resp``)."""
    return Fields(("cmd", cmd_fields(p).width), ("desc", DESC_FIELDS.width))


def job_fields(p):
    """Setup -> ReqGen job (one accepted command), first field at bit 0.

    ``seq``        acceptance index of the command mod 2^SEQ_W (Setup counts every command it
                   consumes, accepted or rejected);
    ``id``         the command's ``id`` (Completion's ``done``);
    ``op``         CmdOp;
    ``gen``        1 if ReqGen walks rows (tensor ops, block ops with num_blocks > 0); 0 for
                   WAIT_ALL, DESC_INVAL and block NOPs (ReqGen emits only ``fin``);
    ``mode``       descriptor mode (tensor ops; 0 otherwise);
    ``rank``, ``es_log2``  descriptor rank and log2(esize) (tensor ops, else 0);
    ``l2op``       the pieces' op: READ (TENSOR_LOAD, BLOCK_G2S), WRITE (TENSOR_STORE, BLOCK_S2G),
                   RED_<red_op> (TENSOR_RED, BLOCK_RED), PREFETCH (TENSOR_PREFETCH, BLOCK_PREFETCH),
                   ``PIECE_S2S`` (BLOCK_S2S); ``dtype`` the RED element type (else 0);
    ``fill``       1 for TENSOR_LOAD: OOB bytes produce ``fill`` jobs;
    ``base``       global address of the first row's span: ``global_address + max(coord[0], 0) *
                   esize + sum_{d>=1} coord[d] * tensor_stride[d-1]`` mod 2^ADDR_W (tile; im2col
                   the same with the offsets added, ``+ sum_s off_s * tensor_stride[s]``: the
                   first pixel's channel ``max(coord[0], 0)``); ``gaddr`` (block); ``smem_addr``
                   (BLOCK_S2S: the source, split at 128-byte smem rows);
    ``base_lvl[k]`` (tensor ops) the start address of odometer level k+1: ``base`` with levels
                   0..k moved from their start to their restart coordinate, i.e. ``base +
                   sum_{s<=k, s<S} (lo_s - pos_s) * tensor_stride[s]`` mod 2^ADDR_W (im2col);
                   ``base`` in tile mode (a tile level restarts where it started); 0 for block ops;
    ``span_bytes`` in-bounds bytes of a row along dimension 0 (0: every row is OOB); block ops
                   16 * num_blocks; a row is n[0] (tile) or ``range_c`` (im2col) elements;
    ``span_off``   dense offset of the span inside its row (0 when ``span_bytes`` = 0);
    ``tail_bytes`` OOB bytes after the span (0 when ``span_bytes`` = 0);
    ``row_bytes``  bytes of a row, n[0] * esize or range_c * esize (block ops: 16 * num_blocks);
    ``last_i[k]``  tile: n[k+1] - 1, visits of dimension k+1 minus one (0 for dimensions >= rank;
                   0 in im2col mode);
    ``last_px``    im2col: range_ndhw - 1 (the walk ends after that pixel); 0 otherwise;
    ``ts[k]``      step of level k: tile ts[k+1]; im2col ts[s+1] for a spatial level, 1 for the
                   n level (1 for unused levels);
    ``coord[k]``   start coordinate of level k (COORD_W bits, signed): tile coord[k+1]; im2col the
                   first pixel coord[s+1] + off_s of a spatial level, n = coord[rank-1] for the n
                   level (0 for unused levels);
    ``size[k]``    tensor_size[k+1], the level's in-bounds limit (im2col: tensor_size[s+1], and N
                   = tensor_size[rank-1] for the n level; 1 for unused levels);
    ``step[k]``    ts[k] * the level's pitch mod 2^ADDR_W (tile ts[k+1] * tensor_stride[k]; im2col
                   ts[s+1] * tensor_stride[s], the n level tensor_stride[rank-2]; 0 when unused);
    ``restart[s]`` im2col spatial level s < S: lo_s + off_s, the pixel coordinate it restarts at
                   (RESTART_W bits, signed; 0 otherwise);
    ``wrap_at[s]`` im2col spatial level s < S: hi_s + off_s - ts[s+1] (POS_W bits, signed): a
                   level whose pixel coordinate is above it restarts and carries at the next step
                   (base position + ts > hi_s); 0 otherwise;
    ``smem_addr``  the command's smem_addr (fill destinations: smem_addr + dense);
    ``dst0``       placement of the first span byte: smem_addr + span_off (BLOCK_S2S: smem_dst);
                   a piece's ``dst`` is dst0 + row dense offset + offset in the span;
    ``swizzle``    descriptor swizzle (block ops NONE);
    ``mask``       ``cta_mask`` if ``mcast`` else ``1 << cta_id``; ``cta`` = ``cta_id``;
    ``mbar``       ``mbar_addr``;
    ``pattern``    the OOB fill value (ZERO, CONST, NAN of §4.8) replicated over 8 bytes: smem byte
                   A of the fill gets byte (A mod 8) of it (tensor ops, else 0);
    ``tx``         bytes credited per destination CTA: box bytes (TENSOR_LOAD), 16 * num_blocks
                   (BLOCK_G2S, BLOCK_S2S), else 0.

    Every field is exact for every job with ``gen`` = 1; the walk fields (``base`` ..
    ``wrap_at``, ``dst0``, ``pattern``) are don't-care when ``gen`` = 0, and :func:`job_key`
    masks them there.
    """
    aw, sw = p.ADDR_W, p.SMEM_AW
    return Fields(
        ("seq", SEQ_W), ("id", p.ID_W), ("op", 4), ("gen", 1), ("mode", 1), ("rank", 3),
        ("es_log2", 2), ("l2op", 4), ("dtype", 4), ("fill", 1),
        ("base", aw), ("base_lvl", aw, "unsigned", OUTER - 1),
        ("span_bytes", span_w(p)), ("span_off", ROW_W), ("tail_bytes", ROW_W),
        ("row_bytes", span_w(p)),
        ("last_i", 8, "unsigned", OUTER), ("last_px", PX_W), ("ts", 4, "unsigned", OUTER),
        ("coord", COORD_W, "signed", OUTER), ("size", 32, "unsigned", OUTER),
        ("step", aw, "unsigned", OUTER),
        ("restart", RESTART_W, "signed", SPATIAL), ("wrap_at", POS_W, "signed", SPATIAL),
        ("smem_addr", sw), ("dst0", sw), ("swizzle", 2), ("mask", 16), ("cta", 4), ("mbar", sw),
        ("pattern", 64), ("tx", sw + 1),
    )


def piece_fields(p):
    """ReqGen -> Tracker piece: the ``placement_fields(p)`` word at bit 0 (``seq``, ``op`` =
    L2Op or ``PIECE_S2S``, ``dst`` = CTA-relative smem address of the piece's first byte before
    swizzle (destination of a load, source of a store or reduction), ``lane``, ``nbytes``,
    ``swizzle``, ``mask``, ``mbar``), then ``line`` (address >> 7; for ``PIECE_S2S`` the source
    smem row), ``sectors`` (0xF for PREFETCH), ``dtype`` (RED only) and ``cta`` (the source CTA of
    smem reads: stores, reductions, S2G, S2S)."""
    pl = placement_fields(p)
    return Fields(*[(n, *_shape(pl, n)) for n in pl.names],
                  ("line", p.ADDR_W - 7), ("sectors", 4), ("dtype", 4), ("cta", 4))


def fill_fields(p):
    """ReqGen -> SmemWriter fill job: write ``nbytes`` bytes (1..2^SMEM_AW) of fill from
    CTA-relative dense address ``dst`` (= smem_addr + dense offset, before swizzle) upward; smem
    byte A (before swizzle) gets byte (A mod 8) of ``pattern``; then apply ``swizzle``, write every
    CTA of ``mask`` and credit the bytes to barrier ``mbar`` (TMA-F22, F35). ``seq`` is the owning
    command. A fill job is a maximal run: consecutive OOB bytes of the box, across rows, form one
    job, broken only by in-bounds bytes."""
    sw = p.SMEM_AW
    return Fields(("seq", SEQ_W), ("dst", sw), ("nbytes", sw + 1), ("pattern", 64),
                  ("swizzle", 2), ("mask", 16), ("mbar", sw))


def fin_fields(p):
    """ReqGen -> Completion, one per job after its last piece and fill: ``seq``, ``op`` (CmdOp),
    ``tracked`` (pieces that take a tracker tag: READ, WRITE, RED) and ``tx`` (the job's ``tx``)."""
    sw = p.SMEM_AW
    return Fields(("seq", SEQ_W), ("op", 4), ("tracked", sw + 1), ("tx", sw + 1))


def _shape(fields, name):
    width, signed, count = fields.shapes[name]
    return (width,) if not signed and count is None else (width, "signed" if signed else "unsigned", count)


# ---------------------------------------------------------------------------------------------
# Golden values
def es_log2(dtype):
    """log2(esize) of a descriptor or BLOCK_RED dtype (0 for reserved codes)."""
    try:
        return ESIZE[DType(dtype)].bit_length() - 1
    except ValueError:
        return 0


def job_l2op(cmd):
    """The L2Op (or ``PIECE_S2S``) of a command's pieces."""
    op = cmd.op
    if op in (CmdOp.TENSOR_LOAD, CmdOp.BLOCK_G2S):
        return L2Op.READ
    if op in (CmdOp.TENSOR_STORE, CmdOp.BLOCK_S2G):
        return L2Op.WRITE
    if op in (CmdOp.TENSOR_RED, CmdOp.BLOCK_RED):
        return l2_red_op(cmd.red_op)
    if op in (CmdOp.TENSOR_PREFETCH, CmdOp.BLOCK_PREFETCH):
        return L2Op.PREFETCH
    if op == CmdOp.BLOCK_S2S:
        return PIECE_S2S
    return L2Op.READ


def replicate_pattern(fill):
    """An esize-byte fill value repeated over 8 bytes, as an integer (byte 0 lowest)."""
    return int.from_bytes(bytes(fill) * (8 // len(fill)), "little")


def _mask(n):
    return (1 << n) - 1


def golden_job(cmd, d, p, seq):
    """The job Setup emits for accepted command ``cmd`` (descriptor ``d``, None for non-tensor
    ops) with acceptance index ``seq``: a dict of ``job_fields(p)`` values."""
    op = cmd.op
    aw, sw = p.ADDR_W, p.SMEM_AW
    tensor = op in (CmdOp.TENSOR_LOAD, CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED, CmdOp.TENSOR_PREFETCH)
    nb = cmd.num_blocks
    gen = int(tensor or (op in BLOCK_OPS and nb > 0))
    if op == CmdOp.TENSOR_RED:
        dtype = d.dtype
    elif op == CmdOp.BLOCK_RED:
        dtype = cmd.dtype
    else:
        dtype = 0
    job = dict(seq=seq % (1 << SEQ_W), id=cmd.id, op=op, gen=gen, mode=0, rank=0, es_log2=0,
               l2op=int(job_l2op(cmd)), dtype=dtype, fill=int(op == CmdOp.TENSOR_LOAD),
               base=0, base_lvl=[0] * (OUTER - 1), span_bytes=0, span_off=0, tail_bytes=0,
               row_bytes=0, last_i=[0] * OUTER, last_px=0, ts=[1] * OUTER, coord=[0] * OUTER,
               size=[1] * OUTER, step=[0] * OUTER, restart=[0] * SPATIAL, wrap_at=[0] * SPATIAL,
               smem_addr=cmd.smem_addr, dst0=cmd.smem_addr, swizzle=0, mask=cmd.dest_mask,
               cta=cmd.cta_id, mbar=cmd.mbar_addr, pattern=0, tx=0)
    if op in CONTROL_OPS:
        return job
    if not tensor:
        n = BLOCK * nb
        job.update(span_bytes=n, row_bytes=n,
                   tx=n if op in (CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2S) else 0)
        if op == CmdOp.BLOCK_S2S:
            job.update(base=cmd.smem_addr, dst0=cmd.smem_dst)
        else:
            job.update(base=cmd.gaddr)
        return job
    g = geometry(d)
    es, r = g.esize, g.rank
    space = 1 << aw
    job.update(mode=d.mode, rank=r, es_log2=es.bit_length() - 1, swizzle=d.swizzle,
               pattern=replicate_pattern(fill_bytes(d, p.NAN_PATTERN)),
               tx=g.box_bytes if op == CmdOp.TENSOR_LOAD else 0)
    co = [cmd.coord[k] if k < r else 0 for k in range(5)]
    # dimension 0 (tile) / channels (im2col): the in-bounds element interval of every row
    n0 = g.n[0] if d.mode == Mode.TILE else d.range_c
    lo0 = max(0, -co[0])
    span = max(0, min(n0, g.size[0] - co[0]) - lo0)
    base = d.global_address + max(co[0], 0) * es + sum(co[k] * g.pitch[k] for k in range(1, r))
    off0 = lo0 * es if span else 0
    job.update(span_bytes=span * es, span_off=off0,
               tail_bytes=(n0 - lo0 - span) * es if span else 0, row_bytes=n0 * es,
               size=[g.size[k] for k in range(1, 5)],
               dst0=(cmd.smem_addr + off0) & _mask(sw))
    if d.mode == Mode.TILE:
        job.update(base=base % space, base_lvl=[base % space] * (OUTER - 1),
                   last_i=[g.n[k] - 1 for k in range(1, 5)], ts=[g.ts[k] for k in range(1, 5)],
                   coord=co[1:],
                   step=[(g.ts[k] * g.pitch[k]) % space if k < r else 0 for k in range(1, 5)])
        return job
    # im2col (§4.6): levels 0..S-1 spatial (pixel coordinates), level S the image index n
    b = im2col_box(d, cmd)
    S, off, lo, hi, pos = b.S, b.off, b.lo, b.hi, b.pos
    tsd = list(b.ts)
    base += sum(off[s] * g.pitch[s + 1] for s in range(S))
    lvl, acc = [], base
    for k in range(OUTER - 1):
        if k < S:
            acc += (lo[k] - pos[k]) * g.pitch[k + 1]
        lvl.append(acc % space)
    pad = OUTER - S - 1
    job.update(base=base % space, base_lvl=lvl, last_px=d.range_ndhw - 1,
               ts=tsd + [1] * (OUTER - S),
               coord=[pos[s] + off[s] for s in range(S)] + [cmd.coord[r - 1]] + [0] * pad,
               step=[(tsd[s] * g.pitch[s + 1]) % space for s in range(S)]
               + [g.pitch[r - 1] % space] + [0] * pad,
               restart=[lo[s] + off[s] for s in range(S)] + [0] * (SPATIAL - S),
               wrap_at=[hi[s] + off[s] - tsd[s] for s in range(S)] + [0] * (SPATIAL - S))
    return job


_WALK = ("base", "base_lvl", "span_bytes", "span_off", "tail_bytes", "row_bytes", "last_i",
         "last_px", "ts", "coord", "size", "step", "restart", "wrap_at", "dst0", "pattern")


def job_key(job):
    """A job with its don't-care fields zeroed (the walk, smem and barrier fields of jobs with
    ``gen`` = 0), for comparing RTL and golden jobs."""
    out = {k: (list(v) if isinstance(v, (list, tuple)) else int(v)) for k, v in job.items()}
    if not out["gen"]:
        for k in _WALK + ("smem_addr", "swizzle", "mask", "cta", "mbar", "mode", "rank",
                          "es_log2", "dtype", "l2op"):
            out[k] = [0] * len(out[k]) if isinstance(out[k], list) else 0
    return out


def _job_pieces(cmd, d, p):
    """Golden §4.7 pieces of an accepted command, in request order (before prefetch dedup)."""
    op = cmd.op
    if op in CONTROL_OPS or (op in BLOCK_OPS and cmd.num_blocks == 0):
        return []
    if op == CmdOp.BLOCK_S2S:
        # smem -> smem: the source range split at 128-byte smem rows (smem addresses never wrap)
        return split_pieces(cmd.smem_addr, BLOCK * cmd.num_blocks, 0, p.SMEM_AW + 1)
    if op in BLOCK_OPS:
        return block_pieces(cmd.gaddr, BLOCK * cmd.num_blocks, p.ADDR_W)
    return row_pieces(tensor_rows(d, cmd, p.ADDR_W), p.ADDR_W)


def golden_pieces(cmd, d, p, seq):
    """What ReqGen emits on ``piece`` for the accepted command: dicts of ``piece_fields(p)``, in
    order. PREFETCH pieces carry sectors 0xF and a piece on the same line as the command's
    previous one is dropped (TMA-F45)."""
    job = golden_job(cmd, d, p, seq)
    l2op = job["l2op"]
    dst_base = cmd.smem_dst if cmd.op == CmdOp.BLOCK_S2S else cmd.smem_addr
    out = []
    last_line = None
    for pc in _job_pieces(cmd, d, p):
        if l2op == L2Op.PREFETCH:
            if pc.line == last_line:
                continue
            last_line = pc.line
        out.append(dict(seq=job["seq"], op=l2op, dst=(dst_base + pc.dense) & _mask(p.SMEM_AW),
                        lane=pc.lane, nbytes=pc.nbytes, swizzle=job["swizzle"], mask=job["mask"],
                        mbar=job["mbar"], line=pc.line,
                        sectors=0xF if l2op == L2Op.PREFETCH else pc.sectors,
                        dtype=job["dtype"], cta=cmd.cta_id))
    return out


def golden_fills(cmd, d, p, seq):
    """What ReqGen emits on ``fill`` for the accepted command: the maximal runs of OOB dense
    bytes of a TENSOR_LOAD (tile or im2col), as dicts of ``fill_fields(p)``, in dense order."""
    if cmd.op != CmdOp.TENSOR_LOAD:
        return []
    job = golden_job(cmd, d, p, seq)
    runs = []
    for row in tensor_rows(d, cmd, p.ADDR_W):
        for lo, hi in row.oob_ranges():
            if runs and runs[-1][1] == lo:
                runs[-1][1] = hi
            else:
                runs.append([lo, hi])
    return [dict(seq=job["seq"], dst=(cmd.smem_addr + lo) & _mask(p.SMEM_AW), nbytes=hi - lo,
                 pattern=job["pattern"], swizzle=job["swizzle"], mask=job["mask"],
                 mbar=job["mbar"]) for lo, hi in runs]


def golden_fin(cmd, d, p, seq):
    """The ``fin`` record of the accepted command (dict of ``fin_fields(p)``)."""
    job = golden_job(cmd, d, p, seq)
    tracked = 0
    if job["gen"]:
        tracked = sum(1 for pc in golden_pieces(cmd, d, p, seq) if pc["op"] in TRACKED_OPS)
    return dict(seq=job["seq"], op=cmd.op, tracked=tracked, tx=job["tx"])


assert LINE == 128 and Swizzle.NONE == 0
