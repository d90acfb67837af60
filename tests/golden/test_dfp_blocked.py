"""Blocked DFP helpers (DFP-F49): tiling, per-block exponents and metadata, blocked GEMM."""

import numpy as np
import pytest

from golden.dfp.blocked import blocked_gemm, dequant_blocked, quant_blocked, tile
from golden.dfp.dot import DotUnit
from golden.dfp.formats import CHUNK, Config, unpack_meta
from golden.dfp.quant import quant_block


@pytest.mark.req("DFP-F49", "DFP-F47")
def test_tiling_metadata_and_round_trip(seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((64, 64)) * np.exp2(rng.integers(-20, 20, (64, 64)) // 16)).astype(np.float32)
    blocks = tile(x)
    assert [(p, q) for p, q, _ in blocks] == [(0, 0), (0, 1), (1, 0), (1, 1)]     # Fig 21A
    assert np.array_equal(blocks[1][2], x[:32, 32:].reshape(-1))                   # row-major
    bt = quant_blocked(x)
    assert bt.sf_b.shape == bt.meta.shape == (2, 2)
    for p, q, elements in blocks:
        ref = quant_block(elements.view(np.uint32), 1)
        assert list(bt.I[p * 32:(p + 1) * 32, q * 32:(q + 1) * 32].reshape(-1)) == ref.I
        assert unpack_meta(int(bt.meta[p, q]))["sf_b"] == ref.sf_b == bt.sf_b[p, q]
        assert unpack_meta(int(bt.meta[p, q]))["bl"] == 15
    err = np.abs(dequant_blocked(bt).astype(np.float64) - x)
    eps = np.exp2(np.kron(bt.sf_b, np.ones((32, 32))) - 141)
    assert (err <= 0.75 * eps + 1e-300).all()                           # BIASED element bound
    with pytest.raises(ValueError, match="multiple"):
        tile(np.zeros((40, 64)))


@pytest.mark.req("DFP-F49", "DFP-F48")
def test_blocked_gemm_uses_blocked_chunk(seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((64, 64)) * np.repeat([1.0, 1e3], 32)[None, :]).astype(np.float32)
    b = (rng.standard_normal((64, 32)) * np.repeat([1e-2, 1.0], 32)[:, None]).astype(np.float32)
    c, qa, qb = blocked_gemm(a, b, bm=32, bk=32, bn=32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = 64 * np.abs(a).max() * np.abs(b).max()
    assert np.abs(c - exact).max() / scale < 1e-4
    # one chain by hand: two segments, the second reloaded by a blk beat at beat 2 (LANES 16)
    i, j = 5, 7
    unit = DotUnit(16, 32)
    seg = [(int(qa.sf_b[0, kb]) - 141, int(qb.sf_b[kb, 0]) - 141, int(qa.bl[0, kb]), int(qb.bl[kb, 0]))
           for kb in range(2)]
    res = unit.chain(qa.I[i], qb.I[:, j], seg[0][0], seg[0][1], Config(mode=CHUNK),
                     bl_a=seg[0][2], bl_b=seg[0][3], blk={2: seg[1]})
    assert res["chunks"] >= 2 and np.float32(c[i, j]) == np.array(res["fp32"], np.uint32).view(np.float32)
