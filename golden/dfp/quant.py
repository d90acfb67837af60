"""FP32 -> DFP16 block quantizer and DFP16 -> FP32 dequantizer (spec dfp.md §4.3, §4.4).

``quant_block`` is Alg Q of Fig 15A/17 on one block; ``QuantizerModel`` is the stream-level
model of ``DfpQuantizer`` (blocks delimited by ``last`` or cut at BLK_MAX, counters).
"""

from dataclasses import dataclass, field

from golden.dfp.formats import BIASED, CANONICAL_NAN, QUANT_STATS, pack_meta, quant_out_fields
from golden.dfp.numerics import bitlen, rshift_round, to_fp32

__all__ = ["QuantBlock", "quant_block", "dequant", "dequant_lzd", "effective_round_mode",
           "QuantizerModel", "saturating_add"]

COUNTER_MAX = (1 << 32) - 1


def saturating_add(value, delta, limit=COUNTER_MAX):
    return min(limit, value + delta)


def effective_round_mode(mode):
    """The reserved round_mode 3 acts as BIASED (DFP-E5); returns (mode, cfg_err)."""
    return (BIASED, 1) if mode == 3 else (mode, 0)


@dataclass
class QuantBlock:
    """One quantized block: elements I and the last-beat outputs of DFP-I6."""
    I: list
    sf_b: int
    bl: int = 0
    n_sat: int = 0
    n_ftz: int = 0
    inv: int = 0
    zero: int = 0
    blk_err: int = 0
    meta: int = field(default=0)

    def __post_init__(self):
        self.meta = pack_meta(self.sf_b, self.bl, self.inv, self.zero, self.n_sat > 0)


def _exp(w):
    return (int(w) >> 23) & 0xFF


def quant_block(words, round_mode, bias_bits=1, e_ext=None):
    """Quantize one block of FP32 words (uint32) to DFP16 (Alg Q, DFP-F4..F15)."""
    words = [int(w) & 0xFFFFFFFF for w in words]
    n = len(words)
    blk_err = 1 if e_ext is not None and e_ext in (0, 255) else 0
    if blk_err or any(_exp(w) == 255 for w in words):
        return QuantBlock([0] * n, 255, inv=1, blk_err=blk_err)
    n_ftz = sum(1 for w in words if _exp(w) == 0 and w & 0x7FFFFF)
    big_e = max(_exp(w) for w in words) if e_ext is None else int(e_ext)
    if big_e == 0:
        return QuantBlock([0] * n, 0, zero=1, n_ftz=n_ftz)
    out, n_sat = [], 0
    for w in words:
        e = _exp(w)
        if e == 0:
            out.append(0)
            continue
        sig = 1 << 23 | (w & 0x7FFFFF)
        m = 32768 if e > big_e else rshift_round(sig, big_e - e + 9, round_mode, bias_bits)
        if m > 32767:
            m = 32767
            n_sat += 1
        out.append(-m if w >> 31 else m)
    return QuantBlock(out, big_e, bl=bitlen(max((abs(i) for i in out), default=0)),
                      n_sat=n_sat, n_ftz=n_ftz)


def dequant(i, sf_b):
    """DFP16 element -> FP32 bits: to_fp32(I, sf_b - 141), NaN for sf_b = 255 (§4.4)."""
    if sf_b == 255:
        return CANONICAL_NAN
    return to_fp32(int(i), int(sf_b) - 141)


def dequant_lzd(i, sf_b):
    """The dequantizer's LZD path of Fig 15B (DFP-F16..F18); equals ``dequant``."""
    i = int(i)
    if sf_b == 255:
        return CANONICAL_NAN
    if i == 0:
        return 0
    sign = 1 if i < 0 else 0
    m = abs(i)
    lz = 16 - m.bit_length()
    ex = sf_b - lz + 1
    if ex <= 0:
        return sign << 31
    return sign << 31 | ex << 23 | ((m << lz) & 0x7FFF) << 8


class QuantizerModel:
    """Stream-level model of ``DfpQuantizer`` (DFP-I6, DFP-F13, DFP-E5, DFP-E7, DFP-F46)."""

    def __init__(self, q_lanes=1, blk_max=64, bias_bits=1):
        self.q_lanes, self.blk_max, self.bias_bits = q_lanes, blk_max, bias_bits
        self.fields = quant_out_fields(q_lanes)
        self.reset()

    def reset(self):
        self._words, self._cfg, self._e_ext = [], None, 0
        self.stats = {name: 0 for name in QUANT_STATS}

    def stats_clr(self):
        self.stats = {name: 0 for name in QUANT_STATS}

    def beat(self, w, last, e_ext, cfg):
        """Accept one input beat; returns the block's output beats when the block ends."""
        if len(w) != self.q_lanes:
            raise ValueError(f"beat needs {self.q_lanes} words, got {len(w)}")
        if not self._words:                     # first beat: sample cfg and e_ext
            mode, err = effective_round_mode(cfg.round_mode)
            self._cfg = (mode, cfg.q_ext)
            self._e_ext = int(e_ext)
            self.stats["cfg_err"] |= err
        self._words += [int(x) for x in w]
        oversized = not last and len(self._words) >= self.blk_max
        if not (last or oversized):
            return []
        return self._close(blk_err=int(oversized))

    def _close(self, blk_err):
        mode, q_ext = self._cfg
        block = quant_block(self._words, mode, self.bias_bits,
                            e_ext=self._e_ext if q_ext else None)
        block.blk_err |= blk_err
        self._words = []
        s = self.stats
        s["quant_blocks"] = saturating_add(s["quant_blocks"], 1)
        s["quant_sat"] = saturating_add(s["quant_sat"], block.n_sat)
        s["quant_ftz"] = saturating_add(s["quant_ftz"], block.n_ftz)
        s["quant_inv"] = saturating_add(s["quant_inv"], block.inv)
        s["quant_zero"] = saturating_add(s["quant_zero"], block.zero)
        return beats_of(block, self.q_lanes, ("bl", "n_sat", "n_ftz", "inv", "zero", "blk_err",
                                              "meta"), {"sf_b": block.sf_b})


def beats_of(block, q_lanes, last_fields, every_fields):
    """Output beats of a block: ``i`` per beat, ``every_fields`` on each beat, ``last_fields``
    (attributes of ``block``) on the last beat and 0 on the others."""
    beats = []
    count = len(block.I) // q_lanes
    for k in range(count):
        is_last = k == count - 1
        beat = {"i": block.I[k * q_lanes:(k + 1) * q_lanes], **every_fields, "last": int(is_last)}
        for name in last_fields:
            beat[name] = int(getattr(block, name)) if is_last else 0
        beats.append(beat)
    return beats
