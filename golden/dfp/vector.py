"""Vectorized DFP16 golden paths for whole tensors: row/column quantization, many chains at
once, and ``dfp_matmul`` (spec dfp.md DFP-I11). Bit-identical to the scalar ``quant_block``
and ``DotUnit.chain`` (DFP-V8); tests/golden/test_dfp_vector.py checks that.
"""

import numpy as np

from golden.dfp.dot import CHUNK_CAP, r0_min
from golden.dfp.formats import ADAPTIVE, BIASED, CHUNK, NONE, PRESHIFT, RNE, TRUNC, Config
from golden.dfp.numerics import clog2

__all__ = ["quant_rows", "quant_cols", "to_fp32_array", "fadd32_array", "dot_chains",
           "dfp_matmul", "beat_sums"]

FP32_MIN_NORMAL = 2.0 ** -126


def _bitlen(x):
    """Bit length of |x| for int64 arrays with |x| < 2^62."""
    m = np.abs(x).astype(np.int64)
    out = np.zeros(m.shape, dtype=np.int64)
    nz = m > 0
    out[nz] = np.floor(np.log2(m[nz].astype(np.float64))).astype(np.int64) + 1
    # float log2 can be off by one at powers of two near 2^53+: correct exactly
    out[nz] += (m[nz] >> out[nz]) > 0
    out[nz] -= (m[nz] >> np.maximum(out[nz] - 1, 0)) == 0
    return out


def _tsh(x, s):
    return np.sign(x) * (np.abs(x) >> s)


def _rshift_round(m, s, mode, bias_bits):
    """rshift_round on non-negative int64 magnitudes with per-element shifts s >= 0."""
    q = m >> s
    rest = m & ((np.int64(1) << s) - 1)
    if mode == TRUNC:
        up = np.zeros_like(q)
    elif mode == BIASED:
        up = ((rest >> np.maximum(0, s - 1 - bias_bits)) != 0).astype(np.int64)
    elif mode == RNE:
        half = np.where(s > 0, np.int64(1) << np.maximum(s - 1, 0), 0)
        up = ((rest > half) | ((rest == half) & (q & 1 == 1))).astype(np.int64)
    else:
        raise ValueError(f"round mode {mode!r} is not TRUNC, BIASED or RNE")
    return np.where(s > 0, q + up, m)


def _quant_lastaxis(x, round_mode, bias_bits):
    """quant_block along the last axis of a float32 array (two-pass, DFP-F4..F14)."""
    w = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.int64)
    e = (w >> 23) & 0xFF
    big_e = e.max(axis=-1, keepdims=True)
    inv = (e == 255).any(axis=-1, keepdims=True)
    sig = (1 << 23) | (w & 0x7FFFFF)
    s = np.minimum(big_e - e + 9, 40)          # >= 25 + BIAS_BITS gives 0 in every mode
    m = _rshift_round(sig, s, round_mode, bias_bits)
    m = np.where(e == 0, 0, m)
    m = np.minimum(m, 32767)
    i = np.where(w >> 31 == 1, -m, m)
    zero = big_e == 0
    i = np.where(inv | zero, 0, i)
    sf_b = np.where(inv, 255, big_e)[..., 0]
    bl = _bitlen(np.abs(i).max(axis=-1))
    return i.astype(np.int64), sf_b.astype(np.int64), bl


def quant_rows(a, round_mode=BIASED, bias_bits=1):
    """Quantize each row of ``a`` (M x K float32) as one block: (I, sf_b per row, bl per row)."""
    return _quant_lastaxis(np.asarray(a, dtype=np.float32), round_mode, bias_bits)


def quant_cols(b, round_mode=BIASED, bias_bits=1):
    """Quantize each column of ``b`` (K x N float32) as one block: (I, sf_b, bl per column)."""
    i, sf_b, bl = _quant_lastaxis(np.asarray(b, dtype=np.float32).T, round_mode, bias_bits)
    return i.T, sf_b, bl


def to_fp32_array(acc, es):
    """Vectorized to_fp32 (§4.5 float path); acc int64 with |acc| < 2^53, es int array."""
    acc = np.asarray(acc, dtype=np.int64)
    with np.errstate(over="ignore", under="ignore"):
        v = np.ldexp(acc.astype(np.float64), np.asarray(es, dtype=np.int64).astype(np.int32))
        f = v.astype(np.float32)
    bits = f.view(np.uint32).astype(np.uint32)
    tiny = np.abs(v) < FP32_MIN_NORMAL
    sign = np.where(acc < 0, np.uint32(0x80000000), np.uint32(0))
    bits = np.where(tiny, sign, bits)
    return np.where(acc == 0, np.uint32(0), bits).astype(np.uint32)


def fadd32_array(x, y):
    """Vectorized fadd32 (§4.6): float32 add, flush subnormal results, IEEE zero sign, NaN."""
    x = np.asarray(x, dtype=np.uint32)
    y = np.asarray(y, dtype=np.uint32)
    with np.errstate(over="ignore", invalid="ignore"):
        s = x.view(np.float32) + y.view(np.float32)
    bits = s.view(np.uint32).copy()
    zero = (bits & 0x7FFFFFFF) == 0
    both_neg_zero = (x == 0x80000000) & (y == 0x80000000)
    bits = np.where(zero, np.where(both_neg_zero, np.uint32(0x80000000), np.uint32(0)), bits)
    sub = ((bits >> 23) & 0xFF) == 0
    bits = np.where(sub & ~zero, bits & np.uint32(0x80000000), bits)
    bits = np.where(np.isnan(s), np.uint32(0x7FC00000), bits)
    return bits.astype(np.uint32)


def beat_sums(ia, ib, lanes):
    """Exact per-beat sums t[..., beat] of int operands ``ia``, ``ib`` (..., K), K padded."""
    k = ia.shape[-1]
    pad = (-k) % lanes
    if pad:
        ia = np.concatenate([ia, np.zeros(ia.shape[:-1] + (pad,), np.int64)], axis=-1)
        ib = np.concatenate([ib, np.zeros(ib.shape[:-1] + (pad,), np.int64)], axis=-1)
    nb = ia.shape[-1] // lanes
    prod = ia.reshape(ia.shape[:-1] + (nb, lanes)) * ib.reshape(ib.shape[:-1] + (nb, lanes))
    return prod.sum(axis=-1)


def dot_chains(ia, ib, es_a, es_b, bl_a, bl_b, mode, lanes=16, acc_w=32, cfg=None):
    """Many independent chains at once (each chain: operands along the last axis).

    ``ia``/``ib`` int arrays broadcastable to (..., K) with values in [-32767, 32767]; es/bl
    broadcastable to (...). fig20_en is not modelled here (chains are independent); the cfg
    is otherwise honoured. Returns a dict of result-field arrays.
    """
    cfg = cfg or Config(mode=mode)
    if cfg.fig20_en and mode == ADAPTIVE:
        raise ValueError("dot_chains runs independent chains: use DotUnit for fig20_en")
    ia = np.asarray(ia, dtype=np.int64)
    ib = np.asarray(ib, dtype=np.int64)
    ia, ib = np.broadcast_arrays(ia, ib)
    k = ia.shape[-1]
    nb = -(-k // lanes)
    k_log2 = clog2(lanes * nb)
    shape = ia.shape[:-1]
    es_ab = np.broadcast_to(np.asarray(es_a) + np.asarray(es_b), shape).astype(np.int64)
    bl_a = np.broadcast_to(bl_a, shape).astype(np.int64)
    bl_b = np.broadcast_to(bl_b, shape).astype(np.int64)
    lo, hi = -(1 << (acc_w - 1)), (1 << (acc_w - 1)) - 1
    acc = np.zeros(shape, np.int64)
    ovf = np.zeros(shape, np.int64)
    sat = np.zeros(shape, np.int64)
    shifts = np.zeros(shape, np.int64)
    chunks = np.zeros(shape, np.int64)
    r = np.zeros(shape, np.int64)

    def accumulate(acc, x):
        y = acc + x
        out = (y < lo) | (y > hi)
        if cfg.ovf_sat:
            y = np.clip(y, lo, hi)
        else:
            y = ((y - lo) % (1 << acc_w)) + lo
        return y, out

    if mode == PRESHIFT:
        ex = np.maximum(0, bl_a + bl_b + k_log2 - (acc_w - 1))
        sa, sb = (ex + 1) // 2, ex // 2
        t = beat_sums(_tsh(ia, sa[..., None]), _tsh(ib, sb[..., None]), lanes)
        r = ex
    else:
        t = beat_sums(ia, ib, lanes)
    if mode in (NONE, PRESHIFT):
        for j in range(nb):
            acc, out = accumulate(acc, t[..., j])
            ovf |= out
            sat += out & cfg.ovf_sat
        fp32 = to_fp32_array(acc, es_ab + r)
        headroom = np.maximum(0, acc_w - 1 - _bitlen(acc))
    elif mode == ADAPTIVE:
        r = np.full(shape, max(cfg.r0, r0_min(lanes, acc_w)), np.int64)
        guard = 1 << (acc_w - 2)
        for j in range(nb):
            s = acc + _tsh(t[..., j], r)
            big = np.abs(s) >= guard
            s = np.where(big, _tsh(s, 1), s)
            r = r + big
            shifts = shifts + big
            acc = s
        fp32 = to_fp32_array(acc, es_ab + r)
        headroom = np.maximum(0, acc_w - 1 - _bitlen(acc))
    elif mode == CHUNK:
        chunk_len = max(1, cfg.chunk_len)
        wb = bl_a + bl_b + clog2(lanes)                        # DFP-F32, as chunk_setup
        lb = np.full(shape, chunk_len, np.int64)
        if cfg.chunk_auto:
            lb = np.maximum(lb, np.int64(1) << np.maximum(0, acc_w - 1 - wb))
        lb = np.minimum(lb, CHUNK_CAP)
        rc = np.maximum(0, wb + _bitlen(lb - 1) - (acc_w - 1))
        r = rc
        facc = np.zeros(shape, np.uint32)
        hmin = np.full(shape, acc_w - 1, np.int64)
        n_in = np.zeros(shape, np.int64)
        for j in range(nb):
            acc, out = accumulate(acc, _tsh(t[..., j], rc))
            ovf |= out
            sat += out & cfg.ovf_sat
            n_in += 1
            close = (n_in == lb) | (j == nb - 1)
            hmin = np.where(close, np.minimum(hmin, np.maximum(0, acc_w - 1 - _bitlen(acc))), hmin)
            part = to_fp32_array(acc, es_ab + rc)
            facc = np.where(close, fadd32_array(facc, part), facc)
            chunks += close
            if j < nb - 1:
                acc = np.where(close, 0, acc)
                n_in = np.where(close, 0, n_in)
        fp32, headroom = facc, hmin
    else:
        raise ValueError(f"mode {mode!r} is not NONE, PRESHIFT, CHUNK or ADAPTIVE")
    return {"acc": acc, "es_out": es_ab + r, "r": r, "shifts": shifts, "ovf": ovf,
            "sat_cnt": np.minimum(sat, 65535), "headroom": headroom,
            "chunks": np.minimum(chunks, 65535), "fp32": fp32.astype(np.uint32),
            "mode": np.full(shape, mode, np.int64)}


def dfp_matmul(a, b, mode, lanes=16, acc_w=32, round_mode=BIASED, cfg=None, bias_bits=1,
               full=False):
    """C = A @ B through DFP16: rows of A and columns of B quantized as one block each, K
    zero-padded to a multiple of LANES, every C[i, j] one chain (DFP-I11).

    Returns the fp32 results as a float32 (M, N) array; with ``full=True`` a dict with every
    result field and the quantized operands instead.
    """
    cfg = cfg or Config(mode=mode)
    ia, sfa, bla = quant_rows(a, round_mode, bias_bits)
    ib, sfb, blb = quant_cols(b, round_mode, bias_bits)
    res = dot_chains(ia[:, None, :], ib.T[None, :, :], (sfa - 141)[:, None], (sfb - 141)[None, :],
                     bla[:, None], blb[None, :], mode, lanes, acc_w, cfg)
    if full:
        res.update(ia=ia, ib=ib, sf_a=sfa, sf_b=sfb, bl_a=bla, bl_b=blb)
        return res
    return res["fp32"].view(np.float32)
