"""Error benchmark of the DFP16 dot unit (spec dfp.md §4.13, DFP-P7, DFP-V9, DFP-GV26/GV27).

Protocol (§4.13): ``rng = numpy.random.default_rng(2024)``; for K in (16, 64, 256, 4096),
T = 200 trials (K <= 256) or 40 (K = 4096); per trial a then b are drawn as float32 standard
normals and each is quantized by ``quant_block(..., BIASED)`` as one block. Every
configuration (mode, LANES, ACC_W) runs on the same draws with the default cfg (chunk_len 4,
chunk_auto 1, r0 0, fig20_en 0) and k_log2 = clog2(K_padded). The error of a chain is
|fp32 − Σ f64(a_i)·f64(b_i)| / (K·max|a|·max|b|); the benchmark reports the max over trials.

The chains run through the vectorized ``dot_chains`` (one chain per trial, all trials at
once); ``check_scalar`` re-runs chains through the scalar ``DotUnit.chain`` and compares every
result field. Each chain is also checked against the derived bound of §4.12 (DFP-V4).
"""

import math
import time

import numpy as np

from golden.dfp.dot import DotUnit
from golden.dfp.formats import ADAPTIVE, BIASED, CHUNK, MODE_NAMES, NONE, PRESHIFT, Config
from golden.dfp.numerics import clog2
from golden.dfp.quant import quant_block
from golden.dfp.vector import dot_chains

__all__ = ["KS", "GV26_CONFIGS", "GV27_CONFIGS", "draw_trials", "trials_for", "quantize_trials",
           "error_bound", "run_config", "error_bench", "check_scalar", "config_name",
           "RESULT_FIELDS"]

KS = (16, 64, 256, 4096)
SEED = 2024

# (mode, LANES, ACC_W): every row of DFP-GV26, rows listing "1, 16" or "32, 48" expanded.
GV26_CONFIGS = (
    (NONE, 1, 48), (NONE, 16, 48),
    (PRESHIFT, 1, 32), (PRESHIFT, 16, 32), (PRESHIFT, 1, 48), (PRESHIFT, 16, 48),
    (CHUNK, 1, 32), (CHUNK, 16, 32), (CHUNK, 1, 48), (CHUNK, 16, 48),
    (ADAPTIVE, 1, 32), (ADAPTIVE, 16, 32), (ADAPTIVE, 1, 48), (ADAPTIVE, 16, 48),
)
# The half-normal comparison table printed beside DFP-GV27 (ACC_W = 32).
GV27_CONFIGS = (
    (CHUNK, 1, 32), (CHUNK, 16, 32), (ADAPTIVE, 1, 32), (ADAPTIVE, 16, 32),
    (PRESHIFT, 1, 32), (PRESHIFT, 16, 32),
)
RESULT_FIELDS = ("acc", "es_out", "r", "shifts", "ovf", "sat_cnt", "headroom", "chunks", "fp32",
                 "mode")


def config_name(cfg):
    mode, lanes, acc_w = cfg
    return f"{MODE_NAMES[mode]}/L{lanes}/W{acc_w}"


def trials_for(k):
    return 200 if k <= 256 else 40


def draw_trials(ks=KS, seed=SEED, half_normal=False):
    """The §4.13 draws: {K: (a, b)} with a, b float32 arrays of shape (T, K).

    One generator for all K in order; within a trial a is drawn before b. With
    ``half_normal`` every drawn vector is replaced by its absolute value (the informative
    table beside DFP-GV27); the draws themselves are the same.
    """
    if not set(ks) <= set(KS):
        raise ValueError(f"ks = {ks!r}: the protocol draws K in {KS} only")
    rng = np.random.default_rng(seed)
    out = {}
    for k in KS:                                   # the stream always walks the full K list
        t = trials_for(k)
        a = np.empty((t, k), np.float32)
        b = np.empty((t, k), np.float32)
        for trial in range(t):
            a[trial] = rng.standard_normal(k).astype(np.float32)
            b[trial] = rng.standard_normal(k).astype(np.float32)
        if half_normal:
            a, b = np.abs(a), np.abs(b)
        if k in ks:
            out[k] = (a, b)
    return out


def quantize_trials(x):
    """quant_block(BIASED) on each row of x (T, K): dict of I (T, K), sf_b, bl, n_sat (T,)."""
    blocks = [quant_block(row.view(np.uint32).tolist(), BIASED) for row in x]
    return {
        "I": np.array([q.I for q in blocks], np.int64),
        "sf_b": np.array([q.sf_b for q in blocks], np.int64),
        "bl": np.array([q.bl for q in blocks], np.int64),
        "n_sat": np.array([q.n_sat for q in blocks], np.int64),
    }


def _pad(i, lanes):
    pad = (-i.shape[-1]) % lanes
    return np.pad(i, ((0, 0), (0, pad))) if pad else i


def error_bound(res, qa, qb, k, lanes, acc_w, mode):
    """Per-chain normalized error bound of §4.12 (arrays over trials).

    err <= 2^-14·(qa + qb + da + db)·(1 + 2^-12) + [ADAPTIVE (N_beats + shifts)·2^r /
    (K·2^28) | CHUNK N_beats·2^rc / (K·2^28)] + 1.01·2^-24·(1 + chunks), with q = 0.75
    (BIASED, BIAS_BITS 1) or 1 for a block with n_sat > 0, and d = 2^s for a PRESHIFT
    operand shift s > 0.
    """
    q_a = np.where(qa["n_sat"] > 0, 1.0, 0.75)
    q_b = np.where(qb["n_sat"] > 0, 1.0, 0.75)
    d_a = np.zeros_like(q_a)
    d_b = np.zeros_like(q_b)
    if mode == PRESHIFT:
        ex = res["r"]
        sa, sb = (ex + 1) // 2, ex // 2
        d_a = np.where(sa > 0, np.ldexp(1.0, sa), 0.0)
        d_b = np.where(sb > 0, np.ldexp(1.0, sb), 0.0)
    beats = -(-k // lanes)
    bound = 2.0 ** -14 * (q_a + q_b + d_a + d_b) * (1 + 2.0 ** -12)
    if mode == ADAPTIVE:
        bound = bound + (beats + res["shifts"]) * np.ldexp(1.0, res["r"]) / (k * 2.0 ** 28)
    elif mode == CHUNK:
        bound = bound + beats * np.ldexp(1.0, res["r"]) / (k * 2.0 ** 28)
    return bound + 1.01 * 2.0 ** -24 * (1 + res["chunks"])


def run_config(cfg, a, b, qa, qb):
    """One configuration on all trials of one K: (result dict, err array, bound array)."""
    mode, lanes, acc_w = cfg
    k = a.shape[-1]
    res = dot_chains(_pad(qa["I"], lanes), _pad(qb["I"], lanes), qa["sf_b"] - 141,
                     qb["sf_b"] - 141, qa["bl"], qb["bl"], mode, lanes, acc_w,
                     Config(mode=mode))
    got = res["fp32"].view(np.float32).astype(np.float64)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = np.array([math.fsum(x) for x in a64 * b64])  # products of float32 are exact in f64
    norm = k * np.abs(a64).max(axis=-1) * np.abs(b64).max(axis=-1)
    err = np.abs(got - ref) / norm
    return res, err, error_bound(res, qa, qb, k, lanes, acc_w, mode)


def error_bench(ks=KS, configs=GV26_CONFIGS, half_normal=False, seed=SEED):
    """Run the §4.13 protocol. Returns a dict:

    - ``errors[name][K]``: max normalized error over the trials;
    - ``ovf[name][K]``: max ovf over the trials (must be 0);
    - ``ovf_with_manager``: chains with ovf = 1 over every PRESHIFT, CHUNK and ADAPTIVE
      configuration and K (the DFP-P7 condition; must be 0);
    - ``bound_violations[name][K]``: chains whose error exceeds the §4.12 bound (must be 0);
    - ``bound_slack[name][K]``: the minimum of bound − err over the trials;
    - ``configs``: {name: (mode, lanes, acc_w)}; ``trials``: {K: T};
    - headline keys ``dot_err_{chunk,adaptive,preshift}_k4096`` (max over LANES 1 and 16 at
      ACC_W 32, DFP-P7) when K = 4096 and those configurations were run;
    - ``seconds``: wall time.
    """
    start = time.perf_counter()
    draws = draw_trials(ks, seed, half_normal)
    out = {"errors": {}, "ovf": {}, "ovf_chains": {}, "bound_violations": {}, "bound_slack": {},
           "configs": {config_name(c): tuple(c) for c in configs},
           "trials": {k: trials_for(k) for k in ks}, "half_normal": bool(half_normal),
           "seed": seed}
    for name in out["configs"]:
        for key in ("errors", "ovf", "ovf_chains", "bound_violations", "bound_slack"):
            out[key][name] = {}
    for k in ks:
        a, b = draws[k]
        qa, qb = quantize_trials(a), quantize_trials(b)
        for cfg in configs:
            name = config_name(cfg)
            res, err, bound = run_config(cfg, a, b, qa, qb)
            out["errors"][name][k] = float(err.max())
            out["ovf"][name][k] = int(res["ovf"].max())
            out["ovf_chains"][name][k] = int(res["ovf"].sum())
            out["bound_violations"][name][k] = int((err > bound).sum())
            out["bound_slack"][name][k] = float((bound - err).min())
    out["ovf_with_manager"] = sum(out["ovf_chains"][name][k] for name, (mode, _, _) in
                                  out["configs"].items() if mode != NONE for k in ks)
    for mode in (CHUNK, ADAPTIVE, PRESHIFT):
        names = [config_name((mode, lanes, 32)) for lanes in (1, 16)]
        if 4096 in ks and all(n in out["errors"] for n in names):
            out[f"dot_err_{MODE_NAMES[mode].lower()}_k4096"] = max(
                out["errors"][n][4096] for n in names)
    out["seconds"] = time.perf_counter() - start
    return out


def check_scalar(ks=KS, configs=GV26_CONFIGS, trials=2, half_normal=False, seed=SEED):
    """Compare ``dot_chains`` with the scalar ``DotUnit.chain`` on the first ``trials`` trials
    of every (configuration, K). Returns the number of chains compared; raises AssertionError
    naming the first mismatch."""
    draws = draw_trials(ks, seed, half_normal)
    n = 0
    for k in ks:
        a, b = draws[k]
        a, b = a[:trials], b[:trials]
        qa, qb = quantize_trials(a), quantize_trials(b)
        for cfg in configs:
            mode, lanes, acc_w = cfg
            res, _, _ = run_config(cfg, a, b, qa, qb)
            unit = DotUnit(lanes, acc_w)
            for t in range(a.shape[0]):
                want = unit.chain(qa["I"][t].tolist(), qb["I"][t].tolist(),
                                  int(qa["sf_b"][t]) - 141, int(qb["sf_b"][t]) - 141,
                                  Config(mode=mode), bl_a=int(qa["bl"][t]),
                                  bl_b=int(qb["bl"][t]),
                                  k_log2=clog2(lanes * -(-k // lanes)))
                got = {f: int(res[f][t]) for f in RESULT_FIELDS}
                assert got == {f: want[f] for f in RESULT_FIELDS}, (config_name(cfg), k, t)
                assert want["op_err"] == want["meta_err"] == want["proto_err"] == 0
                n += 1
    return n


def format_table(bench):
    """The error table as text (one row per configuration, '%.2e' as in DFP-GV26)."""
    ks = sorted(bench["trials"])
    lines = ["config".ljust(20) + "".join(f"K={k}".rjust(11) for k in ks)]
    for name, row in bench["errors"].items():
        lines.append(name.ljust(20) + "".join(f"{row[k]:11.2e}" for k in ks))
    return "\n".join(lines)


def main():
    for half in (False, True):
        bench = error_bench(configs=GV27_CONFIGS if half else GV26_CONFIGS, half_normal=half)
        print(("half-normal (GV27 comparison)" if half else "zero-mean (GV26)")
              + f", {bench['seconds']:.1f} s")
        print(format_table(bench))
        for key in ("dot_err_chunk_k4096", "dot_err_adaptive_k4096", "dot_err_preshift_k4096"):
            print(f"{key} = {bench[key]:.3e}")
        print("max ovf", max(max(v.values()) for v in bench["ovf"].values()),
              "bound violations", sum(sum(v.values()) for v in bench["bound_violations"].values()))


if __name__ == "__main__":
    main()
