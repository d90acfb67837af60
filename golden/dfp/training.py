"""Training-parity benchmark of DFP16 matrix products (spec dfp.md §4.14, DFP-P8, DFP-V10).

A 64-64-10 MLP on the scikit-learn 8×8 digits is trained with plain SGD in which every matrix
product of the forward and backward passes (and the test forward pass) goes through one
``mm``: the FP32 baseline ``float32(float64(A) @ float64(B))``, or ``dfp_matmul`` (LANES 16,
ACC_W 32, BIASED, default cfg) in ADAPTIVE or CHUNK mode. Everything outside ``mm`` is
float32 numpy.

Entry points: ``train(seed, mm_kind)`` (one run), ``training_parity(seeds)`` (the DFP-P8
comparison over seeds 0-4) and ``spot_check_chains()`` (the DFP-V10 chain sample with golden
results, for an RTL run).
"""

import time

import numpy as np

from golden.dfp.dot import DotUnit
from golden.dfp.formats import ADAPTIVE, BIASED, CHUNK, MODE_NAMES, Config
from golden.dfp.numerics import clog2
from golden.dfp.quant import quant_block
from golden.dfp.vector import dfp_matmul

__all__ = ["MM_KINDS", "PRODUCTS", "LANES", "ACC_W", "load_data", "make_mm", "train",
           "training_parity", "spot_check_chains", "chain_record"]

LANES, ACC_W = 16, 32
LR = np.float32(0.1)
BATCH = 32
EPOCHS = 30
HIDDEN = 64
CLASSES = 10
N_TRAIN, N_TEST = 1257, 540
MM_KINDS = ("fp32", "adaptive", "chunk")
DFP_MODES = {"adaptive": ADAPTIVE, "chunk": CHUNK}
PRODUCTS = ("z1", "z2", "dW2", "dh", "dW1")          # the five training product types
SPOT_SEED = 99


def load_data():
    """(x_train, x_test, y_train, y_test): digits / 16 as float32, 70/30 stratified split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    x, y = load_digits(return_X_y=True)
    x = (x / 16).astype(np.float32)
    return train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)


def _mm_fp32(a, b):
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def make_mm(mm_kind):
    """The matrix product of a run: ``mm(A, B) -> float32 array``."""
    if mm_kind == "fp32":
        return _mm_fp32
    if mm_kind not in DFP_MODES:
        raise ValueError(f"mm_kind = {mm_kind!r}: needs one of {MM_KINDS}")
    mode = DFP_MODES[mm_kind]
    cfg = Config(mode=mode)

    def mm(a, b):
        # looked up at call time so that a test can count the calls
        return np.asarray(dfp_matmul(a, b, mode, lanes=LANES, acc_w=ACC_W, round_mode=BIASED,
                                     cfg=cfg), dtype=np.float32)
    return mm


def _forward(prod, x, w1, b1, w2, b2):
    z1 = prod("z1", x, w1) + b1
    h = np.maximum(z1, np.float32(0))
    z2 = prod("z2", h, w2) + b2
    return z1, h, z2


def train(seed, mm_kind, epochs=EPOCHS, data=None, capture=False, max_batches=None):
    """One §4.14 run. Returns {"test_acc", "seed", "mm_kind", "epochs", "batches",
    "mm_calls", "seconds", "weights": (W1, b1, W2, b2)} (plus "mode", "lanes", "acc_w",
    "round_mode" for the DFP16 runs) and, with ``capture``, "captured":
    {(batch_tag, product): (A, B)} for the first ("first") and the last ("last") mini-batch
    of the run (products z1, z2, dW2, dh, dW1).

    ``epochs`` and ``max_batches`` (stop after that many SGD steps) exist for quick tests of
    the protocol pieces; the protocol is 30 epochs, no limit.
    """
    start = time.perf_counter()
    x_tr, x_te, y_tr, y_te = data if data is not None else load_data()
    if len(x_tr) != N_TRAIN or len(x_te) != N_TEST:
        raise ValueError(f"split {len(x_tr)}/{len(x_te)}, the protocol needs 1257/540")
    mm = make_mm(mm_kind)
    calls = [0]
    captured = {}
    tag = None                        # "first" / "last" while a captured mini-batch runs

    def prod(name, a, b):
        """Every matrix product of the run goes through here, then through ``mm``."""
        calls[0] += 1
        if tag:
            captured[(tag, name)] = (a.copy(), b.copy())
        return mm(a, b)

    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((64, HIDDEN)) * np.sqrt(2 / 64)).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, CLASSES)) * np.sqrt(2 / 64)).astype(np.float32)
    b1 = np.zeros(HIDDEN, np.float32)
    b2 = np.zeros(CLASSES, np.float32)
    eye = np.eye(CLASSES, dtype=np.float32)
    n_batches = -(-N_TRAIN // BATCH)
    batches = 0
    for epoch in range(epochs):
        perm = rng.permutation(N_TRAIN)
        for k in range(n_batches):
            if max_batches is not None and batches >= max_batches:
                break
            idx = perm[k * BATCH:(k + 1) * BATCH]
            x, onehot = x_tr[idx], eye[y_tr[idx]]
            bsz = np.float32(len(idx))
            tag = None
            if capture and epoch == 0 and k == 0:
                tag = "first"
            elif capture and epoch == epochs - 1 and k == n_batches - 1:
                tag = "last"
            z1, h, z2 = _forward(prod, x, w1, b1, w2, b2)
            e = np.exp(z2 - z2.max(axis=1, keepdims=True))
            p = e / e.sum(axis=1, keepdims=True)
            g = (p - onehot) / bsz
            dw2 = prod("dW2", h.T, g)
            dh = prod("dh", g, w2.T)
            dz1 = dh * (z1 > 0)
            dw1 = prod("dW1", x.T, dz1)
            tag = None
            db2 = g.sum(axis=0)
            db1 = dz1.sum(axis=0)
            w1 -= LR * dw1
            b1 -= LR * db1
            w2 -= LR * dw2
            b2 -= LR * db2
            batches += 1
    _, _, z2 = _forward(prod, x_te, w1, b1, w2, b2)
    test_acc = float((z2.argmax(axis=1) == y_te).mean())
    out = {"test_acc": test_acc, "seed": seed, "mm_kind": mm_kind, "batches": batches,
           "mm_calls": calls[0], "epochs": epochs, "weights": (w1, b1, w2, b2),
           "seconds": time.perf_counter() - start}
    if mm_kind != "fp32":
        out.update(mode=MODE_NAMES[DFP_MODES[mm_kind]], lanes=LANES, acc_w=ACC_W,
                   round_mode="BIASED")
    if capture:
        out["captured"] = captured
    return out


def training_parity(seeds=range(5), kinds=MM_KINDS, data=None, capture_seed=None):
    """DFP-P8 comparison. Returns {
        "test_acc": {kind: [per-seed accuracy]}, "mean": {kind: mean accuracy},
        "gap_pp": {mode: |fp32 mean − mode mean| in percentage points},
        "seed_gap_pp": {mode: [per-seed |fp32 − mode| in pp]},
        "train_acc_fp32": fp32 mean, "train_acc_dfp16": the worse of the DFP16 mode means,
        "train_acc_dfp16_mode": the mode it comes from, "train_acc_dfp16_adaptive",
        "train_acc_dfp16_chunk", "train_acc_gap_pp": max over modes of gap_pp,
        "seeds", "lanes", "acc_w", "rounding", "seconds": {kind: total}, "total_seconds"}.
    Accuracies are test-set accuracies (fractions in 0..1), as §4.14's metric says.
    With ``capture_seed``, the runs of that seed are made with ``capture=True`` and returned
    in "runs" ({kind: train(...) dict}), ready for ``spot_check_chains(runs=...)``.
    """
    start = time.perf_counter()
    data = data if data is not None else load_data()
    seeds = list(seeds)
    acc = {k: [] for k in kinds}
    secs = {k: 0.0 for k in kinds}
    runs = {}
    for kind in kinds:
        for seed in seeds:
            run = train(seed, kind, data=data, capture=seed == capture_seed)
            acc[kind].append(run["test_acc"])
            secs[kind] += run["seconds"]
            if seed == capture_seed:
                runs[kind] = run
    mean = {k: float(np.mean(v)) for k, v in acc.items()}
    modes = [k for k in kinds if k != "fp32"]
    out = {"test_acc": acc, "mean": mean, "seeds": seeds, "lanes": LANES, "acc_w": ACC_W,
           "rounding": "BIASED", "seconds": secs}
    if "fp32" in kinds and modes:
        out["gap_pp"] = {m: abs(mean["fp32"] - mean[m]) * 100 for m in modes}
        out["seed_gap_pp"] = {m: [abs(f - d) * 100 for f, d in zip(acc["fp32"], acc[m])]
                              for m in modes}
        worst = min(modes, key=lambda m: mean[m])
        out.update(train_acc_fp32=mean["fp32"], train_acc_dfp16=mean[worst],
                   train_acc_dfp16_mode=worst,
                   train_acc_gap_pp=max(out["gap_pp"].values()))
        for m in modes:
            out[f"train_acc_dfp16_{m}"] = mean[m]
    if capture_seed is not None:
        out["runs"] = runs
    out["total_seconds"] = time.perf_counter() - start
    return out


def chain_record(a_row, b_col, mode, product, batch, i, j, unit=None):
    """One DFP-V10 chain: row ``a_row`` of A and column ``b_col`` of B (float32) quantized by
    ``quant_block(BIASED)`` as one block each, the int operands zero-padded to a multiple of
    16, the metadata (es = sf_b − 141, bl, k_log2 = clog2(K_padded)) and, in "result", every
    field of the golden ``DotUnit(16, 32).chain`` with cfg = Config(mode=mode)."""
    qa = quant_block(np.ascontiguousarray(a_row, np.float32).view(np.uint32).tolist(), BIASED)
    qb = quant_block(np.ascontiguousarray(b_col, np.float32).view(np.uint32).tolist(), BIASED)
    k = len(qa.I)
    pad = (-k) % LANES
    a = list(qa.I) + [0] * pad
    b = list(qb.I) + [0] * pad
    k_log2 = clog2(k + pad)
    rec = {"product": product, "batch": batch, "i": int(i), "j": int(j), "k": k,
           "mode": mode, "mode_name": MODE_NAMES[mode], "a": a, "b": b,
           "es_a": qa.sf_b - 141, "es_b": qb.sf_b - 141, "sf_a": qa.sf_b, "sf_b": qb.sf_b,
           "bl_a": qa.bl, "bl_b": qb.bl, "k_log2": k_log2, "lanes": LANES, "acc_w": ACC_W}
    unit = unit or DotUnit(LANES, ACC_W)
    rec["result"] = unit.chain(a, b, rec["es_a"], rec["es_b"], Config(mode=mode),
                               bl_a=rec["bl_a"], bl_b=rec["bl_b"], k_log2=k_log2)
    return rec


def spot_check_chains(n_per_mode=256, runs=None, data=None):
    """DFP-V10 sample: >= ``n_per_mode`` chains per mode (ADAPTIVE, CHUNK) from the products
    of the first and the last mini-batch of the seed-0 run of §4.14 in that mode.

    Sampling: one ``numpy.random.default_rng(99)``; for mode in (ADAPTIVE, CHUNK), batch in
    ("first", "last"), product in PRODUCTS (z1, z2, dW2, dh, dW1): ceil(n_per_mode / 10)
    distinct (i, j) output positions drawn with ``rng.choice(M·N, n, replace=False)``
    (row-major flat index). Each record is a dict (see ``chain_record``) whose "result" holds
    every DfpResult field of ``DotUnit(16, 32).chain``; it is also checked against the
    matching element of ``dfp_matmul(..., full=True)``.

    ``runs`` may hold {"adaptive": train(0, "adaptive", capture=True), "chunk": ...} to
    reuse runs already made; missing ones are trained here.
    """
    runs = dict(runs or {})
    rng = np.random.default_rng(SPOT_SEED)
    per = -(-n_per_mode // (2 * len(PRODUCTS)))
    out = []
    for kind in ("adaptive", "chunk"):
        mode = DFP_MODES[kind]
        if kind not in runs:
            runs[kind] = train(0, kind, data=data, capture=True)
        captured = runs[kind]["captured"]
        unit = DotUnit(LANES, ACC_W)
        for batch in ("first", "last"):
            for product in PRODUCTS:
                a, b = captured[(batch, product)]
                full = dfp_matmul(a, b, mode, lanes=LANES, acc_w=ACC_W, round_mode=BIASED,
                                  cfg=Config(mode=mode), full=True)
                m, n = a.shape[0], b.shape[1]
                for flat in rng.choice(m * n, size=min(per, m * n), replace=False):
                    i, j = divmod(int(flat), n)
                    rec = chain_record(a[i], b[:, j], mode, product, batch, i, j, unit)
                    vec = {f: int(full[f][i, j]) for f in
                           ("acc", "es_out", "r", "shifts", "ovf", "sat_cnt", "headroom",
                            "chunks", "fp32", "mode")}
                    if any(rec["result"][f] != v for f, v in vec.items()):
                        raise AssertionError(f"dfp_matmul != DotUnit.chain at {product} "
                                             f"{batch} ({i}, {j}) {MODE_NAMES[mode]}")
                    out.append(rec)
    return out


def main():
    res = training_parity()
    for kind in MM_KINDS:
        print(kind, "per seed", [f"{a:.4f}" for a in res["test_acc"][kind]],
              f"mean {res['mean'][kind]:.4f}", f"{res['seconds'][kind]:.1f} s")
    print("gap_pp", res["gap_pp"], "seed_gap_pp", res["seed_gap_pp"])
    print(f"total {res['total_seconds']:.1f} s")


if __name__ == "__main__":
    main()
