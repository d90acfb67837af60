"""Descriptor encoding and decoding (spec tma.md §4.2, TMA-F9, TMA-E6, TMA-GV1/GV2).

- :func:`encode_desc` writes the 128 descriptor bytes from any subset of the §4.2 fields. It
  writes every field it is given, unchecked except for field widths; per-dimension lists may be
  short and scalars absent, the missing entries being written as the §4.2 table says (sizes 1,
  strides 0, boxes 0, traversal strides 1, corners 0, other scalars and reserved bits 0).
- :func:`decode_desc` returns every field, used or not, as a :class:`~golden.tma.formats.TmaDesc`;
  reserved bits are ignored (TMA-E6).
- :func:`encode_tiled` mirrors CUDA's ``cuTensorMapEncodeTiled(tensorDataType, tensorRank,
  globalAddress, globalDim, globalStrides, boxDim, elementStrides, interleave, swizzle, l2Promotion,
  oobFill)`` (no L2 promotion here; ``oob_fill`` adds CONST with ``oob_const``) and rejects, with a
  :class:`DescriptorError` carrying the spec's error code, every descriptor that the setup block
  would reject for reasons of the descriptor alone (rules 0x05, 0x09 .. 0x18 of §3.4).
"""

import numpy as np

from golden.tma.formats import (DESC_BYTES, DESC_FIELDS, DESC_RESERVED, ErrCode, Interleave,
                                Mode, OobFill, Swizzle, TmaDesc)
from golden.tma.params import TmaParams
from golden.tma.validate import check_descriptor

__all__ = ["encode_desc", "decode_desc", "encode_tiled", "DescriptorError"]


def encode_desc(desc=None, **fields):
    """The 128 descriptor bytes of ``desc`` (a :class:`TmaDesc` or a dict of fields) updated with
    ``fields``."""
    base = {} if desc is None else (desc.as_dict() if isinstance(desc, TmaDesc) else dict(desc))
    d = TmaDesc.make(**{**base, **fields})
    word = DESC_FIELDS.pack(**{k: int(v) if not isinstance(v, tuple) else v
                               for k, v in d.as_dict().items()})
    return word.to_bytes(DESC_BYTES, "little")


def decode_desc(data):
    """A :class:`TmaDesc` from 128 bytes (``bytes``, numpy uint8 array) or the 1024-bit word."""
    if isinstance(data, int):
        word = data
    else:
        raw = bytes(np.asarray(data, dtype=np.uint8)) if not isinstance(data, (bytes, bytearray)) \
            else bytes(data)
        if len(raw) != DESC_BYTES:
            raise ValueError(f"a descriptor is {DESC_BYTES} bytes, got {len(raw)}")
        word = int.from_bytes(raw, "little")
    values = DESC_FIELDS.unpack(word)
    for name in DESC_RESERVED:
        del values[name]
    return TmaDesc(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


class DescriptorError(ValueError):
    """An illegal :func:`encode_tiled` argument; ``code`` is the §3.4 error code setup would raise."""

    def __init__(self, code, parameter, message):
        super().__init__(f"{parameter}: {message} ({ErrCode(code).name}, 0x{int(code):02X})")
        self.code = ErrCode(code)
        self.parameter = parameter


_PARAMETER = {
    ErrCode.E_RANK: "tensorRank", ErrCode.E_DTYPE: "tensorDataType",
    ErrCode.E_INTERLEAVE: "interleave", ErrCode.E_GADDR_ALIGN: "globalAddress",
    ErrCode.E_GADDR_RANGE: "globalAddress", ErrCode.E_SIZE: "globalDim",
    ErrCode.E_STRIDE_ALIGN: "globalStrides", ErrCode.E_STRIDE_RANGE: "globalStrides",
    ErrCode.E_INTERLEAVE_SHAPE: "globalDim/boxDim", ErrCode.E_BOX_RANGE: "boxDim",
    ErrCode.E_BOX_INNER: "boxDim", ErrCode.E_TS_RANGE: "elementStrides",
    ErrCode.E_SWIZZLE_SPAN: "swizzle", ErrCode.E_INTERLEAVE_SWIZZLE: "swizzle",
    ErrCode.E_OOB_MODE: "oobFill", ErrCode.E_OOB_NAN_DTYPE: "oobFill",
}
_MESSAGE = {
    ErrCode.E_RANK: "rank must be 1..5", ErrCode.E_DTYPE: "reserved data type",
    ErrCode.E_INTERLEAVE: "interleave 3 is reserved; interleave needs rank >= 3",
    ErrCode.E_GADDR_ALIGN: "must be 16 B aligned (32 B with 32B interleave)",
    ErrCode.E_GADDR_RANGE: "must be below 2**ADDR_W", ErrCode.E_SIZE: "sizes must be >= 1",
    ErrCode.E_STRIDE_ALIGN: "strides must be multiples of 16 B (32 B with 32B interleave)",
    ErrCode.E_STRIDE_RANGE: "strides must be below 2**40",
    ErrCode.E_INTERLEAVE_SHAPE: "interleaved dim 0 must be one 16/32 B slice and box[0] = size[0]",
    ErrCode.E_BOX_RANGE: "box sizes must be 1..256",
    ErrCode.E_BOX_INNER: "box[0] * element size must be a multiple of 16 B",
    ErrCode.E_TS_RANGE: "element strides must be 1..8",
    ErrCode.E_SWIZZLE_SPAN: "box[0] * element size exceeds the swizzle span",
    ErrCode.E_INTERLEAVE_SWIZZLE: "32B interleave requires 32B swizzle",
    ErrCode.E_OOB_MODE: "fill mode 3 is reserved", ErrCode.E_OOB_NAN_DTYPE: "NaN fill needs a float type",
}


def encode_tiled(dtype, rank, global_address, global_dim, global_strides, box_dim, element_strides,
                 interleave=Interleave.NONE, swizzle=Swizzle.NONE, oob_fill=OobFill.ZERO,
                 oob_const=0, params=None):
    """A checked tile-mode descriptor, cuTensorMapEncodeTiled style.

    ``global_dim``, ``box_dim`` and ``element_strides`` have ``rank`` entries, innermost first;
    ``global_strides`` has ``rank - 1`` byte pitches (of dimensions 1 .. rank-1). Raises
    :class:`DescriptorError` (a ValueError) for a descriptor that setup would reject."""
    p = params or TmaParams()
    lengths = {"globalDim": (global_dim, rank), "globalStrides": (global_strides, rank - 1),
               "boxDim": (box_dim, rank), "elementStrides": (element_strides, rank)}
    if not 1 <= rank <= 5:
        raise DescriptorError(ErrCode.E_RANK, "tensorRank", _MESSAGE[ErrCode.E_RANK])
    for name, (values, n) in lengths.items():
        if len(values) != n:
            raise ValueError(f"{name} needs {n} entries for rank {rank}, got {len(values)}")
    d = TmaDesc.make(global_address=global_address, tensor_stride=global_strides,
                     tensor_size=global_dim, rank=rank, mode=Mode.TILE, dtype=dtype,
                     interleave=interleave, swizzle=swizzle, oob_fill=oob_fill,
                     box_size=box_dim, traversal_stride=element_strides, oob_const=oob_const)
    code = check_descriptor(d, p)
    if code:
        raise DescriptorError(code, _PARAMETER[code], _MESSAGE[code])
    return encode_desc(d)
