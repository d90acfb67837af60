"""DFP32 -> DFP16 down-conversion (Fig 16A 1630 / 16B 1660; spec dfp.md §4.10, DFP-F42..F47)."""

from dataclasses import dataclass, field

from golden.dfp.formats import DOWN_STATS, down_out_fields, pack_meta
from golden.dfp.numerics import bitlen, rshift_round, sat16, tsh
from golden.dfp.quant import beats_of, effective_round_mode, saturating_add

__all__ = ["DownBlock", "downconvert", "DownConverterModel"]


@dataclass
class DownBlock:
    """One down-converted block: elements I, exponent outputs and last-beat flags (DFP-I8)."""
    I: list
    es16: int
    sf_b: int
    R: int
    n_sat: int = 0
    zero: int = 0
    exp_ovf: int = 0
    exp_unf: int = 0
    blk_err: int = 0
    meta: int = field(default=0)

    def __post_init__(self):
        self.meta = pack_meta(self.sf_b, bitlen(max((abs(i) for i in self.I), default=0)),
                              self.exp_ovf, self.zero, self.n_sat > 0)


def downconvert(v, es, round_mode, bias_bits=1):
    """Down-convert ints ``v`` with per-element exponents ``es`` (equal within a beat)."""
    v = [int(x) for x in v]
    es = [int(e) for e in es]
    if len(v) != len(es) or not v:
        raise ValueError("downconvert needs one es per element and at least one element")
    es_max = max(es)
    va = [tsh(x, es_max - e) for x, e in zip(v, es)]
    m = max(abs(x) for x in va)
    big_r = max(0, bitlen(m) - 15)
    out, n_sat = [], 0
    for x in va:
        y, saturated = sat16(rshift_round(x, big_r, round_mode, bias_bits))
        out.append(y)
        n_sat += saturated
    es16 = es_max + big_r
    es16_field = max(-2048, min(2047, es16))
    n = len(v)
    if m == 0:
        return DownBlock(out, es16_field, 0, big_r, n_sat=n_sat, zero=1)
    if es16 > 113:
        return DownBlock([0] * n, es16_field, 255, big_r, exp_ovf=1)
    if es16 < -140:
        return DownBlock([0] * n, es16_field, 0, big_r, exp_unf=1)
    return DownBlock(out, es16_field, es16 + 141, big_r, n_sat=n_sat)


class DownConverterModel:
    """Stream-level model of ``DfpDownConverter`` (DFP-I8, DFP-E5, DFP-E7, DFP-F46)."""

    def __init__(self, q_lanes=1, blk_max=64, in_w=32, bias_bits=1):
        self.q_lanes, self.blk_max, self.in_w, self.bias_bits = q_lanes, blk_max, in_w, bias_bits
        self.fields = down_out_fields(q_lanes)
        self.reset()

    def reset(self):
        self._v, self._es, self._mode = [], [], None
        self.stats = {name: 0 for name in DOWN_STATS}

    def stats_clr(self):
        self.stats = {name: 0 for name in DOWN_STATS}

    def beat(self, v, es, last, cfg):
        """Accept one input beat; returns the block's output beats when the block ends."""
        if len(v) != self.q_lanes:
            raise ValueError(f"beat needs {self.q_lanes} elements, got {len(v)}")
        if not self._v:
            self._mode, err = effective_round_mode(cfg.round_mode)
            self.stats["cfg_err"] |= err
        self._v += [int(x) for x in v]
        self._es += [int(es)] * self.q_lanes
        oversized = not last and len(self._v) >= self.blk_max
        if not (last or oversized):
            return []
        block = downconvert(self._v, self._es, self._mode, self.bias_bits)
        block.blk_err = int(oversized)
        self._v, self._es = [], []
        s = self.stats
        s["dc_blocks"] = saturating_add(s["dc_blocks"], 1)
        s["dc_sat"] = saturating_add(s["dc_sat"], block.n_sat)
        s["dc_exp_ovf"] = saturating_add(s["dc_exp_ovf"], block.exp_ovf)
        s["dc_exp_unf"] = saturating_add(s["dc_exp_unf"], block.exp_unf)
        return beats_of(block, self.q_lanes,
                        ("n_sat", "zero", "exp_ovf", "exp_unf", "blk_err", "meta"),
                        {"es16": block.es16, "sf_b": block.sf_b, "R": block.R})
