"""DFP16 formats shared by hardware, golden model and testbenches (spec dfp.md §3.8-§3.9).

One definition, three users: ``hw/dfp`` turns these :class:`~golden.common.fields.Fields`
into Amaranth layouts (``hw.common.layout.struct_layout``), ``golden/dfp`` and ``tb/dfp`` pack
and unpack the same integers with them.
"""

from dataclasses import asdict, dataclass, fields as dc_fields

from golden.common.fields import Fields

__all__ = [
    "NONE", "PRESHIFT", "CHUNK", "ADAPTIVE", "MODE_NAMES",
    "TRUNC", "BIASED", "RNE", "ROUND_NAMES", "CANONICAL_NAN",
    "LANES_LEGAL", "ACC_W_RANGE", "Q_LANES_LEGAL", "BLK_MAX_RANGE", "IN_W_RANGE", "BIAS_BITS_RANGE",
    "Config", "CONFIG_FIELDS", "op_beat_fields", "result_fields", "DOT_STATS",
    "quant_in_fields", "quant_out_fields", "dequant_in_fields", "dequant_out_fields",
    "down_in_fields", "down_out_fields", "QUANT_STATS", "DOWN_STATS", "stats_fields",
    "pack_meta", "unpack_meta",
]

# cfg.mode (DFP-C8)
NONE, PRESHIFT, CHUNK, ADAPTIVE = 0, 1, 2, 3
MODE_NAMES = {NONE: "NONE", PRESHIFT: "PRESHIFT", CHUNK: "CHUNK", ADAPTIVE: "ADAPTIVE"}
# cfg.round_mode (DFP-C10); 3 is reserved and treated as BIASED with cfg_err (DFP-E5)
TRUNC, BIASED, RNE = 0, 1, 2
ROUND_NAMES = {TRUNC: "TRUNC", BIASED: "BIASED", RNE: "RNE"}
CANONICAL_NAN = 0x7FC00000

# Build parameters (DFP-C1 .. DFP-C6)
LANES_LEGAL = (1, 2, 4, 8, 16)
ACC_W_RANGE = (32, 48)
Q_LANES_LEGAL = (1, 2, 4, 8, 16)
BLK_MAX_RANGE = (1, 1024)
IN_W_RANGE = (16, 48)
BIAS_BITS_RANGE = (1, 4)

CONFIG_FIELDS = Fields(
    ("mode", 2), ("ovf_sat", 1), ("round_mode", 2), ("r0", 6), ("fig20_en", 1),
    ("t_lo", 6), ("t_hi", 6), ("chunk_len", 16), ("chunk_auto", 1), ("q_ext", 1),
)


@dataclass(frozen=True)
class Config:
    """The ``cfg`` register (DFP-I4); defaults are the reset values (DFP-C8 .. DFP-C16)."""
    mode: int = ADAPTIVE
    ovf_sat: int = 1
    round_mode: int = BIASED
    r0: int = 0
    fig20_en: int = 0
    t_lo: int = 1
    t_hi: int = 2
    chunk_len: int = 4
    chunk_auto: int = 1
    q_ext: int = 0

    def __post_init__(self):
        for f in dc_fields(self):
            value = getattr(self, f.name)
            width = CONFIG_FIELDS.widths[f.name]
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < (1 << width):
                raise ValueError(f"cfg.{f.name} = {value!r}: needs 0..{(1 << width) - 1}")

    def replace(self, **changes):
        return Config(**{**asdict(self), **changes})

    def pack(self):
        return CONFIG_FIELDS.pack(**asdict(self))

    @classmethod
    def unpack(cls, word):
        return cls(**CONFIG_FIELDS.unpack(word))

    def as_dict(self):
        return asdict(self)


def op_beat_fields(lanes):
    """``DfpOpBeat`` (DFP-I2)."""
    return Fields(
        ("a", 16, "signed", lanes), ("b", 16, "signed", lanes),
        ("first", 1), ("last", 1), ("eop", 1), ("blk", 1),
        ("es_a", 10, "signed"), ("es_b", 10, "signed"),
        ("bl_a", 4), ("bl_b", 4), ("k_log2", 5),
    )


def result_fields(acc_w):
    """``DfpResult`` (DFP-I3)."""
    return Fields(
        ("acc", acc_w, "signed"), ("es_out", 12, "signed"), ("r", 6), ("shifts", 6), ("ovf", 1),
        ("sat_cnt", 16), ("headroom", 6), ("chunks", 16), ("fp32", 32), ("mode", 2),
        ("op_err", 1), ("meta_err", 1), ("proto_err", 1),
    )


# Dot-unit statistics (DFP-F46): 32-bit saturating counters, then r_max, h_min, r_cnt, cfg_err.
DOT_COUNTERS = ("chains", "beats", "ovf_chains", "sat_events", "adaptive_shifts", "chunk_closes",
                "err_chains")
DOT_STATS = DOT_COUNTERS + ("r_max", "h_min", "r_cnt", "cfg_err")
QUANT_STATS = ("quant_blocks", "quant_sat", "quant_ftz", "quant_inv", "quant_zero", "cfg_err")
DOWN_STATS = ("dc_blocks", "dc_sat", "dc_exp_ovf", "dc_exp_unf", "cfg_err")
_STAT_WIDTH = {"r_max": 6, "h_min": 6, "r_cnt": 6, "cfg_err": 1}


def stats_fields(names):
    """Layout of a ``stats`` port: 32-bit counters, 6-bit r_max/h_min/r_cnt, 1-bit cfg_err."""
    return Fields(*[(n, _STAT_WIDTH.get(n, 32)) for n in names])


def quant_in_fields(q_lanes):
    """``DfpQuantizer.i_fp`` (DFP-I6)."""
    return Fields(("w", 32, "unsigned", q_lanes), ("last", 1), ("e_ext", 8))


def quant_out_fields(q_lanes):
    """``DfpQuantizer.o_q`` (DFP-I6)."""
    return Fields(
        ("i", 16, "signed", q_lanes), ("sf_b", 8), ("last", 1), ("bl", 4), ("n_sat", 16),
        ("n_ftz", 16), ("inv", 1), ("zero", 1), ("blk_err", 1), ("meta", 16),
    )


def dequant_in_fields(q_lanes):
    """``DfpDequantizer.i_q`` (DFP-I7)."""
    return Fields(("i", 16, "signed", q_lanes), ("sf_b", 8), ("last", 1))


def dequant_out_fields(q_lanes):
    """``DfpDequantizer.o_fp`` (DFP-I7)."""
    return Fields(("w", 32, "unsigned", q_lanes), ("last", 1))


def down_in_fields(q_lanes, in_w):
    """``DfpDownConverter.i_v`` (DFP-I8)."""
    return Fields(("v", in_w, "signed", q_lanes), ("es", 12, "signed"), ("last", 1))


def down_out_fields(q_lanes):
    """``DfpDownConverter.o_q`` (DFP-I8)."""
    return Fields(
        ("i", 16, "signed", q_lanes), ("es16", 12, "signed"), ("sf_b", 8), ("R", 6), ("last", 1),
        ("n_sat", 16), ("zero", 1), ("exp_ovf", 1), ("exp_unf", 1), ("blk_err", 1), ("meta", 16),
    )


def pack_meta(sf_b, bl, inv, zero, sat_any):
    """The 16-bit block metadata record of DFP-F47."""
    return (sf_b & 0xFF) | (bl & 0xF) << 8 | (inv & 1) << 12 | (zero & 1) << 13 | (sat_any & 1) << 14


def unpack_meta(meta):
    return {"sf_b": meta & 0xFF, "bl": (meta >> 8) & 0xF, "inv": (meta >> 12) & 1,
            "zero": (meta >> 13) & 1, "sat_any": (meta >> 14) & 1}
