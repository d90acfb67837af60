"""Implicit-GEMM convolution from im2col TMA loads (spec tma.md §2.1 Fig 7C, TMA-V3, TMA-GV73).

A 2-D convolution of an NHWC tensor x (N, H, W, C) with weights w (R, S, C, K), zero padding
``pad``, dilation ``dil`` and stride ``stride`` (the same along H and W) is computed as

    out = sum over taps (r, s) of  A_rs @ w[r, s]

where A_rs (M x C, M = N * OH * OW) is one im2col TENSOR_LOAD per filter tap, all with the same
descriptor (TMA-GV73):

- rank 4, mode IM2COL, ``range_c`` = C, ``range_ndhw`` = M (so C * esize must be a multiple of 16
  and at most 256 elements, M at most 1024);
- corners ``base = -pad`` and ``far = pad - (R-1)*dil`` (H; S for W), traversal strides
  (W, H) = ``stride``, OOB fill ZERO: the bounding box is the set of valid filter base positions,
  and its stride grid has exactly OH x OW positions per image, so M pixels walk every output
  position once, image after image;
- each load has ``coord = (0, -pad, -pad, 0)`` and offsets (w, h) = ``(s*dil, r*dil)``.

The driver is shared by the golden tests and the RTL testbench: :func:`conv_descriptor`,
:func:`tap_commands` and :func:`write_problem` build what goes to the unit, :func:`tap_matrices`
reads the loaded tap matrices out of a shared memory image and :func:`conv_from_taps` does the
matmuls. :func:`run_conv` runs the whole thing on the golden model (:func:`golden.tma.model.run_command`,
one command per tap, on one global memory holding the descriptor and the tensor).
"""

from dataclasses import dataclass

import numpy as np

from golden.tma.encode import encode_desc
from golden.tma.formats import (ESIZE, LINE, RANGE_C_MAX, RANGE_NDHW_MAX, CmdOp, DType, Mode,
                                OobFill, TmaCmd)
from golden.tma.geometry import roundup
from golden.tma.im2col import pack_offsets
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.model import run_command
from golden.tma.params import TmaParams

__all__ = ["ConvCase", "NUMPY_DTYPE", "conv_descriptor", "tap_commands", "write_problem",
           "tap_matrices", "conv_from_taps", "run_conv", "ConvRun"]

# element dtype -> numpy dtype of its values (little-endian)
NUMPY_DTYPE = {DType.U8: "u1", DType.U16: "<u2", DType.U32: "<u4", DType.S32: "<i4",
               DType.U64: "<u8", DType.S64: "<i8", DType.F16: "<f2", DType.F32: "<f4",
               DType.F64: "<f8"}


@dataclass(frozen=True)
class ConvCase:
    """Shape of one convolution: input N x H x W x C (NHWC), filter R x S (H x W) with K output
    channels, padding, dilation and stride, element type ``dtype``."""
    N: int
    H: int
    W: int
    C: int
    R: int
    S: int
    K: int
    pad: int
    dil: int
    stride: int
    dtype: int = DType.S32

    @property
    def esize(self):
        return ESIZE[DType(self.dtype)]

    @property
    def OH(self):
        return (self.H + 2 * self.pad - (self.R - 1) * self.dil - 1) // self.stride + 1

    @property
    def OW(self):
        return (self.W + 2 * self.pad - (self.S - 1) * self.dil - 1) // self.stride + 1

    @property
    def M(self):
        """Output pixels = ``range_ndhw`` of every tap load."""
        return self.N * self.OH * self.OW

    @property
    def tap_bytes(self):
        return self.M * self.C * self.esize

    def taps(self):
        """Filter taps (r, s) in load order, r (H) outer."""
        return [(r, s) for r in range(self.R) for s in range(self.S)]

    def check(self):
        """Raise ``ValueError`` when the case does not map onto one im2col load per tap."""
        if DType(self.dtype) not in NUMPY_DTYPE:
            raise ValueError(f"dtype {DType(self.dtype).name} has no numpy equivalent here")
        if self.OH < 1 or self.OW < 1:
            raise ValueError("the filter does not fit the padded input")
        if not 1 <= self.C <= RANGE_C_MAX or (self.C * self.esize) % 16:
            raise ValueError(f"C = {self.C}: range_c must be 1..{RANGE_C_MAX} with C*esize a "
                             "multiple of 16 (rules 0x12, 0x13)")
        if not 1 <= self.M <= RANGE_NDHW_MAX:
            raise ValueError(f"N*OH*OW = {self.M} outside range_ndhw 1..{RANGE_NDHW_MAX}")
        if max((self.R - 1) * self.dil, (self.S - 1) * self.dil) > 255:
            raise ValueError("tap offsets (r*dil, s*dil) must fit 8 bits (rank 4, TMA-F20)")
        for v in (-self.pad, self.pad - (self.R - 1) * self.dil, self.pad - (self.S - 1) * self.dil):
            if not -128 <= v <= 127:
                raise ValueError(f"corner {v} outside the rank-4 range [-128, 127] (rule 0x19)")
        if not 1 <= self.stride <= 8:
            raise ValueError("stride must be 1..8 (traversal stride, rule 0x14)")
        return self


def conv_descriptor(case, global_address=0x10000):
    """The im2col descriptor fields (:func:`golden.tma.encode.encode_desc` keywords) of the
    activations of ``case`` stored packed NHWC at ``global_address``."""
    case.check()
    es = case.esize
    return dict(global_address=global_address, rank=4, mode=Mode.IM2COL, dtype=case.dtype,
                tensor_size=(case.C, case.W, case.H, case.N),
                tensor_stride=(case.C * es, case.W * case.C * es, case.H * case.W * case.C * es),
                range_c=case.C, range_ndhw=case.M,
                base_corner=(-case.pad, -case.pad),
                far_corner=(case.pad - (case.S - 1) * case.dil, case.pad - (case.R - 1) * case.dil),
                traversal_stride=(1, case.stride, case.stride, 1), oob_fill=OobFill.ZERO)


def tap_commands(case, desc_addr, smem_addr=0, mbar_addr=0x20000, cta_id=0, first_id=0):
    """One TENSOR_LOAD per filter tap: ``[((r, s), TmaCmd, smem address of its A_rs)]``. Tap k's
    matrix lands at ``smem_addr + k * roundup(tap_bytes, 128)``."""
    case.check()
    pitch = roundup(case.tap_bytes, LINE)
    out = []
    for k, (r, s) in enumerate(case.taps()):
        addr = smem_addr + k * pitch
        cmd = TmaCmd(id=first_id + k, op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=4,
                     desc_addr=desc_addr, coord=(0, -case.pad, -case.pad, 0),
                     im2col_off=pack_offsets((s * case.dil, r * case.dil), 4),
                     smem_addr=addr, mbar_addr=mbar_addr, cta_id=cta_id)
        out.append(((r, s), cmd, addr))
    return out


def write_problem(gmem, case, x, desc_addr, global_address=0x10000):
    """Store the descriptor at ``desc_addr`` and the NHWC activations ``x`` (shape
    (N, H, W, C)) packed at ``global_address`` in ``gmem``; returns the descriptor fields."""
    x = np.asarray(x)
    if x.shape != (case.N, case.H, case.W, case.C):
        raise ValueError(f"x has shape {x.shape}, expected {(case.N, case.H, case.W, case.C)}")
    desc = conv_descriptor(case, global_address)
    gmem.write(desc_addr, encode_desc(**desc))
    gmem.write(global_address, np.ascontiguousarray(x.astype(NUMPY_DTYPE[DType(case.dtype)]))
               .view(np.uint8).ravel())
    return desc


def tap_matrices(read, case, taps):
    """``{(r, s): A_rs}`` (M x C arrays of the element type) from the loaded smem images;
    ``read(addr, nbytes)`` returns the bytes of the destination CTA, ``taps`` is the list that
    :func:`tap_commands` returned."""
    dt = np.dtype(NUMPY_DTYPE[DType(case.dtype)])
    out = {}
    for rs, _, addr in taps:
        raw = np.asarray(read(addr, case.tap_bytes), dtype=np.uint8)
        out[rs] = np.frombuffer(raw.tobytes(), dtype=dt).reshape(case.M, case.C)
    return out


def conv_from_taps(case, mats, w):
    """``sum over (r, s) of A_rs @ w[r, s]`` reshaped to (N, OH, OW, K); integer types in int64,
    floating types in float64."""
    w = np.asarray(w)
    if w.shape != (case.R, case.S, case.C, case.K):
        raise ValueError(f"w has shape {w.shape}, expected {(case.R, case.S, case.C, case.K)}")
    acc_t = np.float64 if np.dtype(NUMPY_DTYPE[DType(case.dtype)]).kind == "f" else np.int64
    out = np.zeros((case.M, case.K), dtype=acc_t)
    for r, s in case.taps():
        out += mats[(r, s)].astype(acc_t) @ w[r, s].astype(acc_t)
    return out.reshape(case.N, case.OH, case.OW, case.K)


@dataclass
class ConvRun:
    """:func:`run_conv` result: the convolution ``out``, the tap matrices, and per tap the
    golden :class:`~golden.tma.model.CmdResult`."""
    out: np.ndarray
    mats: dict
    results: dict


def run_conv(case, x, w, params=None, gmem=None, smem=None, desc_addr=0x8000,
             global_address=0x10000, smem_addr=0, cta_id=0):
    """The convolution computed by the golden model: every tap load through
    :func:`golden.tma.model.run_command` on one global memory holding the descriptor and ``x``,
    then :func:`conv_from_taps`. Raises ``RuntimeError`` if a load is rejected."""
    p = params or TmaParams()
    gmem = gmem if gmem is not None else GlobalMemory(p.ADDR_W)
    smem = smem if smem is not None else SharedMemory(p.SMEM_AW)
    write_problem(gmem, case, x, desc_addr, global_address)
    taps = tap_commands(case, desc_addr, smem_addr, cta_id=cta_id)
    results = {}
    for rs, cmd, _ in taps:
        res = run_command(cmd, gmem, smem, p)
        if res.code:
            raise RuntimeError(f"tap {rs} rejected with code {res.code:#04x}")
        results[rs] = res
    mats = tap_matrices(lambda a, n: smem.read(cta_id, a, n), case, taps)
    return ConvRun(conv_from_taps(case, mats, w), mats, results)
