"""Descriptor-less block copies (spec tma.md §4.10; TMA-F47..F50): the GV31/GV32/GV36 vectors and
random G2S / S2G / S2S copies against a flat numpy reference memory."""

import random

import numpy as np
import pytest

from golden.tma import vectors as gv
from golden.tma.formats import CmdOp, TmaCmd
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.model import TmaModel
from golden.tma.params import TmaParams

SENT = 0x5A


def _model(p=None, seed=0, **kw):
    p = p or TmaParams()
    return TmaModel(p, GlobalMemory(p.ADDR_W, default=0x33), SharedMemory(p.SMEM_AW, default=SENT),
                    seed=seed, **kw)


def _lanes(be):
    return [j for j in range(128) if be >> j & 1]


@pytest.mark.req("TMA-GV31", "TMA-F47", "TMA-F33", "TMA-F35")
@pytest.mark.parametrize("smem_addr", [0x200, 0x270])
def test_gv31_block_g2s(smem_addr):
    m = _model()
    data = np.random.default_rng(31).integers(0, 256, 320, dtype=np.uint8)
    m.gmem.write(0x1070, data)
    cmd = TmaCmd(**dict(gv.GV31_CMD, smem_addr=smem_addr, mbar_addr=0x20000, id=5))
    run = m.run([cmd])
    res = run.commands[0]
    got = [(q.line * 128, q.sectors, (q.lane, q.lane + q.nbytes - 1), (q.dense, q.dense + q.nbytes - 1))
           for q in res.requests]
    assert got == gv.GV31["pieces"]
    if smem_addr == 0x200:
        assert len(res.beats) == gv.GV31["beats"]
        assert [b.row for b in res.beats] == gv.GV31["beat_rows"]
    else:
        assert [(smem_addr + q.dense, smem_addr + q.dense + q.nbytes - 1) for q in res.requests] \
            == gv.GV31["alt_ranges"]
        assert len(res.beats) == gv.GV31["alt_beats"]
        assert [b.row for b in res.beats] == gv.GV31["alt_beat_rows"]
        dense_rows = sum((q.dense + q.nbytes - 1) // 128 - q.dense // 128 + 1 for q in res.requests)
        assert dense_rows == gv.GV31["alt_dense_rows"]
    assert res.tx[0] == gv.GV31["tx"] and all(u.addr == 0x20000 for u in res.mbar)
    assert bytes(m.smem.read(0, smem_addr, 320)) == data.tobytes()
    assert m.smem.read(0, smem_addr - 1, 1)[0] == SENT and m.smem.read(0, smem_addr + 320, 1)[0] == SENT
    assert run.done == [5]


@pytest.mark.req("TMA-GV32", "TMA-F50", "TMA-F36")
@pytest.mark.parametrize("op", [CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2G, CmdOp.BLOCK_S2S, CmdOp.BLOCK_RED,
                                CmdOp.BLOCK_PREFETCH])
def test_gv32_zero_blocks_is_a_nop(op):
    m = _model()
    m.gmem.write(0x1000, bytes(range(64)))
    nop = TmaCmd(**dict(gv.GV32_CMD, op=op, id=2))
    before = TmaCmd(**dict(gv.GV31_CMD, mbar_addr=0x20000, id=1))
    after = TmaCmd(**dict(gv.GV31_CMD, mbar_addr=0x20000, smem_addr=0x1000, id=3))
    run = m.run([before, nop, after])
    assert run.commands[1].code == 0 and run.commands[1].traffic == 0
    assert run.done == [1, 2, 3] and run.errs == [] and run.idle
    assert not [e for e in run.events if e[0] == "desc_rd"]


@pytest.mark.req("TMA-GV36", "TMA-F49", "TMA-F35")
def test_gv36_block_s2s_to_a_peer():
    m = _model()
    src = np.random.default_rng(36).integers(0, 256, 64, dtype=np.uint8)
    m.smem.write(0, 0x100, src)
    run = m.run([TmaCmd(**gv.GV36_CMD)])
    res = run.commands[0]
    v = gv.GV36
    assert res.requests == [] and not [e for e in run.events if e[0] in ("l2_req", "l2_resp")]
    lo, hi = v["dst"]
    assert bytes(m.smem.read(v["dst_cta"], lo, hi - lo + 1)) == src.tobytes()
    assert [b.row for b in res.beats] == v["beat_rows"] and {b.mask for b in res.beats} == {v["mask"]}
    assert sum(u.tx for u in res.mbar) == v["tx"] and {u.mask for u in res.mbar} == {v["mask"]}
    assert {u.addr for u in res.mbar} == {0x20000}
    assert res.smem_reads and {cta for _, cta in res.smem_reads} == {0}
    assert m.smem.read(v["dst_cta"], lo - 1, 1)[0] == SENT and m.smem.read(0, 0x1F0, 1)[0] == SENT
    assert run.done == [0]


@pytest.mark.req("TMA-F48", "TMA-F25", "TMA-I4")
def test_block_s2g_write_requests():
    m = _model()
    src = np.random.default_rng(48).integers(0, 256, 320, dtype=np.uint8)
    m.smem.write(3, 0x210, src)
    cmd = TmaCmd(op=CmdOp.BLOCK_S2G, gaddr=0x1070, num_blocks=20, smem_addr=0x210, cta_id=3, id=9)
    run = m.run([cmd])
    res = run.commands[0]
    assert [(q.line * 128, q.sectors) for q in res.requests] == [
        (0x1000, 0x8), (0x1080, 0xF), (0x1100, 0xF), (0x1180, 0x3)]
    for q in res.requests:
        assert q.op == 1 and _lanes(q.be) == list(range(q.lane, q.lane + q.nbytes))
        assert all(q.sectors >> (j // 32) & 1 for j in _lanes(q.be))
        assert all((q.sectors >> s & 1) == any(32 * s <= j < 32 * s + 32 for j in _lanes(q.be))
                   for s in range(4))
        assert bytes(q.data[q.lane:q.lane + q.nbytes]) == src[q.dense:q.dense + q.nbytes].tobytes()
        assert not any(q.data[:q.lane]) and not any(q.data[q.lane + q.nbytes:])
    assert bytes(m.gmem.read(0x1070, 320)) == src.tobytes()
    assert m.gmem[0x106F] == 0x33 and m.gmem[0x1070 + 320] == 0x33
    assert res.beats == [] and res.mbar == [] and len(res.responses) == 4
    assert run.done == [9] and run.outstanding == 0


def _lines(start, n):
    return list(range(start // 128, (start + n - 1) // 128 + 1))


@pytest.mark.req("TMA-F47", "TMA-F48", "TMA-F49")
def test_random_block_copies_against_a_flat_memory(seed):
    """Random sequences of G2S / S2G / S2S (with multicast masks) and NOPs; a flat numpy model of
    global memory and 16 smem windows applies the same copies byte for byte."""
    rng = random.Random(seed)
    p = TmaParams(SMEM_AW=14)
    G = np.frombuffer(rng.randbytes(1 << 16), dtype=np.uint8).copy()        # global 0..64 KiB
    S = np.frombuffer(rng.randbytes(16 << 14), dtype=np.uint8).copy().reshape(16, 1 << 14)
    m = TmaModel(p, GlobalMemory(p.ADDR_W), SharedMemory(p.SMEM_AW), response_order="random",
                 seed=seed)
    m.gmem.write(0, G)
    for cta in range(16):
        m.smem.write(cta, 0, S[cta])
    cmds = []
    for k in range(150):
        op = rng.choice([CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2G, CmdOp.BLOCK_S2S])
        nb = rng.choice([0, 1, 2, 7, 8, 9, 31, 64]) if rng.random() < 0.9 else rng.randint(1, 200)
        n = 16 * nb
        gaddr = 16 * rng.randint(0, (len(G) - n) // 16)
        # (an empty copy still needs an address below 2^14)
        smem_addr = 16 * rng.randint(0, ((1 << 14) - max(n, 16)) // 16)
        smem_dst = 16 * rng.randint(0, ((1 << 14) - max(n, 16)) // 16)
        cta = rng.randint(0, 15)
        mcast = int(op != CmdOp.BLOCK_S2G and rng.random() < 0.4)
        mask = rng.randint(1, 0xFFFF) if mcast else 0
        dest = mask if mcast else 1 << cta
        if op == CmdOp.BLOCK_S2S and dest >> cta & 1 and smem_addr != smem_dst \
                and abs(smem_addr - smem_dst) < n:
            smem_dst = smem_addr if rng.random() < 0.5 else (smem_addr + n if smem_addr + 2 * n <= (1 << 14) else smem_addr)
        cmd = TmaCmd(id=k & 0xFF, op=op, gaddr=gaddr, num_blocks=nb, smem_addr=smem_addr,
                     smem_dst=smem_dst, cta_id=cta, mcast=mcast, cta_mask=mask,
                     mbar_addr=8 * rng.randint(0, 100))
        cmds.append(cmd)
        # the flat reference
        if op == CmdOp.BLOCK_G2S:
            for c in range(16):
                if dest >> c & 1:
                    S[c, smem_addr:smem_addr + n] = G[gaddr:gaddr + n]
        elif op == CmdOp.BLOCK_S2G:
            G[gaddr:gaddr + n] = S[cta, smem_addr:smem_addr + n]
        else:
            chunk = S[cta, smem_addr:smem_addr + n].copy()
            for c in range(16):
                if dest >> c & 1:
                    S[c, smem_dst:smem_dst + n] = chunk
    run = m.run(cmds)
    assert run.errs == [] and run.done == [c.id for c in cmds] and run.idle
    assert bytes(m.gmem.read(0, len(G))) == G.tobytes()
    for cta in range(16):
        assert bytes(m.smem.read(cta, 0, 1 << 14)) == S[cta].tobytes(), cta
    for cmd, res in zip(cmds, run.commands):
        n = 16 * cmd.num_blocks
        if cmd.op == CmdOp.BLOCK_S2S or n == 0:
            assert res.requests == []
        else:
            assert [q.line for q in res.requests] == _lines(cmd.gaddr, n)
        if cmd.op != CmdOp.BLOCK_S2G and n:
            for cta in range(16):
                assert res.tx[cta] == (n if cmd.dest_mask >> cta & 1 else 0)
            rows = _lines(cmd.smem_addr if cmd.op == CmdOp.BLOCK_G2S else cmd.smem_dst, n)
            if cmd.op == CmdOp.BLOCK_S2S:
                assert [b.row for b in res.beats] == rows
            else:
                assert sorted({b.row for b in res.beats}) == rows
            assert all(b.mask == cmd.dest_mask for b in res.beats)


@pytest.mark.req("TMA-F49")
def test_s2s_broadcast_including_the_source_cta_with_identical_range():
    m = _model()
    src = np.arange(48, dtype=np.uint8)
    m.smem.write(2, 0x400, src)
    cmd = TmaCmd(op=CmdOp.BLOCK_S2S, smem_addr=0x400, smem_dst=0x400, num_blocks=3, cta_id=2,
                 mcast=1, cta_mask=0xFFFF, mbar_addr=0x100)
    res = m.run([cmd]).commands[0]
    assert res.code == 0
    for cta in range(16):
        assert bytes(m.smem.read(cta, 0x400, 48)) == src.tobytes()
        assert res.tx[cta] == 48


def test_random_block_copies_regression_seed_1758353307():
    """CI seed that drew smem_addr = 2^14 for an empty copy (the generator, not the model)."""
    test_random_block_copies_against_a_flat_memory(1758353307)
