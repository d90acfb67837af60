"""Setup validation (spec tma.md §3.4, §4.4): every error vector TMA-GV74..GV106 through the model
with zero traffic, descriptor reads exactly for cache users, the rule order, the ops each rule
applies to, and unused descriptor fields that never matter."""

import itertools
import random

import numpy as np
import pytest

from golden.tma import vectors as gv
from golden.tma.encode import decode_desc, encode_desc
from golden.tma.formats import CmdOp, DType, ErrCode, OobFill, RedOp, TmaCmd
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.model import TmaModel
from golden.tma.params import TmaParams
from golden.tma.validate import validate

DESC = gv.FIG8_DESC_ADDR


def _memories(desc_fields, p=None):
    p = p or TmaParams()
    gmem = GlobalMemory(p.ADDR_W)
    smem = SharedMemory(p.SMEM_AW, default=0x5A)
    rng = np.random.default_rng(74)
    gmem.write(gv.FIG8_GADDR, rng.integers(0, 256, 2 * 14 * 9 * 64 * 2, dtype=np.uint8))
    gmem.write(0x1000, rng.integers(0, 256, 1024, dtype=np.uint8))
    smem.write(0, 0x100, rng.integers(0, 256, 64, dtype=np.uint8))
    if desc_fields is not None:
        gmem.write(DESC, encode_desc(**desc_fields))
    return gmem, smem


def _case(base, cmd_changes, desc_changes):
    desc, cmd = gv.ERROR_BASES[base]
    desc = None if desc is None else {**desc, **desc_changes}
    return desc, TmaCmd(**{**cmd, **cmd_changes})


def _valid_t():
    return _case("T", {}, {})


def _error_rows():
    rows = [(k, *v) for k, v in gv.ERRORS.items()]
    rows += [(f"{k}-variant{i}", *v) for i, (k, *v) in enumerate(gv.ERROR_VARIANTS)]
    return rows


def _reqs(row_id):
    gv_id = "TMA-" + row_id.split("-")[0]
    return pytest.mark.req(gv_id, "TMA-E1", "TMA-E2", "TMA-E3", "TMA-E7", "TMA-F10",
                           "TMA-F4")


@pytest.mark.parametrize("row_id,base,cmd_changes,desc_changes,code", [
    pytest.param(*row, marks=_reqs(row[0]), id=row[0]) for row in _error_rows()])
def test_error_vectors(row_id, base, cmd_changes, desc_changes, code):
    """The bad command gets err{id, code} and nothing else: no l2_req, smem_rd, smem_wr, mbar or
    done; it reads its descriptor exactly when it is a tensor op passing rules 0x01-0x04 (cold
    cache: a miss). The valid T load issued right after completes bit-exactly as if the bad one
    had not been issued (same requests, image, tx, done) and the unit ends idle with nothing
    outstanding."""
    desc, bad = _case(base, cmd_changes, desc_changes)
    bad = bad.replace(id=7)
    t_desc, good = _valid_t()
    good = good.replace(id=8)
    if code == 0:                                       # the "valid with ..." variants
        gmem, smem = _memories(desc)
        model = TmaModel(TmaParams(), gmem, smem)
        run = model.run([bad])
        assert run.errs == [] and run.done == [7] and run.idle
        return
    gmem, smem = _memories(desc)
    if desc is None:
        gmem.write(DESC, encode_desc(**t_desc))
    model = TmaModel(TmaParams(), gmem, smem)
    run = model.run([bad])
    res = run.commands[0]
    assert res.code == code and run.errs == [(7, code)] and run.done == []
    assert res.traffic == 0 and not res.done
    kinds = {e[0] for e in run.events}
    assert kinds <= {"desc_rd", "err"}
    tensor = bad.op in (CmdOp.TENSOR_LOAD, CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED,
                        CmdOp.TENSOR_PREFETCH)
    cache_user = tensor and code > ErrCode.E_DESC_ALIGN
    assert len(run.desc_reads) == (1 if cache_user else 0)
    assert run.outstanding == 0 and run.idle
    # E3: the next valid command is unaffected
    gmem2, smem2 = _memories(desc)
    if desc is None:
        gmem2.write(DESC, encode_desc(**t_desc))
    gmem.write(DESC, encode_desc(**t_desc))
    gmem2.write(DESC, encode_desc(**t_desc))
    model.cache.invalidate()                            # the bad descriptor may sit in the cache
    after = model.run([good]).commands[-1]
    alone = TmaModel(TmaParams(), gmem2, smem2).run([good]).commands[0]
    assert after.request_keys() == alone.request_keys() and after.tx == alone.tx
    assert smem.same_as(smem2) and gmem.same_as(gmem2)
    assert model.completion.errs == [(7, code)] and model.completion.done == [8]
    assert model.idle and model.completion.outstanding == 0


@pytest.mark.req("TMA-E3", "TMA-E1", "TMA-F10")
def test_rejected_command_between_valid_ones_in_one_stream():
    """[T, bad (rank mismatch), T at another smem address]: the two loads complete exactly as
    without the bad one; its descriptor (same line) is a cache hit and reads nothing."""
    t_desc, good = _valid_t()
    cmds = [good.replace(id=1), good.replace(id=2, rank=3), good.replace(id=3, smem_addr=0x2000)]
    g1, s1 = _memories(t_desc)
    run = TmaModel(TmaParams(), g1, s1).run(cmds)
    g2, s2 = _memories(t_desc)
    ref = TmaModel(TmaParams(), g2, s2).run([cmds[0], cmds[2]])
    assert run.errs == [(2, ErrCode.E_RANK_MISMATCH)] and run.done == [1, 3] == ref.done
    assert [c.request_keys() for c in run.commands if not c.rejected] == \
        [c.request_keys() for c in ref.commands]
    assert s1.same_as(s2) and len(run.desc_reads) == 1


# -- one command per rule, outside the vectors: ops columns (TMA-E5) and rule order -------------
def _t(**desc_changes):
    desc = {**gv.ERROR_BASES["T"][0], **desc_changes}
    return decode_desc(encode_desc(**desc))


def _i(**desc_changes):
    desc = {**gv.ERROR_BASES["I"][0], **desc_changes}
    return decode_desc(encode_desc(**desc))


T_CMD = TmaCmd(**gv.ERROR_BASES["T"][1])
I_CMD = TmaCmd(**gv.ERROR_BASES["I"][1])
B_CMD = TmaCmd(**gv.ERROR_BASES["B"][1])
S_CMD = TmaCmd(**gv.ERROR_BASES["S"][1])
P = TmaParams()

RULE_CASES = [
    # (name, cmd, desc, params, expected)
    ("opcode 15", T_CMD.replace(op=15), _t(), P, 0x01),
    ("opcode 11 block fields", B_CMD.replace(op=11, num_blocks=0), None, P, 0x01),
    ("mcast on S2G", B_CMD.replace(op=CmdOp.BLOCK_S2G, mcast=1, cta_mask=1), None, P, 0x02),
    ("mcast on WAIT_ALL", TmaCmd(op=CmdOp.WAIT_ALL, mcast=1, cta_mask=1), None, P, 0x02),
    ("mcast on DESC_INVAL", TmaCmd(op=CmdOp.DESC_INVAL, mcast=1, cta_mask=3), None, P, 0x02),
    ("mcast mask 0 on G2S", B_CMD.replace(mcast=1, cta_mask=0), None, P, 0x03),
    ("mcast mask 0 on NOP", B_CMD.replace(mcast=1, cta_mask=0, num_blocks=0), None, P, 0x03),
    ("WAIT_ALL ignores the rest", TmaCmd(op=CmdOp.WAIT_ALL, desc_addr=3, gaddr=5, smem_addr=1,
                                         mbar_addr=3), None, P, 0x00),
    ("DESC_INVAL ignores the rest", TmaCmd(op=CmdOp.DESC_INVAL, desc_addr=0x41), None, P, 0x00),
    ("NOP skips 0x04..0x20", B_CMD.replace(num_blocks=0, gaddr=3, smem_addr=5, mbar_addr=1),
     None, P, 0x00),
    ("NOP S2S overlap", S_CMD.replace(num_blocks=0, mcast=0, smem_dst=0x101), None, P, 0x00),
    ("NOP BLOCK_RED bad dtype", B_CMD.replace(op=CmdOp.BLOCK_RED, num_blocks=0, dtype=15), None, P,
     0x00),
    ("desc misaligned by 64", T_CMD.replace(desc_addr=DESC + 64), _t(), P, 0x04),
    ("rank 0", T_CMD, _t(rank=0), P, 0x05),
    ("rank 7", T_CMD.replace(rank=7), _t(rank=7), P, 0x05),
    ("im2col rank 1", I_CMD.replace(rank=1), _i(rank=1), P, 0x08),
    ("BLOCK_RED dtype 13 before gaddr", B_CMD.replace(op=CmdOp.BLOCK_RED, dtype=13, gaddr=3), None,
     P, 0x09),
    ("interleave on rank 2", T_CMD.replace(rank=2), _t(rank=2, interleave=1), P, 0x0A),
    ("interleave in im2col", I_CMD, _i(interleave=1), P, 0x0A),
    ("gaddr 32B for I32B", T_CMD, _t(interleave=2, global_address=0x10010), P, 0x0B),
    ("block gaddr misaligned", B_CMD.replace(gaddr=0x1078), None, P, 0x0B),
    ("tensor gaddr >= 2^ADDR_W", T_CMD, _t(global_address=1 << 40), TmaParams(ADDR_W=40), 0x0C),
    ("block end = 2^ADDR_W is legal", B_CMD.replace(gaddr=2 ** 40 - 320), None,
     TmaParams(ADDR_W=40), 0x00),
    ("block end past 2^ADDR_W", B_CMD.replace(gaddr=2 ** 40 - 304), None, TmaParams(ADDR_W=40),
     0x0C),
    ("size 0 in dim 0", T_CMD, _t(tensor_size=(0, 8, 14, 64)), P, 0x0D),
    ("size 0 beyond rank ignored", T_CMD, _t(tensor_size=(64, 8, 14, 64, 0)), P, 0x00),
    ("stride 16B with I32B", T_CMD, _t(interleave=2, tensor_stride=(144, 1024, 14336)), P, 0x0E),
    ("stride beyond rank-1 ignored", T_CMD, _t(tensor_stride=(128, 1024, 14336, 3)), P, 0x00),
    ("I32B box[0] != size[0]", T_CMD, _t(interleave=2, tensor_size=(16, 8, 14, 64),
                                         box_size=(8, 10, 10, 1), swizzle=1), P, 0x10),
    ("stride misaligned and too large", T_CMD, _t(tensor_stride=(136, 2 ** 41, 14336)), P, 0x0E),
    ("stride too large then misaligned", T_CMD, _t(tensor_stride=(2 ** 41, 1032, 14336)), P,
     0x0E),
    ("box 300 and inner 24 B", T_CMD, _t(box_size=(12, 300, 10, 1)), P, 0x11),
    ("box 0 in dim 3", T_CMD, _t(box_size=(8, 10, 10, 0)), P, 0x11),
    ("box beyond rank ignored", T_CMD, _t(box_size=(8, 10, 10, 1, 999)), P, 0x00),
    ("range_ndhw 1025", I_CMD, _i(range_ndhw=1025), P, 0x12),
    ("range_c 257", I_CMD, _i(range_c=257), P, 0x12),
    ("im2col inner 14 B", I_CMD, _i(range_c=7), P, 0x13),
    ("I16B U8 slice legal", T_CMD, _t(interleave=1, tensor_size=(16, 8, 14, 64),
                                      box_size=(16, 10, 10, 1), dtype=DType.U8), P, 0x00),
    ("I16B U8 half slice", T_CMD, _t(interleave=1, tensor_size=(8, 8, 14, 64),
                                     box_size=(8, 10, 10, 1), dtype=DType.U8), P, 0x10),
    ("ts 9 in dim 2", T_CMD, _t(traversal_stride=(1, 1, 9, 1)), P, 0x14),
    ("ts beyond rank ignored", T_CMD, _t(traversal_stride=(1, 1, 1, 1, 0)), P, 0x00),
    ("64B swizzle with 128 B rows", T_CMD, _t(box_size=(64, 10, 10, 1), swizzle=2), P, 0x15),
    ("im2col swizzle span", I_CMD, _i(range_c=64, swizzle=1), P, 0x15),
    ("I32B with SW64B", T_CMD, _t(interleave=2, tensor_size=(16, 8, 14, 64),
                                  box_size=(16, 10, 10, 1), swizzle=2), P, 0x16),
    ("NaN fill on S64", T_CMD, _t(oob_fill=OobFill.NAN, dtype=DType.S64), P, 0x18),
    ("NaN fill on TF32_FTZ legal", T_CMD, _t(oob_fill=OobFill.NAN, dtype=DType.TF32_FTZ), P, 0x00),
    ("rank-4 corner 128", I_CMD, _i(far_corner=(128, -2)), P, 0x19),
    ("rank-4 corner -128 legal", I_CMD, _i(base_corner=(-128, 0)), P, 0x00),
    ("rank-3 corners +-2^15 legal", I_CMD.replace(rank=3, coord=(0, 4, 0)),
     _i(rank=3, base_corner=(-32768, 0), far_corner=(32767, 0)), P, 0x00),
    ("rank-5 corner 16", I_CMD.replace(rank=5, coord=(0, 4, 7, 0, 0)),
     _i(rank=5, tensor_size=(64, 9, 14, 3, 2), tensor_stride=(128, 1152, 16128, 48384),
        far_corner=(-2, -2, 16)), P, 0x19),
    ("rank-5 unused corner ignored at rank 4", I_CMD, _i(base_corner=(0, 0, 999)), P, 0x00),
    ("bbox of H empty", I_CMD, _i(base_corner=(0, 14), far_corner=(-2, 0)), P, 0x1A),
    ("base h beyond hi", I_CMD.replace(coord=(0, 4, 12, 7)), _i(), P, 0x1B),
    ("base w below lo", I_CMD.replace(coord=(0, -1, 7, 7)), _i(), P, 0x1B),
    ("TENSOR_RED ADD on F16 legal", T_CMD.replace(op=CmdOp.TENSOR_RED, red_op=RedOp.ADD), _t(), P,
     0x00),
    ("TENSOR_RED MIN on F32", T_CMD.replace(op=CmdOp.TENSOR_RED, red_op=RedOp.MIN),
     _t(dtype=DType.F32, box_size=(4, 10, 10, 1)), P, 0x1C),
    ("BLOCK_RED XOR on F16", B_CMD.replace(op=CmdOp.BLOCK_RED, red_op=RedOp.XOR, dtype=DType.F16),
     None, P, 0x1C),
    ("BLOCK_RED INC on U32 legal", B_CMD.replace(op=CmdOp.BLOCK_RED, red_op=RedOp.INC,
                                                 dtype=DType.U32), None, P, 0x00),
    ("TENSOR_PREFETCH skips smem rules", T_CMD.replace(op=CmdOp.TENSOR_PREFETCH, smem_addr=0x3FFF1,
                                                       mbar_addr=3), _t(), P, 0x00),
    ("BLOCK_PREFETCH skips smem rules", B_CMD.replace(op=CmdOp.BLOCK_PREFETCH, smem_addr=3,
                                                      mbar_addr=3), None, P, 0x00),
    ("tensor smem 64B aligned", T_CMD.replace(smem_addr=0x40), _t(), P, 0x1D),
    ("swizzled smem 128B aligned", T_CMD.replace(smem_addr=0x380), _t(swizzle=1), P, 0x1D),
    ("S2S smem_dst misaligned", S_CMD.replace(smem_dst=0x1F8), None, P, 0x1D),
    ("G2S smem 8B aligned", B_CMD.replace(smem_addr=0x208), None, P, 0x1D),
    ("swizzled footprint fits", T_CMD.replace(smem_addr=0x40000 - 1024),
     _t(box_size=(8, 9, 7, 1), swizzle=3), P, 0x00),
    ("swizzled footprint too big", T_CMD.replace(smem_addr=0x40000 - 1024),
     _t(box_size=(8, 5, 13, 1), swizzle=3), P, 0x1E),
    ("unswizzled footprint exact", T_CMD.replace(smem_addr=0x40000 - 1664),
     _t(box_size=(8, 8, 13, 1)), P, 0x00),
    ("S2S smem_dst range", S_CMD.replace(smem_dst=0x40000 - 48), None, P, 0x1E),
    ("block smem range at SMEM_AW 11", B_CMD.replace(smem_addr=0x6D0, mbar_addr=0), None,
     TmaParams(SMEM_AW=11), 0x1E),
    ("S2G ignores mbar", B_CMD.replace(op=CmdOp.BLOCK_S2G, mbar_addr=5), None, P, 0x00),
    ("TENSOR_STORE ignores mbar", T_CMD.replace(op=CmdOp.TENSOR_STORE, mbar_addr=5), _t(), P, 0x00),
    ("S2S mbar misaligned", S_CMD.replace(mbar_addr=0x20002), None, P, 0x1F),
    ("S2S overlap, source CTA in mask", S_CMD.replace(cta_mask=0x3, smem_dst=0x130), None, P, 0x20),
    ("S2S overlap below", S_CMD.replace(mcast=0, smem_dst=0xD0), None, P, 0x20),
    ("S2S overlap, source CTA not in mask", S_CMD.replace(smem_dst=0x120), None, P, 0x00),
    ("S2S adjacent below", S_CMD.replace(mcast=0, smem_dst=0xC0), None, P, 0x00),
]


@pytest.mark.req("TMA-E5", "TMA-E6", "TMA-E2", "TMA-F10")
@pytest.mark.parametrize("name,cmd,desc,params,code", RULE_CASES, ids=[c[0] for c in RULE_CASES])
def test_rule_cases(name, cmd, desc, params, code):
    assert validate(cmd, desc, params) == code


# Single-rule mutations of T (field set, command changes, descriptor changes, code); each is
# checked alone, then every pair with disjoint field sets must report the lower code (TMA-E2).
MUTATIONS = [
    ({"op"}, dict(op=12), {}, 0x01),
    ({"mcast"}, dict(mcast=1, cta_mask=0), {}, 0x03),
    ({"desc_addr"}, dict(desc_addr=DESC + 16), {}, 0x04),
    ({"rank"}, {}, dict(rank=6), 0x05),
    ({"rank"}, dict(rank=2), {}, 0x06),
    ({"mode"}, dict(mode=1), {}, 0x07),
    ({"dtype"}, {}, dict(dtype=14), 0x09),
    ({"interleave"}, {}, dict(interleave=3), 0x0A),
    ({"gaddr"}, {}, dict(global_address=0x10004), 0x0B),
    ({"size"}, {}, dict(tensor_size=(64, 8, 14, 0)), 0x0D),
    ({"stride"}, {}, dict(tensor_stride=(136, 1024, 14336)), 0x0E),
    ({"stride2"}, {}, dict(tensor_stride=(128, 2 ** 41, 14336)), 0x0F),
    ({"box"}, {}, dict(box_size=(8, 10, 300, 1)), 0x11),
    ({"box0"}, {}, dict(box_size=(12, 10, 10, 1)), 0x13),
    ({"ts"}, {}, dict(traversal_stride=(1, 0, 1, 1)), 0x14),
    ({"oob"}, {}, dict(oob_fill=3), 0x17),
    ({"red"}, dict(op=CmdOp.TENSOR_RED, red_op=RedOp.DEC), {}, 0x1C),
    ({"smem"}, dict(smem_addr=0x10), {}, 0x1D),
    ({"smem2"}, dict(smem_addr=0x3FF80), {}, 0x1E),
    ({"mbar"}, dict(mbar_addr=0x20001), {}, 0x1F),
]
_CLASH = [{"op", "red"}, {"op", "mcast"}, {"mcast", "red"}, {"smem", "smem2"}, {"op", "mbar"}, {"red", "mbar"},
          {"op", "smem"}, {"op", "smem2"}, {"red", "smem"}, {"red", "smem2"}, {"box", "box0"},
          {"stride", "stride2"}]


def _apply(*muts):
    cmd, desc = dict(gv.ERROR_BASES["T"][1]), dict(gv.ERROR_BASES["T"][0])
    for _, c, d, _ in muts:
        cmd.update(c)
        desc.update(d)
    return TmaCmd(**cmd), decode_desc(encode_desc(**desc))


@pytest.mark.req("TMA-E2", "TMA-F10")
def test_rule_order_on_pairs_of_violations():
    for m in MUTATIONS:
        assert validate(*_apply(m), P) == m[3], m
    pairs = 0
    for a, b in itertools.combinations(MUTATIONS, 2):
        if a[0] & b[0] or any(c <= (a[0] | b[0]) for c in _CLASH):
            continue
        pairs += 1
        assert validate(*_apply(a, b), P) == min(a[3], b[3]), (a, b)
    assert pairs > 100


@pytest.mark.req("TMA-E6", "TMA-F9")
def test_reserved_bits_and_unused_fields_never_matter(seed):
    """Random garbage in ctrl[31:14], byte 0x4F, bytes 0x68..0x7F, the fields of dimensions >= rank
    and the im2col-only fields leaves the T load's result unchanged."""
    rng = random.Random(seed)
    t_desc, cmd = _valid_t()
    clean = bytearray(encode_desc(**t_desc))
    g0, s0 = _memories(t_desc)
    ref = TmaModel(TmaParams(), g0, s0).run([cmd]).commands[0]
    for _ in range(40):
        raw = bytearray(clean)
        ctrl = int.from_bytes(raw[0x3C:0x40], "little")
        ctrl |= rng.getrandbits(18) << 14
        raw[0x3C:0x40] = ctrl.to_bytes(4, "little")
        raw[0x4F] = rng.getrandbits(8)
        raw[0x68:0x80] = rng.randbytes(0x18)
        raw[0x20:0x28] = rng.randbytes(8)                     # tensor_stride[3] (rank 4)
        raw[0x38:0x3C] = rng.randbytes(4)                     # tensor_size[4]
        raw[0x48:0x4A] = rng.randbytes(2)                     # box_size[4]
        raw[0x4E] = rng.getrandbits(8)                        # traversal_stride[4]
        raw[0x58:0x68] = rng.randbytes(16)                    # range_c/ndhw, corners (tile)
        raw[0x50:0x58] = rng.randbytes(8)                     # oob_const (T has ZERO fill)
        g, s = _memories(None)
        g.write(DESC, bytes(raw))
        res = TmaModel(TmaParams(), g, s).run([cmd]).commands[0]
        assert res.code == 0 and res.request_keys() == ref.request_keys()
        assert s.same_as(s0)
