"""Stream-level golden model of ``DfpDotUnit`` and its dynamic precision manager.

Spec dfp.md §4.7-§4.9: chain preamble, per-beat update in the four modes (NONE, PRESHIFT,
CHUNK, ADAPTIVE), blocked CHUNK, the Fig 20 between-pass update, protocol errors (DFP-E1..E4,
E6) and the statistics counters (DFP-F46). Beats are processed strictly in stream order.
"""

from golden.dfp.formats import (ADAPTIVE, CHUNK, DOT_COUNTERS, DOT_STATS, NONE, PRESHIFT,
                                Config, LANES_LEGAL, ACC_W_RANGE)
from golden.dfp.numerics import bitlen, clog2, fadd32, to_fp32, tsh
from golden.dfp.quant import saturating_add

__all__ = ["DotUnit", "r0_min", "chunk_setup", "preshift_setup"]

CHUNK_CAP = 65536
FIELD_MAX16 = 65535


def r0_min(lanes, acc_w):
    """Smallest ADAPTIVE base shift that lets one beat sum fit under the guard bit (DFP-F35)."""
    return max(0, 30 + clog2(lanes) - (acc_w - 2))


def chunk_setup(bl_a, bl_b, lanes, acc_w, chunk_len, chunk_auto):
    """(wb, L_b, rc) of DFP-F32."""
    wb = bl_a + bl_b + clog2(lanes)
    lb = max(chunk_len, 1 << max(0, acc_w - 1 - wb)) if chunk_auto else chunk_len
    lb = min(lb, CHUNK_CAP)
    rc = max(0, wb + clog2(lb) - (acc_w - 1))
    return wb, lb, rc


def preshift_setup(bl_a, bl_b, k_log2, acc_w):
    """(ex, sa, sb) of DFP-F30."""
    ex = max(0, bl_a + bl_b + k_log2 - (acc_w - 1))
    return ex, (ex + 1) // 2, ex // 2


def _headroom(acc, acc_w):
    return max(0, acc_w - 1 - bitlen(acc))


class _Chain:
    """State of the open chain (sampled cfg and metadata, accumulator, flags)."""

    def __init__(self, unit, beat, cfg, proto_err):
        self.unit = unit
        self.cfg = cfg
        self.mode = cfg.mode
        self.proto_err = proto_err
        self.op_err = 0
        self.meta_err = 0
        self.ovf = 0
        self.sat_cnt = 0
        self.shifts = 0
        self.chunks = 0
        self.beats = 0
        self.acc = 0
        self.facc = 0
        self.n_in = 0
        self.pending_clear = False
        self.hmin = unit.acc_w - 1
        self.chunk_len = cfg.chunk_len
        if cfg.mode == CHUNK and cfg.chunk_len == 0:
            self.chunk_len = 1
            unit.stats["cfg_err"] = 1
        self.rbase = max(cfg.r0, unit.r0_min)
        self._load_meta(beat)
        self.r = 0
        if self.mode == PRESHIFT:
            self.ex, self.sa, self.sb = preshift_setup(self.bl_a, self.bl_b, self.k_log2,
                                                       unit.acc_w)
            self.r = self.ex
        elif self.mode == CHUNK:
            self._chunk_setup()
        elif self.mode == ADAPTIVE:
            self.r = max(self.rbase, unit.r_cnt) if cfg.fig20_en else self.rbase
        self.r_start = self.r
        unit.acc_trace = []

    def _load_meta(self, beat):
        self.es_ab = int(beat["es_a"]) + int(beat["es_b"])
        self.bl_a, self.bl_b = int(beat["bl_a"]), int(beat["bl_b"])
        self.k_log2 = int(beat["k_log2"])

    def _chunk_setup(self):
        _, self.lb, self.rc = chunk_setup(self.bl_a, self.bl_b, self.unit.lanes, self.unit.acc_w,
                                          self.chunk_len, self.cfg.chunk_auto)
        self.r = self.rc

    def _accumulate(self, x):
        lo, hi = -(1 << (self.unit.acc_w - 1)), (1 << (self.unit.acc_w - 1)) - 1
        y = self.acc + x
        if not lo <= y <= hi:
            self.ovf = 1
            if self.cfg.ovf_sat:
                y = max(lo, min(hi, y))
                self.sat_cnt += 1
            else:
                y = ((y - lo) % (1 << self.unit.acc_w)) + lo
        self.acc = y

    def _close_chunk(self):
        self.hmin = min(self.hmin, _headroom(self.acc, self.unit.acc_w))
        self.facc = fadd32(self.facc, to_fp32(self.acc, self.es_ab + self.rc))
        self.chunks += 1

    def step(self, beat, first_beat):
        unit = self.unit
        a = [-32767 if x == -32768 else int(x) for x in beat["a"]]
        b = [-32767 if x == -32768 else int(x) for x in beat["b"]]
        if a != list(beat["a"]) or b != list(beat["b"]):
            self.op_err = 1
        if self.mode == CHUNK and beat["blk"] and not first_beat:       # DFP-F48
            if self.n_in > 0:
                self._close_chunk()
            self.acc, self.n_in, self.pending_clear = 0, 0, False
            self._load_meta(beat)
            self._chunk_setup()
        self.beats += 1
        if self.mode in (PRESHIFT, CHUNK):
            if (any(abs(x) >= 1 << self.bl_a for x in a) or any(abs(x) >= 1 << self.bl_b for x in b)
                    or (self.mode == PRESHIFT and unit.lanes * self.beats > 1 << self.k_log2)):
                self.meta_err = 1
        if self.mode == PRESHIFT:
            a = [tsh(x, self.sa) for x in a]
            b = [tsh(x, self.sb) for x in b]
        t = sum(x * y for x, y in zip(a, b))
        if self.mode in (NONE, PRESHIFT):
            self._accumulate(t)
        elif self.mode == CHUNK:
            if self.pending_clear:
                self.acc, self.pending_clear = 0, False
            self._accumulate(tsh(t, self.rc))
            self.n_in += 1
            if self.n_in == self.lb or beat["last"]:
                self._close_chunk()
                if not beat["last"]:
                    self.n_in, self.pending_clear = 0, True    # acc cleared by the next beat
        else:                                                  # ADAPTIVE
            s = self.acc + tsh(t, self.r)
            if abs(s) >= 1 << (unit.acc_w - 2):
                s = tsh(s, 1)
                self.r += 1
                self.shifts += 1
            self.acc = s
        unit.acc_trace.append(self.acc)

    def result(self, closed_by_first=False):
        """Close the chain: the DfpResult fields (a chain cut by DFP-E4 ends as if its
        previous beat carried last = 1)."""
        unit = self.unit
        if self.mode == CHUNK and closed_by_first and self.n_in > 0:
            self._close_chunk()
        es_out = self.es_ab + self.r
        if self.mode == CHUNK:
            fp32, headroom = self.facc, self.hmin
        else:
            fp32, headroom = to_fp32(self.acc, es_out), _headroom(self.acc, unit.acc_w)
        return {
            "acc": self.acc, "es_out": es_out, "r": self.r, "shifts": self.shifts,
            "ovf": self.ovf, "sat_cnt": min(FIELD_MAX16, self.sat_cnt), "headroom": headroom,
            "chunks": min(FIELD_MAX16, self.chunks), "fp32": fp32, "mode": self.mode,
            "op_err": self.op_err, "meta_err": self.meta_err, "proto_err": self.proto_err,
        }


class DotUnit:
    """Golden ``DfpDotUnit`` (LANES multipliers, ACC_W accumulator).

    ``beat(beat, cfg)`` consumes one ``DfpOpBeat`` dict and returns the results it completes
    (0, 1, or 2 when a ``first`` beat cuts an open chain); ``chain(...)`` runs one whole chain.
    """

    def __init__(self, lanes=16, acc_w=32, bias_bits=1):
        if lanes not in LANES_LEGAL:
            raise ValueError(f"lanes = {lanes!r}: needs one of {LANES_LEGAL}")
        if not ACC_W_RANGE[0] <= acc_w <= ACC_W_RANGE[1]:
            raise ValueError(f"acc_w = {acc_w!r}: needs {ACC_W_RANGE[0]}..{ACC_W_RANGE[1]}")
        self.lanes, self.acc_w, self.bias_bits = lanes, acc_w, bias_bits
        self.r0_min = r0_min(lanes, acc_w)
        self.reset()

    # -- state ------------------------------------------------------------------------------
    def reset(self):
        """Reset: drops the open chain; counters, r_cnt and pass statistics return to reset."""
        self.open = None
        self.r_cnt = 0
        self.acc_trace = []
        self._clear_pass()
        self.stats_clr()

    def stats_clr(self):
        self.stats = {name: 0 for name in DOT_STATS}
        self.stats["h_min"] = self.acc_w - 1
        self.stats["r_cnt"] = self.r_cnt

    def clr(self):
        """The ``clr`` strobe (DFP-F39): r_cnt = 0 and the open pass statistics are discarded."""
        self.r_cnt = 0
        self.stats["r_cnt"] = 0
        self._clear_pass()

    def _clear_pass(self):
        self.pass_n, self.pass_hmin, self.pass_rmax = 0, self.acc_w - 1, 0

    # -- stream -----------------------------------------------------------------------------
    def beat(self, beat, cfg=None):
        cfg = cfg or Config()
        beat = {"first": 0, "last": 0, "eop": 0, "blk": 0, "es_a": 0, "es_b": 0, "bl_a": 15,
                "bl_b": 15, "k_log2": 0, **beat}
        if len(beat["a"]) != self.lanes or len(beat["b"]) != self.lanes:
            raise ValueError(f"a beat carries {self.lanes} lanes of a and b")
        out = []
        s = self.stats
        s["beats"] = saturating_add(s["beats"], 1)
        if beat["first"] and self.open is not None:                 # DFP-E4
            self.open.proto_err = 1
            out.append(self._finish(self.open.result(closed_by_first=True), self.open, eop=0))
        first_beat = self.open is None
        if first_beat:
            self.open = _Chain(self, beat, cfg, proto_err=0 if beat["first"] else 1)  # DFP-E3
        self.open.step(beat, first_beat)
        if beat["last"]:
            out.append(self._finish(self.open.result(), self.open, eop=beat["eop"]))
        return out

    def _finish(self, res, chain, eop):
        self.open = None
        s = self.stats
        s["chains"] = saturating_add(s["chains"], 1)
        s["ovf_chains"] = saturating_add(s["ovf_chains"], res["ovf"])
        s["sat_events"] = saturating_add(s["sat_events"], res["sat_cnt"])
        s["adaptive_shifts"] = saturating_add(s["adaptive_shifts"], res["shifts"])
        s["chunk_closes"] = saturating_add(s["chunk_closes"], res["chunks"])
        s["err_chains"] = saturating_add(s["err_chains"],
                                         res["op_err"] | res["meta_err"] | res["proto_err"])
        s["r_max"] = max(s["r_max"], res["r"])
        s["h_min"] = min(s["h_min"], res["headroom"])
        cfg = chain.cfg
        if chain.mode == ADAPTIVE and cfg.fig20_en:                 # Fig 20 statistics (§4.9)
            self.pass_n += 1
            self.pass_hmin = min(self.pass_hmin, res["headroom"])
            self.pass_rmax = max(self.pass_rmax, res["r"])
        if eop:
            if self.pass_n > 0:
                if self.pass_hmin < cfg.t_lo:
                    self.r_cnt = min(63, self.pass_rmax + 1)
                elif self.pass_hmin > cfg.t_hi:
                    self.r_cnt = max(chain.rbase, self.pass_rmax - 1)
                else:
                    self.r_cnt = self.pass_rmax
            self._clear_pass()
        s["r_cnt"] = self.r_cnt
        return res

    # -- whole chains -----------------------------------------------------------------------
    def chain(self, a, b, es_a, es_b, cfg=None, bl_a=None, bl_b=None, k_log2=None, eop=1,
              blk=None):
        """Run one chain of operands ``a``, ``b`` (zero-padded to a multiple of LANES).

        ``blk`` maps a beat index to the (es_a, es_b, bl_a, bl_b) a blocked-CHUNK ``blk`` beat
        reloads (DFP-F48). Omitted bl_a/bl_b are the bit lengths of the clamped operands and
        k_log2 is clog2(LANES x beats) (DFP-I10). Returns the result dict.
        """
        cfg = cfg or Config()
        a, b = [int(x) for x in a], [int(x) for x in b]
        if len(a) != len(b) or not a:
            raise ValueError("a and b need the same, non-zero length")
        pad = (-len(a)) % self.lanes
        a, b = a + [0] * pad, b + [0] * pad
        beats = len(a) // self.lanes

        def default_bl(values):
            return bitlen(max(min(abs(x), 32767) for x in values))

        bl_a = default_bl(a) if bl_a is None else bl_a
        bl_b = default_bl(b) if bl_b is None else bl_b
        k_log2 = clog2(self.lanes * beats) if k_log2 is None else k_log2
        if self.open is not None:
            raise RuntimeError("chain() needs no open chain")
        blk = blk or {}
        results = []
        for k in range(beats):
            beat = {"a": a[k * self.lanes:(k + 1) * self.lanes],
                    "b": b[k * self.lanes:(k + 1) * self.lanes],
                    "first": int(k == 0), "last": int(k == beats - 1), "eop": eop,
                    "es_a": es_a, "es_b": es_b, "bl_a": bl_a, "bl_b": bl_b, "k_log2": k_log2,
                    "blk": 0}
            if k in blk:
                e_a, e_b, l_a, l_b = blk[k]
                beat.update(blk=1, es_a=e_a, es_b=e_b, bl_a=l_a, bl_b=l_b)
            results += self.beat(beat, cfg)
        (res,) = results
        return res

    @property
    def counters(self):
        return {name: self.stats[name] for name in DOT_COUNTERS}
