"""TMA Setup: decode, validate and precompute one command per cycle (spec tma.md §2.2 Setup, §3.4,
§4.2, §4.4, §4.5, §4.6; TMA-F9..F11, F13, F15..F20, TMA-E1, E2, E4..E6)."""

from amaranth import C, Cat, Module, Mux, Signal, signed
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.tma.formats import (DESC_FIELDS, ESIZE, FLOAT_DTYPES, SEQ_W, CmdOp, ErrCode, L2Op,
                                OobFill, cmd_fields, err_fields)
from golden.tma.jobs import (COORD_W, OUTER, PIECE_S2S, POS_W, PX_W, RESTART_W, ROW_W, SPATIAL,
                             job_fields, replicate_pattern)
from golden.tma.params import RANGES, TmaParams
from hw.common.layout import struct_layout
from hw.common.params import check_int, reject
from hw.tma.validate import (decode, eqc, es_of, first_code, footprint_violation, in_set,
                             lt, rule_conditions, shl_small)

__all__ = ["TmaSetup", "setup_in_layout"]

# ceil(x / t) = ((x + t - 1) * _RECIP[t]) >> _RECIP_K, exact for x <= 256 (checked below)
_RECIP_K = 12
_RECIP = {t: -(-(1 << _RECIP_K) // t) for t in range(1, 9)}
assert all(((x + t - 1) * _RECIP[t]) >> _RECIP_K == -(-x // t)
           for t in range(1, 9) for x in range(257))


def setup_in_layout(p):
    """The Setup input payload: ``cmd`` then ``desc`` (``golden.tma.jobs.setup_in_fields``)."""
    return data.StructLayout({"cmd": struct_layout(cmd_fields(p)),
                              "desc": struct_layout(DESC_FIELDS)})


def _rep(value, times):
    return Cat(*([value] * times))


class TmaSetup(wiring.Component):
    """Setup stage of the TMA unit: one (command, descriptor) in, one ``job`` or one ``err`` out.

    Two pipeline stages. Stage 1 (on the input transfer) evaluates every rule of §3.4 except the
    tensor footprint rule (``hw.tma.validate``), decodes the descriptor (§4.2: only fields of
    dimensions below the rank are read, reserved bits never, TMA-E6), divides the box by the
    traversal strides (n[d] = ceil(box[d] / ts[d]) by reciprocal multiplication), finds the
    in-bounds interval of dimension 0 in exact 34-bit signed arithmetic (TMA-F15), forms
    ``ts[d] * tensor_stride[d-1]`` and the partial products ``coord[d] * tensor_stride[d-1]``
    (two 32 x 20-bit products per dimension) and the OOB fill pattern. For im2col (§4.6) it
    also unpacks the offsets (rank 3: 16 bits; 4: 2 x 8; 5: 3 x 5), forms per spatial dimension
    the first pixel coordinate ``coord[s+1] + off_s``, the restart pixel ``lo_s + off_s``, the
    wrap threshold ``hi_s + off_s - ts[s+1]`` (exact, 34-bit signed: TMA-F15, F17, F19, F20) and
    the small products ``off_s * pitch_s`` and ``lo_s * pitch_s`` (at most 16 x 40 bits); the
    image index n becomes the odometer level above the spatial ones, stepping by 1. Stage 2
    multiplies the visit counts into the box size, evaluates rule 0x1E, sums the start address
    modulo 2^ADDR_W (TMA-F13) and, for im2col, the start address of every odometer level
    (``base_lvl``: levels below it at their restart positions), picks the first violated code in
    table order (TMA-E2) and loads the ``job`` or ``err`` output register. The per-pixel walk in
    ReqGen then needs no multiplier.

    A command enters in the cycle of its ``i`` transfer and its job (or error) is valid two
    cycles later. A rejected command produces exactly one ``err{id, code}`` and no job (TMA-E1);
    an accepted one exactly one job (see ``golden.tma.jobs.job_fields``; ``golden_job`` is its
    golden value). Every command consumed, accepted or not, takes the next ``seq`` (mod 2^SEQ_W).
    While an output register is full and not read, the command in stage 2 waits and ``i.ready``
    is low: back-pressure on ``err`` or ``job`` stalls setup without loss or reordering (TMA-E4).
    Setup of command k+1 proceeds while ReqGen still holds job k (TMA-F11): up to two further
    commands sit in the pipeline.

    Parameters
    ----------
    addr_w : int
        Global address width ADDR_W, 40..64 (TMA-C1).
    smem_aw : int
        smem address width SMEM_AW, 11..24 (TMA-C2).
    id_w : int
        Command id width ID_W, 1..16 (TMA-C3).
    nb_w : int
        ``num_blocks`` width NB_W, 1..28 (TMA-C7).
    nan_pattern : mapping, optional
        NAN_PATTERN (TMA-C9): float dtype -> esize-byte value; default canonical NaNs.

    Members
    -------
    i : In(stream.Signature(setup_in_layout))
        ``cmd`` (``TmaCmd``) and ``desc`` (the 128-byte descriptor; ignored for block and control
        ops).
    job : Out(stream.Signature(job layout))
        Accepted commands, in order (``golden.tma.jobs.job_fields``).
    err : Out(stream.Signature(err layout))
        ``{id, code}`` of rejected commands (TMA-I9).
    busy : Out(1)
        A command is in stage 1 or an output register (the unit's ``idle``, TMA-F38).
    """

    def __init__(self, addr_w=64, smem_aw=18, id_w=8, nb_w=20, nan_pattern=None):
        check_int(self, "addr_w", addr_w, *RANGES["ADDR_W"])
        check_int(self, "smem_aw", smem_aw, *RANGES["SMEM_AW"])
        check_int(self, "id_w", id_w, *RANGES["ID_W"])
        check_int(self, "nb_w", nb_w, *RANGES["NB_W"])
        try:
            self.p = TmaParams(ADDR_W=addr_w, SMEM_AW=smem_aw, ID_W=id_w, NB_W=nb_w,
                               NAN_PATTERN=nan_pattern)
        except ValueError as exc:
            reject(self, f"nan_pattern: {exc}")
        self.job_layout = struct_layout(job_fields(self.p))
        super().__init__({
            "i": In(stream.Signature(setup_in_layout(self.p))),
            "job": Out(stream.Signature(self.job_layout)),
            "err": Out(stream.Signature(struct_layout(err_fields(self.p)))),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.p
        aw, sw = p.ADDR_W, p.SMEM_AW
        c = self.i.payload.cmd
        d = self.i.payload.desc
        take = self.i.valid & self.i.ready
        loads = []

        def reg(value, name, shape=None):
            sig = Signal(shape if shape is not None else value.shape(), name=f"s1_{name}")
            loads.append(sig.eq(value))
            return sig

        # ---------------------------------------------------------------- stage 1 (comb on i)
        seq = Signal(SEQ_W)
        with m.If(take):
            m.d.sync += seq.eq(seq + 1)
        conds = rule_conditions(c, d, p)
        codes = [int(k) for k in ErrCode if k]
        rules = reg(Cat(*(conds[k] for k in codes)), "rules")
        tensor_fp = reg(conds["tensor_fp"], "tensor_fp")
        cmd1 = {name: reg(getattr(c, name), name, len(getattr(c, name)))
                for name in ("id", "op", "red_op", "dtype", "gaddr", "num_blocks", "smem_addr",
                             "smem_dst", "mbar_addr", "cta_id", "mcast", "cta_mask")}
        seq1 = reg(seq, "seq")
        r = d.rank
        es = es_of(d.dtype)
        es1 = reg(es, "es", 2)
        mode1 = reg(d.mode, "mode", 1)
        rank1 = reg(r, "rank", 3)
        dtype1 = reg(d.dtype, "dtype_d", 4)
        swz1 = reg(d.swizzle, "swizzle", 2)
        ga1 = reg(d.global_address[:aw], "ga", aw)
        rc1 = reg(d.range_c[:9], "range_c", 9)
        rn1 = reg(d.range_ndhw[:11], "range_ndhw", 11)

        # im2col (§4.6): offsets, and which odometer level is spatial / the image index n
        im2col = d.mode
        ioff = c.im2col_off
        r3, r4 = eqc(r, 3), eqc(r, 4)
        offs = [Mux(r3, ioff[:16], Mux(r4, ioff[:8], ioff[:5])),      # w: 16 / 8 / 5 bits
                Mux(r4, ioff[8:16], ioff[5:10]),                      # h: 8 / 5 bits
                ioff[10:15]]                                          # d: 5 bits (bit 15 ignored)
        # corners as used by the products: rank 3 16 bits, rank 4 8 bits, rank 5 5 bits (rule
        # 0x19 holds for every accepted command, so the narrower views are exact)
        lo_narrow = [d.base_corner[0], d.base_corner[1][:8].as_signed(),
                     d.base_corner[2][:5].as_signed()]
        sp = [im2col & lt(k + 2, r) for k in range(OUTER)]            # level k is spatial
        nlev = [im2col & eqc(r, k + 2) for k in range(OUTER)]         # level k is n
        sp1 = reg(Cat(*sp[:SPATIAL]), "spatial", SPATIAL)
        lastpx1 = reg((d.range_ndhw - 1)[:PX_W], "last_px", PX_W)

        # dimension 0 (tile) / channels (im2col): in-bounds element interval [lo0, hi0) of the
        # row, exact (TMA-F15)
        co0 = c.coord[0]
        n0 = Mux(im2col, d.range_c[:9], d.box_size[0][:9])
        neg0 = co0[-1]
        lo0 = Mux(neg0, 0 - co0, 0)                        # max(0, -coord[0])
        rem0 = d.tensor_size[0] - co0                      # signed(34), exact
        hi0 = Mux(lt(rem0, n0), rem0, n0)
        spn = hi0 - lo0
        span_e = Mux(spn[-1] | ~spn.any(), 0, spn)[:9]
        has = span_e.any()
        lo0s = lo0[:9]
        n0_1 = reg(n0, "n0", 9)
        span1 = reg(shl_small(span_e, es, 3, ROW_W), "span_bytes", ROW_W)
        off1 = reg(Mux(has, shl_small(lo0s, es, 3, ROW_W), 0), "span_off", ROW_W)
        tail1 = reg(Mux(has, shl_small((n0 - lo0s - span_e)[:9], es, 3, ROW_W), 0),
                    "tail_bytes", ROW_W)
        row1 = reg(shl_small(n0, es, 3, ROW_W), "row_bytes", ROW_W)
        a0off1 = reg(shl_small(Mux(neg0, 0, co0[:31]), es, 3, 34), "a0off", 34)

        # dimensions 1..4 (odometer levels 0..3): visit counts, strides, partial products of the
        # start address; im2col: pixel coordinates, restart and wrap values, offset products
        nd1, ts1, co1, sz1, step1, pplo1, pphi1 = [], [], [], [], [], [], []
        rst1, wrap1, opp1, lpp1 = [], [], [], []
        for k in range(OUTER):
            dim = k + 1
            used = lt(dim, r)
            b = d.box_size[dim][:9]
            t = d.traversal_stride[dim][:4]
            n = b
            for tv, recip in _RECIP.items():                # ceil(b / t), t = 1..8
                n = Mux(eqc(t, tv), (((b + (tv - 1)) * recip) >> _RECIP_K)[:9], n)
            cd = Mux(used, c.coord[dim], 0)
            pitch = d.tensor_stride[k]
            t_lvl = Mux(nlev[k], 1, t)                      # n steps by 1 (ts[rank-1] unused)
            nd1.append(reg(Mux(used, n, 1), f"n{dim}", 9))
            ts1.append(reg(Mux(used, t_lvl, 1), f"ts{dim}", 4))
            sz1.append(reg(Mux(used, d.tensor_size[dim], 1), f"size{dim}", 32))
            step1.append(reg(Mux(used, (t_lvl * pitch)[:aw], 0), f"step{dim}", aw))
            pplo1.append(reg(cd * pitch[:20], f"pplo{dim}", signed(52)))
            pphi1.append(reg(cd * pitch[20:40], f"pphi{dim}", signed(52)))
            if k < SPATIAL:
                o = Mux(sp[k], offs[k], 0)
                co1.append(reg(cd + o, f"coord{dim}", signed(COORD_W)))
                rst1.append(reg(Mux(sp[k], d.base_corner[k] + offs[k], 0), f"restart{k}",
                                signed(RESTART_W)))
                hi_w = d.tensor_size[dim] - 1 + d.far_corner[k] + offs[k] - t
                wrap1.append(reg(Mux(sp[k], hi_w, 0), f"wrap{k}", signed(POS_W)))
                opp1.append(reg(o * pitch[:40], f"opp{k}", aw))
                lpp1.append(reg(Mux(sp[k], lo_narrow[k] * pitch[:40], 0), f"lpp{k}", aw))
            else:
                co1.append(reg(cd, f"coord{dim}", signed(COORD_W)))

        # OOB fill pattern (§4.8), replicated over 8 bytes
        oc = d.oob_const
        const_pat = _rep(oc[:8], 8)
        for e in range(1, 4):
            const_pat = Mux(eqc(es, e), _rep(oc[:8 << e], 8 >> e), const_pat)
        nan_pat = C(0, 64)
        for dt in sorted(FLOAT_DTYPES):
            value = replicate_pattern(p.NAN_PATTERN[dt].to_bytes(ESIZE[dt], "little"))
            nan_pat = Mux(eqc(d.dtype, int(dt)), C(value, 64), nan_pat)
        pat1 = reg(Mux(eqc(d.oob_fill, OobFill.CONST), const_pat,
                       Mux(eqc(d.oob_fill, OobFill.NAN), nan_pat, 0)), "pattern", 64)

        v1 = Signal()
        with m.If(take):
            m.d.sync += loads

        # ---------------------------------------------------------------- stage 2 (comb on s1)
        op = cmd1["op"]
        tensor = ~op[2:].any()
        block = in_set(op, (CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2G, CmdOp.BLOCK_S2S, CmdOp.BLOCK_RED,
                            CmdOp.BLOCK_PREFETCH))
        s2s = eqc(op, CmdOp.BLOCK_S2S)
        nb16 = Cat(C(0, 4), cmd1["num_blocks"])
        n01 = n0_1 * nd1[0]
        n23 = nd1[1] * nd1[2]
        tile_elems = (n01 * n23) * Cat(nd1[3], C(0, 9))
        box_bytes = shl_small(Mux(mode1, Cat(rc1 * rn1, C(0, 32)), tile_elems[:50]), es1, 3, 53)
        bits = {k: rules[i] for i, k in enumerate(codes)}
        bits[ErrCode.E_SMEM_RANGE] = bits[ErrCode.E_SMEM_RANGE] | (
            tensor_fp & footprint_violation(box_bytes, swz1, cmd1["smem_addr"], sw))
        code = first_code(bits)
        # start address (TMA-F13): global_address + channel/element 0 + sum of coord * pitch
        # (+ sum of off_s * pitch_s in im2col), modulo 2^ADDR_W. (Sums stay unnamed: a name on
        # the ADDR_W-bit slice of a wider sum would be an unread alias in the Verilog.)
        prods = [(lo + Cat(C(0, 20), hi))[:aw] for lo, hi in zip(pplo1, pphi1)]
        base_t = ga1 + a0off1
        for term in prods + opp1:
            base_t = (base_t + term)[:aw]
        # im2col odometer level starts: base_lvl[k] = base + sum_{s<=k spatial} (lo_s - pos_s) *
        # pitch_s; one named multiplexer per level
        lvl = []
        prev = base_t
        for k in range(OUTER - 1):
            cur = Signal(aw, name=f"s2_base_lvl{k + 1}")
            m.d.comb += cur.eq(Mux(sp1[k], (prev + lpp1[k] - prods[k])[:aw], prev))
            lvl.append(cur)
            prev = cur

        j = Signal(self.job_layout)
        m.d.comb += [
            j.seq.eq(seq1), j.id.eq(cmd1["id"]), j.op.eq(op),
            j.gen.eq(tensor | (block & cmd1["num_blocks"].any())),
            j.mode.eq(tensor & mode1), j.rank.eq(Mux(tensor, rank1, 0)),
            j.es_log2.eq(Mux(tensor, es1, 0)),
            j.fill.eq(eqc(op, CmdOp.TENSOR_LOAD)),
            j.base.eq(Mux(tensor, base_t, Mux(s2s, cmd1["smem_addr"], cmd1["gaddr"]))),
            j.span_bytes.eq(Mux(tensor, span1, nb16)),
            j.row_bytes.eq(Mux(tensor, row1, nb16)),
            j.span_off.eq(Mux(tensor, off1, 0)),
            j.tail_bytes.eq(Mux(tensor, tail1, 0)),
            j.smem_addr.eq(cmd1["smem_addr"]),
            j.dst0.eq(Mux(s2s, cmd1["smem_dst"],
                          (cmd1["smem_addr"] + Mux(tensor, off1, 0))[:sw])),
            j.swizzle.eq(Mux(tensor, swz1, 0)),
            j.mask.eq(Mux(cmd1["mcast"], cmd1["cta_mask"], decode(cmd1["cta_id"], 16))),
            j.cta.eq(cmd1["cta_id"]),
            j.mbar.eq(cmd1["mbar_addr"]),
            j.pattern.eq(Mux(tensor, pat1, 0)),
        ]
        tile_t = tensor & ~mode1
        i2c_t = tensor & mode1
        m.d.comb += j.last_px.eq(Mux(i2c_t, lastpx1, 0))
        for k in range(OUTER - 1):
            m.d.comb += j.base_lvl[k].eq(Mux(tensor, lvl[k], 0))
        for k in range(SPATIAL):
            m.d.comb += [j.restart[k].eq(Mux(i2c_t, rst1[k], 0)),
                         j.wrap_at[k].eq(Mux(i2c_t, wrap1[k], 0))]
        for k in range(OUTER):
            m.d.comb += [
                j.last_i[k].eq(Mux(tile_t, (nd1[k] - 1)[:8], 0)),
                j.ts[k].eq(Mux(tensor, ts1[k], 1)),
                j.coord[k].eq(Mux(tensor, co1[k], 0)),
                j.size[k].eq(Mux(tensor, sz1[k], 1)),
                j.step[k].eq(Mux(tensor, step1[k], 0)),
            ]
        red = Cat(cmd1["red_op"], C(1, 1))                 # L2Op RED_<op> = 8 + red_op
        is_op = {o: eqc(op, int(o)) for o in CmdOp}
        l2op = C(L2Op.READ, 4)
        for ops, value in (((CmdOp.TENSOR_STORE, CmdOp.BLOCK_S2G), C(L2Op.WRITE, 4)),
                           ((CmdOp.TENSOR_RED, CmdOp.BLOCK_RED), red),
                           ((CmdOp.TENSOR_PREFETCH, CmdOp.BLOCK_PREFETCH), C(L2Op.PREFETCH, 4)),
                           ((CmdOp.BLOCK_S2S,), C(PIECE_S2S, 4))):
            l2op = Mux(Cat(*(is_op[o] for o in ops)).any(), value, l2op)
        m.d.comb += [
            j.l2op.eq(l2op),
            j.dtype.eq(Mux(is_op[CmdOp.TENSOR_RED], dtype1,
                           Mux(is_op[CmdOp.BLOCK_RED], cmd1["dtype"], 0))),
            j.tx.eq(Mux(is_op[CmdOp.TENSOR_LOAD], box_bytes[:sw + 1],
                        Mux(is_op[CmdOp.BLOCK_G2S] | s2s, nb16[:sw + 1], 0))),
        ]

        # ---------------------------------------------------------------- output registers
        rejected = code.any()
        job_free = ~self.job.valid | self.job.ready
        err_free = ~self.err.valid | self.err.ready
        adv = v1 & Mux(rejected, err_free, job_free)
        m.d.comb += [self.i.ready.eq(~v1 | adv),
                     self.busy.eq(v1 | self.job.valid | self.err.valid)]
        with m.If(take):
            m.d.sync += v1.eq(1)
        with m.Elif(adv):
            m.d.sync += v1.eq(0)
        with m.If(self.job.ready):
            m.d.sync += self.job.valid.eq(0)
        with m.If(self.err.ready):
            m.d.sync += self.err.valid.eq(0)
        with m.If(adv):
            with m.If(rejected):
                m.d.sync += [self.err.valid.eq(1), self.err.payload.id.eq(cmd1["id"]),
                             self.err.payload.code.eq(code)]
            with m.Else():
                m.d.sync += [self.job.valid.eq(1), self.job.payload.eq(j)]
        return m
