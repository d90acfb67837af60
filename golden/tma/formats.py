"""TMA formats shared by hardware, golden model and testbenches (spec tma.md §3.2-§3.3, §4.1-§4.3).

One definition, three users: ``hw/tma`` turns these :class:`~golden.common.fields.Fields` into
Amaranth layouts (``hw.common.layout.struct_layout``) and the enumerations into ``amaranth.lib.enum``
members; ``golden/tma`` and ``tb/tma`` pack and unpack the same integers with them.

Contents:

- fixed constants (TMA-C10);
- the enumerations of §4.1 (:class:`CmdOp`, :class:`RedOp`, :class:`L2Op`, :class:`Mode`,
  :class:`Interleave`, :class:`Swizzle`, :class:`OobFill`, :class:`DType`) with element sizes,
  float types, default NaN fills and the reduction type table ``RED_OK`` (§4.9);
- the error codes of §3.4 (:class:`ErrCode`);
- the 128-byte descriptor layout ``DESC_FIELDS`` (§4.2) and the decoded descriptor :class:`TmaDesc`;
- the command :class:`TmaCmd` and its layout :func:`cmd_fields` (§4.3);
- the stream payload layouts of §3.2 (``*_fields(params)``) and the golden records that travel on
  them (:class:`L2Req`, :class:`SmemBeat`, :class:`MbarUpdate`).
"""

from dataclasses import asdict, dataclass, field, fields as dc_fields, replace
from enum import IntEnum

from golden.common.fields import Fields

__all__ = [
    "LINE", "SECTOR", "CHUNK", "BLOCK", "MAX_RANK", "BOX_MAX", "TS_MAX", "RANGE_C_MAX",
    "RANGE_NDHW_MAX", "CTA_MASK_W", "N_CTA", "DESC_BYTES", "DATA_W", "BE_W",
    "CmdOp", "RedOp", "L2Op", "Mode", "Interleave", "Swizzle", "OobFill", "DType", "ErrCode",
    "TENSOR_OPS", "BLOCK_OPS", "CONTROL_OPS", "MCAST_OPS", "MBAR_OPS", "op_class",
    "ESIZE", "FLOAT_DTYPES", "DEFAULT_NAN_PATTERN", "SWIZZLE_SPAN", "SLICE_BYTES", "RED_OK",
    "l2_red_op", "DESC_FIELDS", "DESC_BYTE_OFFSETS", "TmaDesc", "TmaCmd", "cmd_fields",
    "desc_rd_req_fields", "desc_rd_resp_fields", "l2_req_fields", "l2_resp_fields",
    "smem_wr_fields", "smem_rd_req_fields", "smem_rd_resp_fields", "mbar_fields", "err_fields",
    "done_fields", "placement_fields", "SEQ_W", "L2Req", "SmemBeat", "MbarUpdate", "bytes_to_int", "int_to_bytes",
]

# ---------------------------------------------------------------------------------------------
# Fixed constants (TMA-C10)
LINE = 128              # L2 line and smem row, bytes
SECTOR = 32             # L2 sector, bytes
CHUNK = 16              # swizzle chunk, bytes
BLOCK = 16              # descriptor-less block, bytes
MAX_RANK = 5
BOX_MAX = 256
TS_MAX = 8
RANGE_C_MAX = 256
RANGE_NDHW_MAX = 1024
CTA_MASK_W = 16
N_CTA = 16
DESC_BYTES = 128
DATA_W = 8 * LINE       # data field width of l2_req / l2_resp / smem_wr / smem_rd_resp / desc_rd_resp
BE_W = LINE             # byte enables


# ---------------------------------------------------------------------------------------------
# Enumerations (§4.1)
class CmdOp(IntEnum):
    """``cmd.op`` (4 bits); 11..15 are reserved (rule 0x01)."""
    TENSOR_LOAD = 0
    TENSOR_STORE = 1
    TENSOR_RED = 2
    TENSOR_PREFETCH = 3
    BLOCK_G2S = 4
    BLOCK_S2G = 5
    BLOCK_S2S = 6
    BLOCK_RED = 7
    BLOCK_PREFETCH = 8
    WAIT_ALL = 9
    DESC_INVAL = 10


class RedOp(IntEnum):
    """``cmd.red_op`` (3 bits)."""
    ADD = 0
    MIN = 1
    MAX = 2
    INC = 3
    DEC = 4
    AND = 5
    OR = 6
    XOR = 7


class L2Op(IntEnum):
    """``l2_req.op`` (4 bits): 0 READ, 1 WRITE, 2 PREFETCH, 8 + RedOp; 3..7 unused."""
    READ = 0
    WRITE = 1
    PREFETCH = 2
    RED_ADD = 8
    RED_MIN = 9
    RED_MAX = 10
    RED_INC = 11
    RED_DEC = 12
    RED_AND = 13
    RED_OR = 14
    RED_XOR = 15


def l2_red_op(red_op):
    """The L2Op of a reduction: ``8 + red_op``."""
    return L2Op(8 + RedOp(red_op))


class Mode(IntEnum):
    """Descriptor ``ctrl[3]`` and ``cmd.mode``."""
    TILE = 0
    IM2COL = 1


class Interleave(IntEnum):
    """Descriptor ``ctrl[9:8]``; 3 is reserved (rule 0x0A)."""
    NONE = 0
    I16B = 1
    I32B = 2


class Swizzle(IntEnum):
    """Descriptor ``ctrl[11:10]``; the code m keys ``SWZ_TABLE`` (TMA-C8)."""
    NONE = 0
    SW32B = 1
    SW64B = 2
    SW128B = 3


class OobFill(IntEnum):
    """Descriptor ``ctrl[13:12]``; 3 is reserved (rule 0x17)."""
    ZERO = 0
    CONST = 1
    NAN = 2


class DType(IntEnum):
    """Descriptor ``ctrl[7:4]`` and ``cmd.dtype`` (CUDA ``CUtensorMapDataType`` order); 13..15
    reserved (rule 0x09)."""
    U8 = 0
    U16 = 1
    U32 = 2
    S32 = 3
    U64 = 4
    S64 = 5
    F16 = 6
    F32 = 7
    F64 = 8
    BF16 = 9
    F32_FTZ = 10
    TF32 = 11
    TF32_FTZ = 12


ESIZE = {DType.U8: 1, DType.U16: 2, DType.U32: 4, DType.S32: 4, DType.U64: 8, DType.S64: 8,
         DType.F16: 2, DType.F32: 4, DType.F64: 8, DType.BF16: 2, DType.F32_FTZ: 4, DType.TF32: 4,
         DType.TF32_FTZ: 4}
FLOAT_DTYPES = frozenset({DType.F16, DType.F32, DType.F64, DType.BF16, DType.F32_FTZ, DType.TF32,
                          DType.TF32_FTZ})
# TMA-C9 defaults
DEFAULT_NAN_PATTERN = {DType.F16: 0x7FFF, DType.BF16: 0x7FFF, DType.F32: 0x7FFFFFFF,
                       DType.F32_FTZ: 0x7FFFFFFF, DType.TF32: 0x7FFFFFFF, DType.TF32_FTZ: 0x7FFFFFFF,
                       DType.F64: 0x7FFFFFFFFFFFFFFF}
SWIZZLE_SPAN = {Swizzle.SW32B: 32, Swizzle.SW64B: 64, Swizzle.SW128B: 128}
SLICE_BYTES = {Interleave.I16B: 16, Interleave.I32B: 32}

# §4.9 supported (red_op, dtype) pairs
_RED_TYPES = {
    RedOp.ADD: (DType.U32, DType.S32, DType.U64, DType.F32, DType.F16, DType.BF16),
    RedOp.MIN: (DType.U32, DType.S32, DType.U64, DType.S64, DType.F16, DType.BF16),
    RedOp.MAX: (DType.U32, DType.S32, DType.U64, DType.S64, DType.F16, DType.BF16),
    RedOp.INC: (DType.U32,),
    RedOp.DEC: (DType.U32,),
    RedOp.AND: (DType.U32, DType.S32, DType.U64, DType.S64),
    RedOp.OR: (DType.U32, DType.S32, DType.U64, DType.S64),
    RedOp.XOR: (DType.U32, DType.S32, DType.U64, DType.S64),
}
RED_OK = frozenset((op, dt) for op, dts in _RED_TYPES.items() for dt in dts)

TENSOR_OPS = frozenset({CmdOp.TENSOR_LOAD, CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED,
                        CmdOp.TENSOR_PREFETCH})
BLOCK_OPS = frozenset({CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2G, CmdOp.BLOCK_S2S, CmdOp.BLOCK_RED,
                       CmdOp.BLOCK_PREFETCH})
CONTROL_OPS = frozenset({CmdOp.WAIT_ALL, CmdOp.DESC_INVAL})
MCAST_OPS = frozenset({CmdOp.TENSOR_LOAD, CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2S})   # rule 0x02
MBAR_OPS = MCAST_OPS                                                         # rule 0x1F, TMA-F35


def op_class(op):
    """TMA-F3: ``"tensor"`` (uses the descriptor cache), ``"block"`` (bypasses it), ``"control"``
    (WAIT_ALL, DESC_INVAL) or ``"reserved"`` (11..15, rejected by rule 0x01)."""
    if op in TENSOR_OPS:
        return "tensor"
    if op in BLOCK_OPS:
        return "block"
    if op in CONTROL_OPS:
        return "control"
    return "reserved"


class ErrCode(IntEnum):
    """``err.code`` (§3.4), in evaluation order; 0 means no error."""
    OK = 0x00
    E_OPCODE = 0x01
    E_MCAST_OP = 0x02
    E_MCAST_MASK = 0x03
    E_DESC_ALIGN = 0x04
    E_RANK = 0x05
    E_RANK_MISMATCH = 0x06
    E_MODE_MISMATCH = 0x07
    E_IM2COL_RANK = 0x08
    E_DTYPE = 0x09
    E_INTERLEAVE = 0x0A
    E_GADDR_ALIGN = 0x0B
    E_GADDR_RANGE = 0x0C
    E_SIZE = 0x0D
    E_STRIDE_ALIGN = 0x0E
    E_STRIDE_RANGE = 0x0F
    E_INTERLEAVE_SHAPE = 0x10
    E_BOX_RANGE = 0x11
    E_IM2COL_RANGE = 0x12
    E_BOX_INNER = 0x13
    E_TS_RANGE = 0x14
    E_SWIZZLE_SPAN = 0x15
    E_INTERLEAVE_SWIZZLE = 0x16
    E_OOB_MODE = 0x17
    E_OOB_NAN_DTYPE = 0x18
    E_IM2COL_CORNER = 0x19
    E_IM2COL_BBOX = 0x1A
    E_IM2COL_BASE = 0x1B
    E_REDOP_DTYPE = 0x1C
    E_SMEM_ALIGN = 0x1D
    E_SMEM_RANGE = 0x1E
    E_MBAR_ALIGN = 0x1F
    E_S2S_OVERLAP = 0x20


# ---------------------------------------------------------------------------------------------
# Descriptor (§4.2): 128 bytes, little-endian, byte j = bits [8j+7:8j] of desc_rd_resp.data
DESC_FIELDS = Fields(
    ("global_address", 64),
    ("tensor_stride", 64, "unsigned", 4),
    ("tensor_size", 32, "unsigned", 5),
    ("rank", 3), ("mode", 1), ("dtype", 4), ("interleave", 2), ("swizzle", 2), ("oob_fill", 2),
    ("ctrl_reserved", 18),
    ("box_size", 16, "unsigned", 5),
    ("traversal_stride", 8, "unsigned", 5),
    ("reserved_4f", 8),
    ("oob_const", 64),
    ("range_c", 16),
    ("range_ndhw", 16),
    ("base_corner", 16, "signed", 3),
    ("far_corner", 16, "signed", 3),
    ("reserved_68", 192),
)
# Byte offsets of §4.2 (checked against DESC_FIELDS below); ctrl = byte 0x3C
DESC_BYTE_OFFSETS = {"global_address": 0x00, "tensor_stride": 0x08, "tensor_size": 0x28,
                     "rank": 0x3C, "box_size": 0x40, "traversal_stride": 0x4A, "reserved_4f": 0x4F,
                     "oob_const": 0x50, "range_c": 0x58, "range_ndhw": 0x5A, "base_corner": 0x5C,
                     "far_corner": 0x62, "reserved_68": 0x68}
assert DESC_FIELDS.width == 8 * DESC_BYTES
assert all(DESC_FIELDS.offsets[n] == 8 * b for n, b in DESC_BYTE_OFFSETS.items())
assert [DESC_FIELDS.offsets[n] - 8 * 0x3C for n in
        ("rank", "mode", "dtype", "interleave", "swizzle", "oob_fill", "ctrl_reserved")] \
    == [0, 3, 4, 8, 10, 12, 14]
DESC_RESERVED = ("ctrl_reserved", "reserved_4f", "reserved_68")


@dataclass(frozen=True)
class TmaDesc:
    """A decoded descriptor: every field of §4.2, used or not, per-dimension lists full length
    (5 sizes, 4 strides, 5 boxes, 5 traversal strides, 3 + 3 corners). Reserved bits are not kept
    (TMA-E6). Build with :func:`golden.tma.encode.decode_desc` or :meth:`make`."""
    global_address: int = 0
    tensor_stride: tuple = (0, 0, 0, 0)
    tensor_size: tuple = (1, 1, 1, 1, 1)
    rank: int = 0
    mode: int = Mode.TILE
    dtype: int = DType.U8
    interleave: int = Interleave.NONE
    swizzle: int = Swizzle.NONE
    oob_fill: int = OobFill.ZERO
    box_size: tuple = (0, 0, 0, 0, 0)
    traversal_stride: tuple = (1, 1, 1, 1, 1)
    oob_const: int = 0
    range_c: int = 0
    range_ndhw: int = 0
    base_corner: tuple = (0, 0, 0)
    far_corner: tuple = (0, 0, 0)

    # §4.2 "missing entries written as" table
    _PAD = {"tensor_size": (5, 1), "tensor_stride": (4, 0), "box_size": (5, 0),
            "traversal_stride": (5, 1), "base_corner": (3, 0), "far_corner": (3, 0)}

    @classmethod
    def make(cls, **fields):
        """A descriptor from possibly short per-dimension lists, padded per §4.2."""
        for name, value in list(fields.items()):
            if name in cls._PAD:
                fields[name] = _pad_list(name, value, *cls._PAD[name])
            elif name not in cls.__dataclass_fields__:
                raise ValueError(f"unknown descriptor field {name!r}")
        return cls(**fields)

    def replace(self, **changes):
        merged = {**self.as_dict(), **changes}
        return TmaDesc.make(**merged)

    def as_dict(self):
        return {f.name: getattr(self, f.name) for f in dc_fields(self)}

    @property
    def esize(self):
        return ESIZE[DType(self.dtype)]


def _pad_list(name, value, length, pad):
    value = tuple(int(v) for v in value)
    if len(value) > length:
        raise ValueError(f"{name} has {len(value)} entries, at most {length} allowed")
    return value + (pad,) * (length - len(value))


# ---------------------------------------------------------------------------------------------
# Command (§4.3)
def cmd_fields(p):
    """``TmaCmd`` (TMA-I2) for parameters ``p`` (:class:`golden.tma.params.TmaParams`): the fields
    of the §4.3 table in table order, the first at bit 0."""
    return Fields(
        ("id", p.ID_W), ("op", 4), ("mode", 1), ("rank", 3), ("red_op", 3), ("dtype", 4),
        ("desc_addr", p.ADDR_W), ("coord", 32, "signed", 5), ("im2col_off", 16),
        ("gaddr", p.ADDR_W), ("num_blocks", p.NB_W), ("smem_addr", p.SMEM_AW),
        ("smem_dst", p.SMEM_AW), ("mbar_addr", p.SMEM_AW), ("cta_id", 4), ("mcast", 1),
        ("cta_mask", CTA_MASK_W),
    )


@dataclass(frozen=True)
class TmaCmd:
    """One ``cmd`` transfer (§4.3). ``coord`` is innermost first (c, w, h, d, n); shorter lists
    are padded with 0. Field widths are checked by :meth:`check` / :meth:`pack`."""
    id: int = 0
    op: int = CmdOp.TENSOR_LOAD
    mode: int = Mode.TILE
    rank: int = 0
    red_op: int = 0
    dtype: int = 0
    desc_addr: int = 0
    coord: tuple = field(default=(0, 0, 0, 0, 0))
    im2col_off: int = 0
    gaddr: int = 0
    num_blocks: int = 0
    smem_addr: int = 0
    smem_dst: int = 0
    mbar_addr: int = 0
    cta_id: int = 0
    mcast: int = 0
    cta_mask: int = 0

    def __post_init__(self):
        object.__setattr__(self, "coord", _pad_list("coord", self.coord, 5, 0))

    def replace(self, **changes):
        return replace(self, **changes)

    def as_dict(self):
        return asdict(self)

    @property
    def dest_mask(self):
        """Destination CTAs of a load (TMA-F34): ``cta_mask`` when ``mcast``, else ``1 << cta_id``."""
        return self.cta_mask if self.mcast else 1 << self.cta_id

    def pack(self, p):
        return cmd_fields(p).pack(**{k: int(v) if not isinstance(v, tuple) else v
                                     for k, v in self.as_dict().items()})

    def check(self, p):
        """Raise ValueError if a field does not fit its ``TmaCmd`` width under ``p``."""
        self.pack(p)
        return self

    @classmethod
    def unpack(cls, word, p):
        return cls(**cmd_fields(p).unpack(word))


# ---------------------------------------------------------------------------------------------
# Stream payloads (§3.2)
def desc_rd_req_fields(p):
    """``desc_rd_req`` (TMA-I3): 128 B aligned descriptor line address."""
    return Fields(("addr", p.ADDR_W))


def desc_rd_resp_fields():
    """``desc_rd_resp`` (TMA-I3): descriptor byte j in ``data[8j+7:8j]`` (see ``DESC_FIELDS``)."""
    return Fields(("data", DATA_W))


def l2_req_fields(p):
    """``l2_req`` (TMA-I4); lane j of ``data``/``be`` is byte ``line*128 + j``."""
    return Fields(("line", p.ADDR_W - 7), ("sectors", 4), ("tag", p.TAG_W), ("op", 4),
                  ("dtype", 4), ("data", DATA_W), ("be", BE_W))


def l2_resp_fields(p):
    """``l2_resp`` (TMA-I5)."""
    return Fields(("tag", p.TAG_W), ("data", DATA_W))


def smem_wr_fields(p):
    """``smem_wr`` (TMA-I6)."""
    return Fields(("row", p.SMEM_AW - 7), ("data", DATA_W), ("be", BE_W), ("mask", CTA_MASK_W))


def smem_rd_req_fields(p):
    """``smem_rd_req`` (TMA-I7)."""
    return Fields(("row", p.SMEM_AW - 7), ("cta", 4))


def smem_rd_resp_fields():
    """``smem_rd_resp`` (TMA-I7)."""
    return Fields(("data", DATA_W))


def mbar_fields(p):
    """``mbar`` (TMA-I8)."""
    return Fields(("addr", p.SMEM_AW), ("tx", p.SMEM_AW + 1), ("mask", CTA_MASK_W))


# ---------------------------------------------------------------------------------------------
# Internal payloads of the RTL (not ports of the unit; shared by its modules and testbenches)
SEQ_W = 8    # command sequence number carried by pieces: in-order retirement of <= 256 in flight


def placement_fields(p):
    """What a tracker entry keeps for a tracked request (TMA-F28; golden ``tracker.Placement``).

    ``seq`` the owning command (acceptance index mod 2^SEQ_W); ``op`` its L2Op; line lanes
    ``[lane, lane + nbytes)`` (``nbytes`` 1..128) go to CTA-relative smem address ``dst`` =
    smem_addr + dense offset (before swizzle) of every CTA in ``mask``; ``swizzle`` the Swizzle
    code; ``mbar`` the barrier credited with the bytes. WRITE/RED pieces use seq and op only.
    """
    return Fields(("seq", SEQ_W), ("op", 4), ("dst", p.SMEM_AW), ("lane", 7), ("nbytes", 8),
                  ("swizzle", 2), ("mask", CTA_MASK_W), ("mbar", p.SMEM_AW))


def err_fields(p):
    """``err`` (TMA-I9)."""
    return Fields(("id", p.ID_W), ("code", 8))


def done_fields(p):
    """``done`` (TMA-I9)."""
    return Fields(("id", p.ID_W))


def bytes_to_int(data):
    """A 1024-bit ``data`` word from 128 lane bytes (lane j in bits [8j+7:8j])."""
    return int.from_bytes(bytes(data), "little")


def int_to_bytes(word, n=LINE):
    return int(word).to_bytes(n, "little")


@dataclass(frozen=True)
class L2Req:
    """One golden ``l2_req``. ``data`` is 128 lane bytes (WRITE/RED only, else zeros), ``be`` a
    128-bit lane mask (WRITE/RED only). ``lane``, ``nbytes`` and ``dense`` are the piece (§4.7):
    not on the port, kept for the scoreboard. ``tag`` is the golden tracker's choice; testbenches
    compare everything but the tag (TMA-V6)."""
    op: int
    line: int
    sectors: int
    tag: int = 0
    dtype: int = 0
    data: bytes = field(default=bytes(LINE), repr=False)
    be: int = 0
    lane: int = 0
    nbytes: int = 0
    dense: int = 0

    @property
    def addr(self):
        """Byte address of the piece's first byte."""
        return self.line * LINE + self.lane

    def key(self):
        """The fields TMA-V6 compares (everything on the port except the tag)."""
        return (int(self.op), self.line, self.sectors, self.dtype, bytes(self.data), self.be)

    def pack(self, p):
        return l2_req_fields(p).pack(line=self.line, sectors=self.sectors, tag=self.tag,
                                     op=int(self.op), dtype=self.dtype,
                                     data=bytes_to_int(self.data), be=self.be)


@dataclass(frozen=True)
class SmemBeat:
    """One golden ``smem_wr`` beat: ``be`` bit j enables lane j (byte ``row*128 + j``); lanes
    without ``be`` carry 0 in ``data``."""
    row: int
    data: bytes = field(repr=False)
    be: int = 0
    mask: int = 0

    @property
    def nbytes(self):
        return bin(self.be).count("1")

    def lanes(self):
        return [j for j in range(LINE) if self.be >> j & 1]

    def pack(self, p):
        return smem_wr_fields(p).pack(row=self.row, data=bytes_to_int(self.data), be=self.be,
                                      mask=self.mask)


@dataclass(frozen=True)
class MbarUpdate:
    """One golden ``mbar`` update: add ``tx`` bytes to the barrier at ``addr`` of every CTA in
    ``mask``."""
    addr: int
    tx: int
    mask: int

    def pack(self, p):
        return mbar_fields(p).pack(addr=self.addr, tx=self.tx, mask=self.mask)
