"""Golden vectors TMA-GV1 .. TMA-GV109 of spec tma.md §5, transcribed once for the golden tests and
the RTL testbenches. Values are exactly as printed in the spec; each block names its §5 heading.

Conventions of §5: the seed's (n, h, w, c) tuples are ``coord`` = (c, w, h, n); offsets are (w, h)
packed ``w | h << 8``; pixels are written (n, h, w). Part-2 vectors (im2col, stores, reductions,
prefetch, convolution) are transcribed here too so that part 2 only adds tests.
"""

from golden.tma.formats import CmdOp, DType, Interleave, Mode, OobFill, RedOp, Swizzle

# ---------------------------------------------------------------------------------------------
# §5 "Fig 8 common setup" (TMA-GV1 .. GV22)
FIG8_GADDR = 0x10000
FIG8_DESC_ADDR = 0x8000
FIG8_MBAR = 0x20000
FIG8_DTYPE = DType.F16
# name: (N, H, W, C), tensor_size innermost first, tensor_stride (bytes)
FIG8_TENSORS = {
    "A": ((64, 14, 9, 64), (64, 9, 14, 64), (128, 1152, 16128)),
    "B": ((64, 14, 8, 64), (64, 8, 14, 64), (128, 1024, 14336)),
    "C": ((64, 13, 8, 64), (64, 8, 13, 64), (128, 1024, 13312)),
}


def fig8_desc(tensor, **fields):
    """Descriptor fields of a Fig 8 example on tensor ``tensor`` (common setup), plus ``fields``."""
    _, size, stride = FIG8_TENSORS[tensor]
    return dict(global_address=FIG8_GADDR, tensor_size=size, tensor_stride=stride, rank=4,
                dtype=FIG8_DTYPE, **fields)


def fig8_cmd(op=CmdOp.TENSOR_LOAD, mode=Mode.TILE, coord=(0, 0, 0, 0), **fields):
    """Command fields of a Fig 8 example (common setup), plus ``fields``."""
    return dict(op=op, mode=mode, rank=4, desc_addr=FIG8_DESC_ADDR, coord=coord, smem_addr=0,
                mbar_addr=FIG8_MBAR, cta_id=0, **fields)


def _hexdump(text):
    return bytes(int(b, 16) for line in text.strip().splitlines() for b in line.split(":")[1].split())


# §5 TMA-GV1 — descriptor of Fig 8B (tensor A; im2col, rank 4, range_c 8, range_ndhw 64,
# base W,H = -1, far W,H = -1; ctrl = 0x6C)
GV1_FIELDS = fig8_desc("A", mode=Mode.IM2COL, range_c=8, range_ndhw=64, base_corner=(-1, -1),
                       far_corner=(-1, -1))
GV1_CTRL = 0x6C
GV1_BYTES = _hexdump("""
00: 00 00 01 00 00 00 00 00 80 00 00 00 00 00 00 00
10: 80 04 00 00 00 00 00 00 00 3f 00 00 00 00 00 00
20: 00 00 00 00 00 00 00 00 40 00 00 00 09 00 00 00
30: 0e 00 00 00 40 00 00 00 01 00 00 00 6c 00 00 00
40: 00 00 00 00 00 00 00 00 00 00 01 01 01 01 01 00
50: 00 00 00 00 00 00 00 00 08 00 40 00 ff ff ff ff
60: 00 00 ff ff ff ff 00 00 00 00 00 00 00 00 00 00
70: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
""")

# §5 TMA-GV2 — descriptor of Fig 8D (tensor B; tile, rank 4, box {8,10,10,1}; ctrl = 0x64);
# bytes 0x00..0x4F given, the rest 0; box_size[4] = 0 (unused)
GV2_FIELDS = fig8_desc("B", mode=Mode.TILE, box_size=(8, 10, 10, 1))
GV2_CTRL = 0x64
GV2_BYTES = _hexdump("""
00: 00 00 01 00 00 00 00 00 80 00 00 00 00 00 00 00
10: 00 04 00 00 00 00 00 00 00 38 00 00 00 00 00 00
20: 00 00 00 00 00 00 00 00 40 00 00 00 08 00 00 00
30: 0e 00 00 00 40 00 00 00 01 00 00 00 64 00 00 00
40: 08 00 0a 00 0a 00 01 00 00 00 01 01 01 01 01 00
""") + bytes(0x30)

# ---------------------------------------------------------------------------------------------
# §5 "im2col examples" (TMA-GV3 .. GV20; part 2). Each: figure, tensor, descriptor fields (range_c,
# range_ndhw, base/far corners (W, H), traversal strides (W, H)), coord (c,w,h,n), packed offset,
# bounding box or grid, first pixel, last base, last pixel (n,h,w), OOB pixel count, OOB pixel
# indices, READs, tx bytes. Every in-bounds pixel is one READ with sectors 0x1.
def _i2c(fig, tensor, range_c, range_ndhw, base, far, ts, coord, off, bbox, first, last_base,
         last_px, oob, oob_idx, reads, tx):
    return dict(fig=fig, tensor=tensor, range_c=range_c, range_ndhw=range_ndhw, base=base, far=far,
                ts=ts, coord=coord, off=off, bbox=bbox, first_px=first, last_base=last_base,
                last_px=last_px, oob_px=oob, oob_idx=oob_idx, reads=reads, tx=tx)


_R = lambda a, b: list(range(a, b + 1))      # noqa: E731  (inclusive range as printed)
_8B = dict(fig="8B", tensor="A", range_c=8, range_ndhw=64, base=(-1, -1), far=(-1, -1), ts=(1, 1),
           coord=(0, 4, 7, 7), bbox=("w", (-1, 7), "h", (-1, 12)))
_8C = dict(fig="8C", tensor="A", range_c=8, range_ndhw=64, base=(0, 0), far=(-2, -2), ts=(1, 1),
           coord=(0, 4, 7, 7), bbox=("w", (0, 6), "h", (0, 11)))
_8F = dict(fig="8F", tensor="A", range_c=16, range_ndhw=32, base=(-1, -1), far=(-1, -1), ts=(2, 2),
           coord=(0, 5, 7, 7), bbox=("w", (-1, 1, 3, 5, 7), "h", (-1, 1, 3, 5, 7, 9, 11)))
_8G = dict(_8F, fig="8G", tensor="C", bbox=("w", (-1, 1, 3, 5), "h", (-1, 1, 3, 5, 7, 9, 11)))
_8J = dict(fig="8J", tensor="A", range_c=16, range_ndhw=64, base=(-2, -2), far=(-2, -2), ts=(1, 1),
           coord=(0, 3, 6, 7), bbox=("w", (-2, 6), "h", (-2, 11)))
IM2COL = {
    "GV3": _i2c(**_8B, off=0x0000, first=(7, 7, 4), last_base=(8, 0, 4), last_px=(8, 0, 4), oob=15,
                oob_idx=[4, 13, 22, 31, 40] + _R(49, 58), reads=49, tx=1024),
    "GV4": _i2c(**_8B, off=0x0101, first=(7, 8, 5), last_base=(8, 0, 4), last_px=(8, 1, 5), oob=0,
                oob_idx=[], reads=64, tx=1024),
    "GV5": _i2c(**_8B, off=0x0202, first=(7, 9, 6), last_base=(8, 0, 4), last_px=(8, 2, 6), oob=15,
                oob_idx=[3, 12, 21, 30] + _R(39, 48) + [57], reads=49, tx=1024),
    "GV6": _i2c(**_8C, off=0x0000, first=(7, 7, 4), last_base=(8, 4, 4), last_px=(8, 4, 4), oob=0,
                oob_idx=[], reads=64, tx=1024),
    "GV7": _i2c(**_8C, off=0x0101, first=(7, 8, 5), last_base=(8, 4, 4), last_px=(8, 5, 5), oob=0,
                oob_idx=[], reads=64, tx=1024),
    "GV8": _i2c(**_8C, off=0x0202, first=(7, 9, 6), last_base=(8, 4, 4), last_px=(8, 6, 6), oob=0,
                oob_idx=[], reads=64, tx=1024),
    "GV11": _i2c(**_8F, off=0x0000, first=(7, 7, 5), last_base=(8, 5, 7), last_px=(8, 5, 7), oob=10,
                 oob_idx=[2, 7] + _R(12, 17) + [22, 27], reads=22, tx=1024),
    "GV12": _i2c(**_8F, off=0x0101, first=(7, 8, 6), last_base=(8, 5, 7), last_px=(8, 6, 8), oob=0,
                 oob_idx=[], reads=32, tx=1024),
    "GV13": _i2c(**_8F, off=0x0202, first=(7, 9, 7), last_base=(8, 5, 7), last_px=(8, 7, 9), oob=7,
                 oob_idx=[1, 6, 11, 16, 21, 26, 31], reads=25, tx=1024),
    "GV14": _i2c(**_8G, off=0x0000, first=(7, 7, 5), last_base=(8, 9, 3), last_px=(8, 9, 3), oob=11,
                 oob_idx=[1, 5] + _R(9, 13) + [17, 21, 25, 29], reads=21, tx=1024),
    "GV15": _i2c(**_8G, off=0x0101, first=(7, 8, 6), last_base=(8, 9, 3), last_px=(8, 10, 4), oob=0,
                 oob_idx=[], reads=32, tx=1024),
    "GV16": _i2c(**_8G, off=0x0202, first=(7, 9, 7), last_base=(8, 9, 3), last_px=(8, 11, 5), oob=4,
                 oob_idx=[5, 6, 7, 8], reads=28, tx=1024),
    "GV18": _i2c(**_8J, off=0x0000, first=(7, 6, 3), last_base=(8, -1, 3), last_px=(8, -1, 3),
                 oob=25, oob_idx=[4, 5, 13, 14, 22, 23, 31, 32, 40, 41] + _R(49, 63), reads=39,
                 tx=2048),
    "GV19": _i2c(**_8J, off=0x0202, first=(7, 8, 5), last_base=(8, -1, 3), last_px=(8, 1, 5), oob=0,
                 oob_idx=[], reads=64, tx=2048),
    "GV20": _i2c(**_8J, off=0x0404, first=(7, 10, 7), last_base=(8, -1, 3), last_px=(8, 3, 7),
                 oob=28, oob_idx=[2, 3, 11, 12, 20, 21] + _R(29, 48) + [56, 57], reads=36, tx=2048),
}
# In GV6/7/8, GV12/13 and GV15/16 the spec prints only "-> last pixel"; the last base equals
# that of the offset-0 vector of the same figure (the base walk does not depend on the offset).

# §5 TMA-GV22 — READ addresses for GV3/GV4/GV11: (pixel index, line byte address);
# pixel address = 0x10000 + n*16128 + h*1152 + w*128
GV22 = {
    "GV3": ([(0, 0x2DA80), (1, 0x2DB00), (2, 0x2DB80), (3, 0x2DC00), (5, 0x2DD00), (6, 0x2DD80)],
            (63, 0x2FA00)),
    "GV4": ([(0, 0x2DF80), (1, 0x2E000), (2, 0x2E080)], (63, 0x2FF00)),
    "GV11": ([(0, 0x2DB00), (1, 0x2DC00), (3, 0x2E200)], (31, 0x31200)),
}

# ---------------------------------------------------------------------------------------------
# §5 "Tile examples" (TMA-GV9, GV10, GV17, GV21): a row is one pixel of 8 channels (16 B); every
# in-bounds row is one READ with sectors 0x1; dense offset of box row (i_h, i_w) = (box_w*i_h + i_w)*16.
# Each: figure, tensor, box (c,w,h,n), ts (c,w,h,n), coord (c,w,h,n), rows, in-bounds pixels
# (w range, h range), READs, smem/tx bytes, sub-tile starts ((side, [(i_h, i_w)...], [offsets])).
TILE_FIG8 = {
    "GV9": dict(fig="8D", tensor="B", box=(8, 10, 10, 1), ts=(1, 1, 1, 1), coord=(0, -1, -1, 0),
                rows=100, inb_px=72, inb_w=(0, 7), inb_h=(0, 8), reads=72, tx=1600,
                subtiles=(8, [(0, 0), (1, 1), (2, 2)], [0, 176, 352])),
    "GV10": dict(fig="8E", tensor="B", box=(8, 8, 8, 1), ts=(1, 1, 1, 1), coord=(0, 0, 0, 0),
                 rows=64, inb_px=64, inb_w=(0, 7), inb_h=(0, 7), reads=64, tx=1024,
                 subtiles=(6, [(0, 0), (1, 1), (2, 2)], [0, 144, 288])),
    "GV17": dict(fig="8H", tensor="B", box=(8, 10, 10, 1), ts=(1, 2, 2, 1), coord=(0, -1, -1, 0),
                 rows=25, inb_px=16, inb_w=(1, 7), inb_h=(1, 7), reads=16, tx=400, subtiles=None),
    "GV21": dict(fig="8K", tensor="B", box=(8, 12, 12, 1), ts=(1, 1, 1, 1), coord=(0, -2, -2, 0),
                 rows=144, inb_px=80, inb_w=(0, 7), inb_h=(0, 9), reads=80, tx=2304,
                 subtiles=(8, [(0, 0), (2, 2), (4, 4)], [0, 416, 832])),
}
# GV17: rows at w, h in {-1, 1, 3, 5, 7}; in bounds w, h in {1, 3, 5, 7}
GV17_POSITIONS = (-1, 1, 3, 5, 7)
# §5 "TMA-GV9 detail": (box row, line byte address, dense) of the first, second and last READ;
# box rows 0-10 are fill
GV9_DETAIL = dict(first=(11, 0x10000, 176), second=(12, 0x10080, 192), last=(98, 0x12380, 1568),
                  fill_rows=list(range(0, 11)))

# ---------------------------------------------------------------------------------------------
# §5 TMA-GV23 — Fig 9A table (SWIZZLE_128B): slot = chunk XOR (row & 7)
GV23 = [
    [0, 1, 2, 3, 4, 5, 6, 7],
    [1, 0, 3, 2, 5, 4, 7, 6],
    [2, 3, 0, 1, 6, 7, 4, 5],
    [3, 2, 1, 0, 7, 6, 5, 4],
    [4, 5, 6, 7, 0, 1, 2, 3],
    [5, 4, 7, 6, 1, 0, 3, 2],
    [6, 7, 4, 5, 2, 3, 0, 1],
    [7, 6, 5, 4, 3, 2, 1, 0],
]

# §5 TMA-GV24 — Fig 9B-9D placement: NHWC 1x10x10x64 F16, box {64,10,10,1}, coord 0, SW128B,
# smem_addr 0 (global_address: Fig 8 common setup). Unit u = (10h + w)*8 + k lands at
# 128p + 16*(k ^ (p & 7)), p = 10h + w. Rows: (unit, h, w, k, row p, slot, smem byte)
GV24_DESC = dict(global_address=FIG8_GADDR, tensor_size=(64, 10, 10, 1),
                 tensor_stride=(128, 1280, 12800), rank=4, dtype=DType.F16,
                 box_size=(64, 10, 10, 1), swizzle=Swizzle.SW128B)
GV24 = [(0, 0, 0, 0, 0, 0, 0), (1, 0, 0, 1, 0, 1, 16), (8, 0, 1, 0, 1, 1, 144),
        (56, 0, 7, 0, 7, 7, 1008), (59, 0, 7, 3, 7, 4, 960), (80, 1, 0, 0, 10, 2, 1312),
        (81, 1, 0, 1, 10, 3, 1328), (88, 1, 1, 0, 11, 3, 1456), (799, 9, 9, 7, 99, 4, 12736)]

# §5 TMA-GV25 — Fig 9 request statistics: 100 READs, line = 0x10000 + 128p, sectors 0xF,
# 12,800 B; 100 smem beats; tx 12,800
GV25 = dict(reads=100, line0=0x10000, sectors=0xF, bytes=12800, beats=100, tx=12800)

# §5 TMA-GV26 — swizzle closed form on CTA-relative addresses: (A, SW32B, SW64B, SW128B)
GV26 = [(0x0A0, 0x0B0, 0x0B0, 0x0B0), (0x080, 0x090, 0x090, 0x090), (0x1F0, 0x1E0, 0x1C0, 0x1C0),
        (0x390, 0x380, 0x3A0, 0x3E0), (0x3FF, 0x3EF, 0x3CF, 0x38F),
        (0x12345, 0x12345, 0x12365, 0x12325)]

# §5 TMA-GV27 — 32B swizzle, 2-D
GV27_DESC = dict(global_address=0x2000, tensor_size=(32, 64), tensor_stride=(32,), rank=2,
                 dtype=DType.U8, box_size=(32, 8), swizzle=Swizzle.SW32B)
GV27_CMD = dict(op=CmdOp.TENSOR_LOAD, rank=2, coord=(0, 0), smem_addr=0x400)
# row i -> line 0x2000 + 128*(i >> 2), sectors 1 << (i & 3); element (i, j) at 0x400 + 32i + j for
# i < 4, else (0x400 + 32i + j) ^ 0x10
GV27 = dict(reads=[(0x2000 + 128 * (i >> 2), 1 << (i & 3)) for i in range(8)],
            examples=[((4, 0), 0x490), ((4, 16), 0x480), ((7, 31), 0x4EF)], beats=8, tx=256)

# §5 "Line-splitting vectors" (U8, 1-D, global_address 0x1000, smem_addr 0):
# pieces (line byte address, sectors, (lane lo, lane hi), (dense lo, dense hi)), fill (dense), tx
LINE_SPLIT_DESC = dict(global_address=0x1000, rank=1, dtype=DType.U8, box_size=(256,))
GV28 = dict(size=1000, box=256, coord=100,
            pieces=[(0x1000, 0x8, (100, 127), (0, 27)), (0x1080, 0xF, (0, 127), (28, 155)),
                    (0x1100, 0xF, (0, 99), (156, 255))], fill=None, tx=256, beats=4)
GV29 = dict(size=300, box=256, coord=200,
            pieces=[(0x1080, 0xC, (72, 127), (0, 55)), (0x1100, 0x3, (0, 43), (56, 99))],
            fill=(100, 255), tx=256)

# §5 TMA-GV30 — rows narrower than a line share it
GV30_DESC = dict(global_address=0x2000, tensor_size=(16, 8), tensor_stride=(16,), rank=2,
                 dtype=DType.U8, box_size=(16, 8))
GV30 = dict(load=[(0x2000, s) for s in (0x1, 0x1, 0x2, 0x2, 0x4, 0x4, 0x8, 0x8)],
            prefetch=[(0x2000, 0xF)])

# §5 TMA-GV31 — BLOCK_G2S gaddr 0x1070, num_blocks 20 (320 B), smem_addr 0x200
GV31_CMD = dict(op=CmdOp.BLOCK_G2S, gaddr=0x1070, num_blocks=20, smem_addr=0x200)
GV31 = dict(pieces=[(0x1000, 0x8, (112, 127), (0, 15)), (0x1080, 0xF, (0, 127), (16, 143)),
                    (0x1100, 0xF, (0, 127), (144, 271)), (0x1180, 0x3, (0, 47), (272, 319))],
            beats=6, beat_rows=[4, 4, 5, 5, 6, 6],
            alt_smem_addr=0x270, alt_ranges=[(0x270, 0x27F), (0x280, 0x2FF), (0x300, 0x37F),
                                             (0x380, 0x3AF)],
            alt_beats=4, alt_beat_rows=[4, 5, 6, 7], alt_dense_rows=6, tx=320,
            prefetch=[(0x1000, 0xF), (0x1080, 0xF), (0x1100, 0xF), (0x1180, 0xF)])

# §5 TMA-GV32 — NOP: BLOCK_G2S with num_blocks 0 and any addresses, even misaligned
GV32_CMD = dict(op=CmdOp.BLOCK_G2S, num_blocks=0, gaddr=0x1234567, smem_addr=0x3, smem_dst=0x5,
                mbar_addr=0x7)

# §5 TMA-GV33 — OOB fill patterns on GV9: fill mode -> bytes of each OOB F16 element
GV33_CONST = 0x123456789ABCDEF0
GV33 = {OobFill.CONST: bytes([0xF0, 0xDE]), OobFill.NAN: bytes([0xFF, 0x7F]),
        OobFill.ZERO: bytes([0x00, 0x00])}
# the 28 fill pixels as (h, w): h = -1 (10), (0, -1), w = -1 of h = 1..8, w = 8 of h = 0..8
GV33_FILL_PIXELS = ([(-1, w) for w in range(-1, 9)] + [(0, -1)] + [(h, -1) for h in range(1, 9)]
                    + [(h, 8) for h in range(0, 9)])
GV33_FILL_BYTES = 448
GV33_FILL_DENSE = (0, 175)           # box rows 0-10

# §5 TMA-GV34 — multicast on GV9: mcast 1, cta_mask 0x0005
GV34 = dict(cta_mask=0x0005, ctas=(0, 2), not_written=1, tx=1600)

# §5 TMA-GV35 — TENSOR_STORE, right-edge OOB (GV29 geometry, smem_addr 0): WRITEs
# (line, sectors, be lanes, smem bytes); smem bytes 100-255 unused; global bytes >= 0x112C unchanged
GV35 = dict(writes=[(0x1080, 0xC, (72, 127), (0, 55)), (0x1100, 0x3, (0, 43), (56, 99))],
            unchanged_from=0x112C)

# §5 TMA-GV36 — BLOCK_S2S to a peer CTA
GV36_CMD = dict(op=CmdOp.BLOCK_S2S, smem_addr=0x100, smem_dst=0x1F0, num_blocks=4, cta_id=0,
                mcast=1, cta_mask=0x0002, mbar_addr=0x20000)
GV36 = dict(dst_cta=1, dst=(0x1F0, 0x22F), src=(0x100, 0x13F), beat_rows=[3, 4], mask=0x0002,
            tx=64)

# ---------------------------------------------------------------------------------------------
# §5 "Reduction vectors" TMA-GV37 .. GV72 (part 2): (op, dtype, old, b, result)
RED = {
    "GV37": (RedOp.INC, DType.U32, 0x00000005, 0x00000005, 0x00000000),
    "GV38": (RedOp.INC, DType.U32, 0x00000003, 0x00000005, 0x00000004),
    "GV39": (RedOp.INC, DType.U32, 0x00000006, 0x00000005, 0x00000000),
    "GV40": (RedOp.INC, DType.U32, 0xFFFFFFFF, 0xFFFFFFFF, 0x00000000),
    "GV41": (RedOp.DEC, DType.U32, 0x00000000, 0x00000005, 0x00000005),
    "GV42": (RedOp.DEC, DType.U32, 0x00000007, 0x00000005, 0x00000005),
    "GV43": (RedOp.DEC, DType.U32, 0x00000003, 0x00000005, 0x00000002),
    "GV44": (RedOp.DEC, DType.U32, 0x00000005, 0x00000005, 0x00000004),
    "GV45": (RedOp.ADD, DType.U32, 0xFFFFFFFF, 0x00000002, 0x00000001),
    "GV46": (RedOp.ADD, DType.U64, 0xFFFFFFFFFFFFFFFF, 0x0000000000000001, 0x0000000000000000),
    "GV47": (RedOp.MIN, DType.S32, 0xFFFFFFFF, 0x00000001, 0xFFFFFFFF),
    "GV48": (RedOp.MIN, DType.U32, 0xFFFFFFFF, 0x00000001, 0x00000001),
    "GV49": (RedOp.MAX, DType.S64, 0x8000000000000000, 0x0000000000000000, 0x0000000000000000),
    "GV50": (RedOp.AND, DType.U32, 0xF0F0F0F0, 0x0FF00FF0, 0x00F000F0),
    "GV51": (RedOp.OR, DType.U32, 0xF0F0F0F0, 0x0FF00FF0, 0xFFF0FFF0),
    "GV52": (RedOp.XOR, DType.U32, 0xF0F0F0F0, 0x0FF00FF0, 0xFF00FF00),
    "GV53": (RedOp.ADD, DType.F32, 0x00C00000, 0x80800000, 0x00000000),
    "GV54": (RedOp.ADD, DType.F32, 0x00800000, 0x80600000, 0x00800000),
    "GV55": (RedOp.ADD, DType.F32, 0x3F800000, 0x33800000, 0x3F800000),
    "GV56": (RedOp.ADD, DType.F32, 0x3F800000, 0x33800001, 0x3F800001),
    "GV57": (RedOp.ADD, DType.F32, 0x7F800000, 0xFF800000, 0x7FFFFFFF),
    "GV58": (RedOp.ADD, DType.F32, 0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000),
    "GV59": (RedOp.ADD, DType.F16, 0x3C00, 0x1000, 0x3C00),
    "GV60": (RedOp.ADD, DType.F16, 0x3C00, 0x1001, 0x3C01),
    "GV61": (RedOp.ADD, DType.F16, 0x3C01, 0x1000, 0x3C02),
    "GV62": (RedOp.ADD, DType.F16, 0x0001, 0x0001, 0x0002),
    "GV63": (RedOp.ADD, DType.F16, 0x7BFF, 0x7BFF, 0x7C00),
    "GV64": (RedOp.ADD, DType.BF16, 0x3F80, 0x3B80, 0x3F80),
    "GV65": (RedOp.ADD, DType.BF16, 0x3F81, 0x3B80, 0x3F82),
    "GV66": (RedOp.ADD, DType.BF16, 0x0001, 0x0001, 0x0002),
    "GV67": (RedOp.ADD, DType.BF16, 0x7F7F, 0x7F7F, 0x7F80),
    "GV68": (RedOp.MAX, DType.F16, 0x7E00, 0x3C00, 0x3C00),
    "GV69": (RedOp.MAX, DType.F16, 0x7E00, 0xFE00, 0x7FFF),
    "GV70": (RedOp.MIN, DType.F16, 0x0000, 0x8000, 0x8000),
    "GV71": (RedOp.MAX, DType.F16, 0x8000, 0x0000, 0x0000),
    "GV72": (RedOp.MIN, DType.BF16, 0x3F80, 0xBF80, 0xBF80),
}

# §5 TMA-GV73 — convolution check (TMA-V3; part 2): input NHWC N=2, H=5, W=6, C=16 S32 in [-8, 8);
# weights R=S=3, K=8; im2col rank 4, range_c 16; base = -pad, far = pad - (R-1)*dil,
# ts(W,H) = stride; each load coord (0, base_w, base_h, 0), offsets (s*dil, r*dil).
GV73_SHAPE = dict(N=2, H=5, W=6, C=16, R=3, S=3, K=8, dtype=DType.S32, value_range=(-8, 8))
GV73 = [((1, 1, 1), 60), ((2, 2, 1), 60), ((1, 1, 2), 18), ((0, 1, 1), 24)]   # (pad, dil, stride), range_ndhw

# ---------------------------------------------------------------------------------------------
# §5 "Error vectors (TMA-GV74..TMA-GV106)". Bases: T = the GV9 tile load, I = the GV6 im2col load,
# B = the GV31 BLOCK_G2S, S = the GV36 BLOCK_S2S; default parameters (SMEM_SIZE = 0x40000).
# B and S carry mbar_addr 0x20000 (the Fig 8 common setup; GV31 states none).
ERROR_BASES = {
    "T": (fig8_desc("B", mode=Mode.TILE, box_size=(8, 10, 10, 1)),
          fig8_cmd(coord=(0, -1, -1, 0))),
    "I": (fig8_desc("A", mode=Mode.IM2COL, range_c=8, range_ndhw=64, base_corner=(0, 0),
                    far_corner=(-2, -2)),
          fig8_cmd(mode=Mode.IM2COL, coord=(0, 4, 7, 7), im2col_off=0)),
    "B": (None, dict(GV31_CMD, mbar_addr=FIG8_MBAR)),
    "S": (None, dict(GV36_CMD)),
}
_B = FIG8_TENSORS["B"]
# id: (base, command changes, descriptor changes, expected code)
ERRORS = {
    "GV74": ("T", dict(op=11), {}, 0x01),
    "GV75": ("T", dict(op=CmdOp.TENSOR_STORE, mcast=1, cta_mask=0x3), {}, 0x02),
    "GV76": ("T", dict(mcast=1, cta_mask=0), {}, 0x03),
    "GV77": ("T", dict(desc_addr=0x8040), {}, 0x04),
    "GV78": ("T", {}, dict(rank=6), 0x05),
    "GV79": ("T", dict(rank=3), {}, 0x06),
    "GV80": ("T", dict(mode=1), {}, 0x07),
    "GV81": ("I", dict(rank=2), dict(rank=2), 0x08),
    "GV82": ("T", {}, dict(dtype=13), 0x09),
    "GV83": ("T", {}, dict(interleave=3), 0x0A),
    "GV84": ("T", {}, dict(global_address=0x10008), 0x0B),
    "GV85": ("B", dict(gaddr=2 ** 64 - 16, num_blocks=2), {}, 0x0C),
    "GV86": ("T", {}, dict(tensor_size=(64, 8, 0, 64)), 0x0D),
    "GV87": ("T", {}, dict(tensor_stride=(128, 1032, 14336)), 0x0E),
    "GV88": ("T", {}, dict(tensor_stride=(128, 1024, 2 ** 40)), 0x0F),
    "GV89": ("T", {}, dict(interleave=Interleave.I16B), 0x10),
    "GV90": ("T", {}, dict(box_size=(8, 257, 10, 1)), 0x11),
    "GV91": ("I", {}, dict(range_c=0), 0x12),
    "GV92": ("T", {}, dict(box_size=(4, 10, 10, 1)), 0x13),
    "GV93": ("T", {}, dict(traversal_stride=(0, 1, 1, 1, 1)), 0x14),
    "GV94": ("T", dict(smem_addr=0), dict(box_size=(32, 10, 10, 1), swizzle=Swizzle.SW32B), 0x15),
    "GV95": ("T", {}, dict(tensor_size=(16, 8, 14, 8), tensor_stride=(32, 256, 3584),
                           box_size=(16, 8, 8, 1), interleave=Interleave.I32B,
                           swizzle=Swizzle.NONE), 0x16),
    "GV96": ("T", {}, dict(oob_fill=3), 0x17),
    "GV97": ("T", {}, dict(oob_fill=OobFill.NAN, dtype=DType.U16), 0x18),
    "GV98": ("I", {}, dict(base_corner=(-129, 0)), 0x19),
    "GV99": ("I", {}, dict(base_corner=(5, 0), far_corner=(-5, -2)), 0x1A),
    "GV100": ("I", dict(coord=(7, 7, 4, 0)), {}, 0x1B),
    "GV101": ("T", dict(op=CmdOp.TENSOR_RED, red_op=RedOp.INC), {}, 0x1C),
    "GV102": ("T", dict(smem_addr=0x80), dict(swizzle=Swizzle.SW128B), 0x1D),
    "GV103": ("T", dict(smem_addr=0x3FC00), {}, 0x1E),
    "GV104": ("T", dict(mbar_addr=0x20004), {}, 0x1F),
    "GV105": ("T", {}, dict(global_address=0x10008, box_size=(8, 0, 10, 1)), 0x0B),
    "GV106": ("S", dict(mcast=0, smem_dst=0x120), {}, 0x20),
}
# Variants stated in the same rows: (id, base, command changes, descriptor changes, code)
ERROR_VARIANTS = [
    ("GV95", "T", {}, dict(tensor_size=(16, 8, 14, 8), tensor_stride=(32, 256, 3584),
                           box_size=(16, 8, 8, 1), interleave=Interleave.I32B,
                           swizzle=Swizzle.SW32B), 0x00),
    ("GV106", "S", dict(mcast=1, cta_mask=0x0003, smem_dst=0x120), {}, 0x20),
    ("GV106", "S", dict(mcast=0, smem_dst=0x100), {}, 0x00),
    ("GV106", "S", dict(mcast=0, smem_dst=0x140), {}, 0x00),
]

# ---------------------------------------------------------------------------------------------
# §5 TMA-GV107 — a row crossing 2^ADDR_W (ADDR_W = 40)
GV107_ADDR_W = 40
GV107_DESC = dict(global_address=2 ** 40 - 64, tensor_size=(256,), rank=1, dtype=DType.U8,
                  box_size=(128,))
GV107 = dict(pieces=[(0xFFFFFFFF80, 0xC, (64, 127), (0, 63)), (0x0, 0x3, (0, 63), (64, 127))],
             smem=[((0, 63), 0xFFFFFFFFC0), ((64, 127), 0x00)], beats=2, tx=128,
             prefetch=[(0xFFFFFFFF80, 0xF), (0x0, 0xF)])

# §5 TMA-GV108 — coordinates past 2^31 - 1
GV108_DESC = dict(global_address=0x1000, tensor_size=(0xFFFFFFFF,), rank=1, dtype=DType.U8,
                  box_size=(256,))
GV108_COORD = 0x7FFFFF80
GV108 = dict(pieces=[(0x80000F80, 0xF, (0, 127), (0, 127)), (0x80001000, 0xF, (0, 127), (128, 255))],
             tx=256)

# §5 TMA-GV109 — aliased rows, stride 0
GV109_DESC = dict(global_address=0x3000, tensor_size=(4, 3), tensor_stride=(0,), rank=2,
                  dtype=DType.U32, box_size=(4, 3))
GV109_SMEM_WORDS = [[0x10 * i + j for j in range(4)] for i in range(3)]     # smem word (i, j)
GV109_GLOBAL_WORDS = [0x100 + j for j in range(4)]                        # at 0x3000 + 4j
GV109 = dict(requests=[(0x3000, 0x1, (0, 15), d) for d in (0, 16, 32)], load_tx=48,
             store_words=[0x20 + j for j in range(4)],
             red_add_words=[0x130 + 4 * j for j in range(4)],
             red_inc_words=[2, 2, 2, 2], red_inc_reverse=[0, 0, 2, 2])
