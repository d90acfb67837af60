"""Stimulus for the ``DfpDotUnit`` testbench: random chains and streams (pure Python).

A stream is a list of items: ``("beat", beat_dict, Config)``, ``("clr",)``, ``("stats_clr",)``
or ``("idle", n)``. Beat dicts carry every ``DfpOpBeat`` field. The cfg of a chain's non-first
beats is random junk on purpose: the unit must sample cfg on the first beat only (DFP-I4).
"""

import random

from golden.dfp.formats import ADAPTIVE, CHUNK, NONE, PRESHIFT, Config
from golden.dfp.numerics import bitlen, clog2

__all__ = ["beat", "random_cfg", "junk_cfg", "ChainGen", "chain_items", "stream_items"]

MODES = (NONE, PRESHIFT, CHUNK, ADAPTIVE)


def beat(a, b, first=0, last=0, eop=0, blk=0, es_a=0, es_b=0, bl_a=15, bl_b=15, k_log2=0):
    return {"a": list(a), "b": list(b), "first": first, "last": last, "eop": eop, "blk": blk,
            "es_a": es_a, "es_b": es_b, "bl_a": bl_a, "bl_b": bl_b, "k_log2": k_log2}


def junk_cfg(rng):
    return Config(mode=rng.randrange(4), ovf_sat=rng.randrange(2), round_mode=rng.randrange(4),
                  r0=rng.randrange(64), fig20_en=rng.randrange(2), t_lo=rng.randrange(64),
                  t_hi=rng.randrange(64), chunk_len=rng.randrange(65536),
                  chunk_auto=rng.randrange(2), q_ext=rng.randrange(2))


def random_cfg(rng, mode=None):
    """A chain cfg: mostly small, interesting values, sometimes extremes."""
    mode = rng.choice(MODES) if mode is None else mode
    r0 = rng.choice([0, 0, 0, rng.randrange(8), rng.randrange(64)])
    chunk_len = rng.choice([4, 4, 1, 2, 3, rng.randrange(1, 9), rng.randrange(1, 70),
                            rng.randrange(65536), 65535, 0])
    t_lo = rng.choice([1, 1, 2, rng.randrange(8), rng.randrange(64)])
    t_hi = rng.choice([2, 2, 3, rng.randrange(12), rng.randrange(64)])
    return Config(mode=mode, ovf_sat=rng.randrange(2), round_mode=rng.randrange(4), r0=r0,
                  fig20_en=rng.choice([0, 1, 1]), t_lo=t_lo, t_hi=t_hi, chunk_len=chunk_len,
                  chunk_auto=rng.choice([0, 1, 1]), q_ext=rng.randrange(2))


def _clamp(x):
    return -32767 if x == -32768 else x


class ChainGen:
    """Random operand chains for one (lanes, acc_w) build.

    ``chain(...)`` returns the items of one chain: magnitudes from tiny to full scale (and
    −32768), zero padding lanes, honest or violated metadata, random es, random ``blk`` beats in
    CHUNK mode, random ``eop``.
    """

    def __init__(self, lanes, acc_w, rng=None):
        self.lanes, self.acc_w = lanes, acc_w
        self.rng = rng or random.Random(0)

    def _values(self, n, scale, full, neg_min):
        rng = self.rng
        out = []
        for _ in range(n):
            if full:
                v = rng.choice([scale, -scale])
            else:
                v = rng.randint(-scale, scale)
            if neg_min and rng.random() < 0.05:
                v = -32768
            out.append(v)
        return out

    def length(self):
        rng = self.rng
        roll = rng.random()
        if roll < 0.25:
            return 1
        if roll < 0.85:
            return rng.randint(1, 16)
        if roll < 0.97:
            return rng.randint(17, 64)
        return rng.randint(65, max(65, 4096 // self.lanes))

    def chain(self, mode=None, beats=None, cfg=None, eop=None, honest=None, es=None):
        rng = self.rng
        lanes = self.lanes
        cfg = cfg or random_cfg(rng, mode)
        fixed_length = beats is not None
        beats = beats or self.length()
        scale = rng.choice([0, 1, 3, 100, 255, 4095, 20000, 32767, 32767])
        full = rng.random() < 0.2
        neg_min = rng.random() < 0.15
        sparse = rng.random() < 0.2
        same_sign = rng.choice([0, 0, 1, -1])
        if rng.random() < 0.15:
            # stress: long full-scale same-sign sums (NONE overflows, ADAPTIVE shifts often)
            scale, full, sparse, same_sign = 32767, rng.random() < 0.5, False, rng.choice([1, -1])
            if not fixed_length:
                beats = max(beats, rng.randint(4, 48))
            if cfg.mode == ADAPTIVE:
                cfg = cfg.replace(r0=rng.choice([0, 0, 1, 5]))
        pad = rng.choice([0, 0, 0, rng.randrange(lanes)])
        rows = []
        for _ in range(beats):
            a = self._values(lanes, scale, full, neg_min)
            b = self._values(lanes, rng.choice([scale, 32767]), full, neg_min)
            if same_sign:              # sums grow: NONE overflows, ADAPTIVE shifts
                a = [x if x == -32768 else same_sign * abs(x) for x in a]
                b = [x if x == -32768 else abs(x) for x in b]
            if sparse:
                a = [x if rng.random() < 0.3 else 0 for x in a]
            if pad:
                a[lanes - pad:] = [0] * pad
                b[lanes - pad:] = [0] * pad
            rows.append((a, b))
        honest = rng.random() < 0.8 if honest is None else honest
        bl_a = bitlen(max(abs(_clamp(x)) for a, _ in rows for x in a))
        bl_b = bitlen(max(abs(_clamp(x)) for _, b in rows for x in b))
        k_log2 = min(31, clog2(lanes * beats))
        if not honest:
            bl_a = max(0, bl_a - rng.randint(0, 3))
            bl_b = max(0, bl_b - rng.randint(0, 3))
            k_log2 = max(0, k_log2 - rng.randint(0, 3))
        if es is None:
            es = rng.choice([(0, 0), (-6, -6), (rng.randint(-300, 226), rng.randint(-300, 226)),
                             (rng.randint(-512, 511), rng.randint(-512, 511))])
        eop = rng.randrange(2) if eop is None else eop
        items = []
        for k, (a, b) in enumerate(rows):
            bt = beat(a, b, first=int(k == 0), last=int(k == beats - 1), eop=eop,
                      es_a=es[0], es_b=es[1], bl_a=bl_a, bl_b=bl_b, k_log2=k_log2)
            if k and rng.random() < 0.15:
                # blocked CHUNK reload (ignored outside CHUNK); junk metadata otherwise
                bt.update(blk=1, es_a=rng.randint(-512, 511), es_b=rng.randint(-512, 511),
                          bl_a=rng.choice([bl_a, 15, rng.randrange(16)]),
                          bl_b=rng.choice([bl_b, 15, rng.randrange(16)]))
            elif k:
                bt.update(es_a=rng.randint(-512, 511), es_b=rng.randint(-512, 511),
                          bl_a=rng.randrange(16), bl_b=rng.randrange(16),
                          k_log2=rng.randrange(32), eop=rng.randrange(2) if k < beats - 1 else eop)
            items.append(("beat", bt, cfg if k == 0 else junk_cfg(rng)))
        return items


def chain_items(lanes, a_rows, b_rows, cfg, es_a=0, es_b=0, bl_a=15, bl_b=15, k_log2=0, eop=1,
                blk=None):
    """Items of one chain of explicit rows (blk: beat index -> (es_a, es_b, bl_a, bl_b))."""
    n = len(a_rows)
    items = []
    for k in range(n):
        bt = beat(a_rows[k], b_rows[k], first=int(k == 0), last=int(k == n - 1), eop=eop,
                  es_a=es_a, es_b=es_b, bl_a=bl_a, bl_b=bl_b, k_log2=k_log2)
        if blk and k in blk:
            e_a, e_b, l_a, l_b = blk[k]
            bt.update(blk=1, es_a=e_a, es_b=e_b, bl_a=l_a, bl_b=l_b)
        items.append(("beat", bt, cfg))
    return items


def stream_items(gen, n_chains, clr_prob=0.03, stats_clr_prob=0.0, proto_prob=0.05,
                 idle_prob=0.05, mode=None):
    """A random stream of chains with clr strobes, idle gaps and protocol errors (DFP-E3/E4)."""
    rng = gen.rng
    items = []
    for _ in range(n_chains):
        chain = gen.chain(mode=mode)
        roll = rng.random()
        if roll < proto_prob / 2 and len(chain) > 1:
            # DFP-E4: cut the chain, the next chain's first beat arrives while it is open
            cut = rng.randint(1, len(chain) - 1)
            chain = chain[:cut]
        elif roll < proto_prob:
            # DFP-E3: a chain whose first beat lacks first = 1 (only an error when idle)
            chain[0][1]["first"] = 0
        items += chain
        if rng.random() < clr_prob:
            items.append(("clr",))
        if rng.random() < stats_clr_prob:
            items.append(("stats_clr",))
        if rng.random() < idle_prob:
            items.append(("idle", rng.randint(1, 20)))
    return items
