"""Formats shared by hardware, golden model and testbench (spec tma.md §3.2, §3.3, §4.1-§4.3):
enumeration codes, the descriptor layout with TMA-GV1/GV2, the encoder/decoder, the
cuTensorMapEncodeTiled-like encoder's checks, command and stream payload layouts, parameters."""

import random
import subprocess
import sys

import pytest

from golden.tma import vectors as gv
from golden.tma.encode import DescriptorError, decode_desc, encode_desc, encode_tiled
from golden.tma.formats import (
    DESC_FIELDS, ESIZE, FLOAT_DTYPES, RED_OK, CmdOp, DType, ErrCode, Interleave, L2Op, L2Req,
    MbarUpdate, Mode, OobFill, RedOp, SmemBeat, Swizzle, TmaCmd, TmaDesc, cmd_fields,
    desc_rd_req_fields, desc_rd_resp_fields, done_fields, err_fields, l2_req_fields,
    l2_resp_fields, mbar_fields, op_class, smem_rd_req_fields, smem_rd_resp_fields, smem_wr_fields)
from golden.tma.params import TmaParams


def test_golden_tma_imports_no_amaranth_and_exports_the_api():
    code = (
        "import sys\n"
        "from golden.tma.encode import encode_desc, decode_desc, encode_tiled\n"
        "from golden.tma.validate import validate\n"
        "from golden.tma.tile import elements, rows\n"
        "from golden.tma.l2req import pieces\n"
        "from golden.tma.model import run_command, TmaModel\n"
        "from golden.tma.swizzle import swz\n"
        "from golden.tma import vectors, formats, params, copy, desccache, tracker, completion\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('amaranth', 'cocotb')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.req("TMA-F3")
def test_enumeration_codes():
    assert [int(CmdOp[n]) for n in ("TENSOR_LOAD", "TENSOR_STORE", "TENSOR_RED", "TENSOR_PREFETCH",
                                    "BLOCK_G2S", "BLOCK_S2G", "BLOCK_S2S", "BLOCK_RED",
                                    "BLOCK_PREFETCH", "WAIT_ALL", "DESC_INVAL")] == list(range(11))
    assert [int(RedOp[n]) for n in ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR")] == \
        list(range(8))
    assert (L2Op.READ, L2Op.WRITE, L2Op.PREFETCH) == (0, 1, 2)
    assert [int(L2Op[f"RED_{n}"]) for n in ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR")] \
        == list(range(8, 16))
    assert (Mode.TILE, Mode.IM2COL) == (0, 1)
    assert (Interleave.NONE, Interleave.I16B, Interleave.I32B) == (0, 1, 2)
    assert (Swizzle.NONE, Swizzle.SW32B, Swizzle.SW64B, Swizzle.SW128B) == (0, 1, 2, 3)
    assert (OobFill.ZERO, OobFill.CONST, OobFill.NAN) == (0, 1, 2)
    names = ["U8", "U16", "U32", "S32", "U64", "S64", "F16", "F32", "F64", "BF16", "F32_FTZ",
             "TF32", "TF32_FTZ"]
    assert [DType[n] for n in names] == list(range(13))
    assert [ESIZE[DType[n]] for n in names] == [1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4]
    assert {d.name for d in FLOAT_DTYPES} == set(names[6:])
    assert [ErrCode(c).name for c in (1, 4, 0x0B, 0x13, 0x1B, 0x1F, 0x20)] == [
        "E_OPCODE", "E_DESC_ALIGN", "E_GADDR_ALIGN", "E_BOX_INNER", "E_IM2COL_BASE",
        "E_MBAR_ALIGN", "E_S2S_OVERLAP"]
    assert len(ErrCode) == 33
    assert [op_class(op) for op in range(16)] == ["tensor"] * 4 + ["block"] * 5 + \
        ["control"] * 2 + ["reserved"] * 5
    assert len(RED_OK) == 6 + 6 + 6 + 1 + 1 + 4 * 3
    assert (RedOp.INC, DType.U32) in RED_OK and (RedOp.ADD, DType.S64) not in RED_OK


@pytest.mark.req("TMA-GV1", "TMA-GV2", "TMA-I3", "TMA-F9")
@pytest.mark.parametrize("name", ["GV1", "GV2"])
def test_descriptor_vectors_gv1_gv2(name):
    fields, ctrl, raw = {"GV1": (gv.GV1_FIELDS, gv.GV1_CTRL, gv.GV1_BYTES),
                         "GV2": (gv.GV2_FIELDS, gv.GV2_CTRL, gv.GV2_BYTES)}[name]
    assert len(raw) == 128
    assert encode_desc(**fields) == raw
    assert int.from_bytes(raw[0x3C:0x40], "little") == ctrl
    d = decode_desc(raw)
    assert d == TmaDesc.make(**fields)
    # desc_rd_resp.data: byte j in bits [8j+7:8j]
    word = int.from_bytes(raw, "little")
    assert decode_desc(word) == d and DESC_FIELDS.width == desc_rd_resp_fields().width == 1024


@pytest.mark.req("TMA-F9")
def test_descriptor_field_positions():
    """Every field at its §4.2 byte offset; ctrl sub-fields at their bits."""
    def place(**f):
        return encode_desc(**f)
    assert place(global_address=0x0102030405060708)[0:8] == bytes.fromhex("0807060504030201")
    raw = place(tensor_stride=(0x10, 0x20, 0x30, 0x40))
    assert [int.from_bytes(raw[0x08 + 8 * k:0x10 + 8 * k], "little") for k in range(4)] == \
        [0x10, 0x20, 0x30, 0x40]
    raw = place(tensor_size=(1, 2, 3, 4, 0xFFFFFFFF))
    assert [int.from_bytes(raw[0x28 + 4 * k:0x2C + 4 * k], "little") for k in range(5)] == \
        [1, 2, 3, 4, 0xFFFFFFFF]
    ctrl = lambda **f: int.from_bytes(place(**f)[0x3C:0x40], "little")   # noqa: E731
    assert ctrl(rank=5) == 5 and ctrl(mode=1) == 1 << 3 and ctrl(dtype=12) == 12 << 4
    assert ctrl(interleave=2) == 2 << 8 and ctrl(swizzle=3) == 3 << 10 and ctrl(oob_fill=2) == 2 << 12
    raw = place(box_size=(256, 2, 3, 4, 5), traversal_stride=(8, 7, 6, 5, 4))
    assert [int.from_bytes(raw[0x40 + 2 * k:0x42 + 2 * k], "little") for k in range(5)] == \
        [256, 2, 3, 4, 5]
    assert list(raw[0x4A:0x4F]) == [8, 7, 6, 5, 4] and raw[0x4F] == 0
    raw = place(oob_const=0x1122334455667788, range_c=256, range_ndhw=1024,
                base_corner=(-1, 2, -3), far_corner=(4, -5, 6))
    assert raw[0x50:0x58] == bytes.fromhex("8877665544332211")
    assert int.from_bytes(raw[0x58:0x5A], "little") == 256
    assert int.from_bytes(raw[0x5A:0x5C], "little") == 1024
    assert [int.from_bytes(raw[0x5C + 2 * s:0x5E + 2 * s], "little", signed=True) for s in range(3)] \
        == [-1, 2, -3]
    assert [int.from_bytes(raw[0x62 + 2 * s:0x64 + 2 * s], "little", signed=True) for s in range(3)] \
        == [4, -5, 6]
    assert raw[0x68:] == bytes(0x18)


@pytest.mark.req("TMA-F9")
def test_missing_entries_and_round_trip(seed):
    raw = encode_desc(rank=2)
    d = decode_desc(raw)
    assert d.tensor_size == (1,) * 5 and d.tensor_stride == (0,) * 4 and d.box_size == (0,) * 5
    assert d.traversal_stride == (1,) * 5 and d.base_corner == d.far_corner == (0, 0, 0)
    assert d.oob_const == d.range_c == d.range_ndhw == 0
    rng = random.Random(seed)
    for _ in range(200):
        full = TmaDesc(
            global_address=rng.getrandbits(64),
            tensor_stride=tuple(rng.getrandbits(64) for _ in range(4)),
            tensor_size=tuple(rng.getrandbits(32) for _ in range(5)),
            rank=rng.getrandbits(3), mode=rng.getrandbits(1), dtype=rng.getrandbits(4),
            interleave=rng.getrandbits(2), swizzle=rng.getrandbits(2), oob_fill=rng.getrandbits(2),
            box_size=tuple(rng.getrandbits(16) for _ in range(5)),
            traversal_stride=tuple(rng.getrandbits(8) for _ in range(5)),
            oob_const=rng.getrandbits(64), range_c=rng.getrandbits(16),
            range_ndhw=rng.getrandbits(16),
            base_corner=tuple(rng.randint(-32768, 32767) for _ in range(3)),
            far_corner=tuple(rng.randint(-32768, 32767) for _ in range(3)))
        assert decode_desc(encode_desc(full)) == full
    with pytest.raises(ValueError):
        encode_desc(box_size=(1, 2, 3, 4, 5, 6))
    with pytest.raises(ValueError):
        encode_desc(rank=8)


@pytest.mark.req("TMA-F9")
def test_encode_tiled_accepts_a_legal_descriptor():
    raw = encode_tiled(DType.F16, 4, 0x10000, (64, 8, 14, 64), (128, 1024, 14336), (8, 10, 10, 1),
                       (1, 1, 1, 1))
    assert raw == gv.GV2_BYTES
    raw = encode_tiled(DType.U8, 3, 0x2000, (32, 4, 4), (32, 128), (32, 4, 4), (1, 2, 1),
                       interleave=Interleave.I32B, swizzle=Swizzle.SW32B, oob_fill=OobFill.CONST,
                       oob_const=0x77)
    d = decode_desc(raw)
    assert (d.interleave, d.swizzle, d.oob_fill, d.oob_const, d.traversal_stride[1]) == (2, 1, 1, 0x77, 2)


BASE = dict(dtype=DType.F16, rank=4, global_address=0x10000, global_dim=(64, 8, 14, 64),
            global_strides=(128, 1024, 14336), box_dim=(8, 10, 10, 1), element_strides=(1, 1, 1, 1))


@pytest.mark.req("TMA-E1")
@pytest.mark.parametrize("changes,code,parameter", [
    (dict(rank=6, global_dim=(1,) * 6, global_strides=(16,) * 5, box_dim=(8,) * 6,
          element_strides=(1,) * 6), 0x05, "tensorRank"),
    (dict(dtype=13), 0x09, "tensorDataType"),
    (dict(interleave=3), 0x0A, "interleave"),
    (dict(global_address=0x10008), 0x0B, "globalAddress"),
    (dict(global_address=1 << 40, params=TmaParams(ADDR_W=40)), 0x0C, "globalAddress"),
    (dict(global_dim=(64, 8, 0, 64)), 0x0D, "globalDim"),
    (dict(global_strides=(128, 1032, 14336)), 0x0E, "globalStrides"),
    (dict(global_strides=(128, 1024, 1 << 40)), 0x0F, "globalStrides"),
    (dict(interleave=Interleave.I16B), 0x10, "globalDim/boxDim"),
    (dict(box_dim=(8, 257, 10, 1)), 0x11, "boxDim"),
    (dict(box_dim=(4, 10, 10, 1)), 0x13, "boxDim"),
    (dict(element_strides=(1, 9, 1, 1)), 0x14, "elementStrides"),
    (dict(box_dim=(32, 10, 10, 1), swizzle=Swizzle.SW32B), 0x15, "swizzle"),
    (dict(global_dim=(16, 8, 14, 8), global_strides=(32, 256, 3584), box_dim=(16, 8, 8, 1),
          interleave=Interleave.I32B), 0x16, "swizzle"),
    (dict(oob_fill=3), 0x17, "oobFill"),
    (dict(oob_fill=OobFill.NAN, dtype=DType.U16), 0x18, "oobFill"),
])
def test_encode_tiled_rejects_what_setup_rejects(changes, code, parameter):
    with pytest.raises(DescriptorError) as info:
        encode_tiled(**{**BASE, **changes})
    assert info.value.code == code and info.value.parameter == parameter
    assert isinstance(info.value, ValueError)


def test_encode_tiled_checks_list_lengths():
    with pytest.raises(ValueError, match="globalStrides"):
        encode_tiled(**{**BASE, "global_strides": (128, 1024)})


@pytest.mark.req("TMA-I2")
def test_command_layout_round_trip(seed):
    rng = random.Random(seed)
    for p in (TmaParams(), TmaParams(ADDR_W=40, SMEM_AW=11, ID_W=1, NB_W=1),
              TmaParams(ID_W=16, NB_W=28, SMEM_AW=24)):
        f = cmd_fields(p)
        assert f.width == (p.ID_W + 4 + 1 + 3 + 3 + 4 + p.ADDR_W + 160 + 16 + p.ADDR_W + p.NB_W
                           + 3 * p.SMEM_AW + 4 + 1 + 16)
        for _ in range(50):
            cmd = TmaCmd(id=rng.getrandbits(p.ID_W), op=rng.getrandbits(4), mode=rng.getrandbits(1),
                         rank=rng.getrandbits(3), red_op=rng.getrandbits(3),
                         dtype=rng.getrandbits(4), desc_addr=rng.getrandbits(p.ADDR_W),
                         coord=tuple(rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in range(5)),
                         im2col_off=rng.getrandbits(16), gaddr=rng.getrandbits(p.ADDR_W),
                         num_blocks=rng.getrandbits(p.NB_W), smem_addr=rng.getrandbits(p.SMEM_AW),
                         smem_dst=rng.getrandbits(p.SMEM_AW), mbar_addr=rng.getrandbits(p.SMEM_AW),
                         cta_id=rng.getrandbits(4), mcast=rng.getrandbits(1),
                         cta_mask=rng.getrandbits(16))
            assert TmaCmd.unpack(cmd.pack(p), p) == cmd
        with pytest.raises(ValueError):
            TmaCmd(smem_addr=1 << p.SMEM_AW).check(p)
        with pytest.raises(ValueError):
            TmaCmd(coord=(2 ** 31,)).check(p)


@pytest.mark.req("TMA-I3", "TMA-I4", "TMA-I5", "TMA-I6", "TMA-I7", "TMA-I8", "TMA-I9", "TMA-I10")
@pytest.mark.parametrize("p", [TmaParams(), TmaParams(ADDR_W=40, SMEM_AW=11, ID_W=3,
                                                      TRK_ENTRIES=4)])
def test_stream_payload_layouts(p):
    def shape(f):
        return [(n, f.widths[n]) for n in f.names]
    assert shape(desc_rd_req_fields(p)) == [("addr", p.ADDR_W)]
    assert shape(desc_rd_resp_fields()) == [("data", 1024)]
    assert shape(l2_req_fields(p)) == [("line", p.ADDR_W - 7), ("sectors", 4), ("tag", p.TAG_W),
                                       ("op", 4), ("dtype", 4), ("data", 1024), ("be", 128)]
    assert shape(l2_resp_fields(p)) == [("tag", p.TAG_W), ("data", 1024)]
    assert shape(smem_wr_fields(p)) == [("row", p.SMEM_AW - 7), ("data", 1024), ("be", 128),
                                        ("mask", 16)]
    assert shape(smem_rd_req_fields(p)) == [("row", p.SMEM_AW - 7), ("cta", 4)]
    assert shape(smem_rd_resp_fields()) == [("data", 1024)]
    assert shape(mbar_fields(p)) == [("addr", p.SMEM_AW), ("tx", p.SMEM_AW + 1), ("mask", 16)]
    assert shape(err_fields(p)) == [("id", p.ID_W), ("code", 8)]
    assert shape(done_fields(p)) == [("id", p.ID_W)]
    # golden records pack into them, lane j of data in bits [8j+7:8j]
    req = L2Req(op=L2Op.WRITE, line=3, sectors=0x2, tag=1, data=bytes([0] * 40 + [0xAB] + [0] * 87),
                be=1 << 40)
    word = l2_req_fields(p).unpack(req.pack(p))
    assert word["data"] >> (8 * 40) == 0xAB and word["be"] == 1 << 40 and word["line"] == 3
    beat = SmemBeat(row=2, data=bytes(range(128)), be=(1 << 128) - 1, mask=0x5)
    assert smem_wr_fields(p).unpack(beat.pack(p))["data"] & 0xFFFF == 0x0100
    assert mbar_fields(p).unpack(MbarUpdate(8, 128, 1).pack(p)) == {"addr": 8, "tx": 128, "mask": 1}


@pytest.mark.req("TMA-C1", "TMA-C2", "TMA-C3", "TMA-C4", "TMA-C5", "TMA-C6", "TMA-C7", "TMA-C9", "TMA-C11")
def test_parameters():
    p = TmaParams()
    assert (p.ADDR_W, p.SMEM_AW, p.ID_W, p.Q_DEPTH, p.DC_ENTRIES, p.TRK_ENTRIES, p.NB_W) == \
        (64, 18, 8, 4, 4, 32, 20)
    assert p.TAG_W == 5 and p.SMEM_SIZE == 0x40000
    assert p.NAN_PATTERN[DType.F16] == 0x7FFF and p.NAN_PATTERN[DType.BF16] == 0x7FFF
    assert p.NAN_PATTERN[DType.F64] == 0x7FFFFFFFFFFFFFFF
    assert all(p.NAN_PATTERN[d] == 0x7FFFFFFF for d in (DType.F32, DType.F32_FTZ, DType.TF32,
                                                        DType.TF32_FTZ))
    for name, lo, hi in [("ADDR_W", 40, 64), ("SMEM_AW", 11, 24), ("ID_W", 1, 16),
                         ("Q_DEPTH", 2, 16), ("DC_ENTRIES", 2, 16), ("NB_W", 1, 28)]:
        TmaParams(**{name: lo})
        TmaParams(**{name: hi})
        for bad in (lo - 1, hi + 1):
            with pytest.raises(ValueError, match=f"{name} must be an integer in {lo}..{hi}"):
                TmaParams(**{name: bad})
    for ok in (4, 8, 256):
        assert TmaParams(TRK_ENTRIES=ok).TAG_W == ok.bit_length() - 1
    for bad in (2, 12, 512):
        with pytest.raises(ValueError, match="TRK_ENTRIES"):
            TmaParams(TRK_ENTRIES=bad)
    nan = dict(p.NAN_PATTERN)
    nan[DType.F16] = 0x7E00
    assert TmaParams(NAN_PATTERN=nan).NAN_PATTERN[DType.F16] == 0x7E00
    with pytest.raises(ValueError, match="NAN_PATTERN"):
        TmaParams(NAN_PATTERN={**nan, DType.F16: 0x10000})
    with pytest.raises(ValueError, match="NAN_PATTERN"):
        TmaParams(NAN_PATTERN={**nan, DType.U8: 0})
    with pytest.raises(ValueError, match="NAN_PATTERN"):
        TmaParams(NAN_PATTERN={DType.F16: 1})


@pytest.mark.req("TMA-C10")
def test_fixed_constants():
    from golden.tma import formats as f
    assert (f.LINE, f.SECTOR, f.CHUNK, f.BLOCK, f.MAX_RANK, f.BOX_MAX, f.TS_MAX, f.RANGE_C_MAX,
            f.RANGE_NDHW_MAX, f.CTA_MASK_W, f.DESC_BYTES) == (128, 32, 16, 16, 5, 256, 8, 256,
                                                            1024, 16, 128)


def test_vector_tables_are_self_consistent():
    """Transcription checks of the §5 tables (no model involved): counts that the spec states
    twice agree."""
    for name, v in gv.IM2COL.items():
        assert len(v["oob_idx"]) == v["oob_px"], name
        assert v["reads"] == v["range_ndhw"] - v["oob_px"], name
        assert v["tx"] == v["range_ndhw"] * v["range_c"] * 2, name
    for name, v in gv.TILE_FIG8.items():
        assert v["reads"] == v["inb_px"] and v["tx"] == 16 * v["rows"], name
    assert len(gv.GV33_FILL_PIXELS) == 28 == len(set(gv.GV33_FILL_PIXELS))
    assert sorted(gv.ERRORS) == sorted(f"GV{k}" for k in range(74, 107))
    assert len(gv.RED) == 36 and sorted(int(k[2:]) for k in gv.RED) == list(range(37, 73))
    assert sum(b - a + 1 for _, _, (a, b), _ in gv.GV28["pieces"]) == 256
