"""The transaction model as a whole: request FIFO, descriptor cache with look-ahead (§4.12), the
tracker under out-of-order responses, completion accounting (§4.11), multicast (TMA-GV34) and
randomized command streams."""

import random

import numpy as np
import pytest

from golden.tma import vectors as gv
from golden.tma.completion import Completion, CompletionError
from golden.tma.desccache import DescCache, golden_desc_reads
from golden.tma.encode import encode_desc
from golden.tma.formats import CmdOp, DType, L2Op, MbarUpdate, TmaCmd
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.model import TmaModel, run_command
from golden.tma.params import TmaParams
from golden.tma.reqqueue import QueueFull, ReqQueue
from golden.tma.tracker import Placement, Tracker, TrackerError
from tests.golden.test_tma_support import random_tile_case

LINES = [0x8000 + 128 * k for k in range(8)]          # descriptor lines


def _desc(k, **changes):
    """Descriptor k: a small U32 2-D tensor at 0x100000 + k * 0x10000, box {16, 4 + k}."""
    d = dict(global_address=0x100000 + k * 0x10000, tensor_size=(64, 32), tensor_stride=(256,),
             rank=2, dtype=DType.U32, box_size=(16, 4 + k))
    return {**d, **changes}


def _world(p=None, ndesc=8, seed=1):
    p = p or TmaParams()
    gmem, smem = GlobalMemory(p.ADDR_W), SharedMemory(p.SMEM_AW)
    rng = np.random.default_rng(seed)
    for k in range(ndesc):
        gmem.write(LINES[k], encode_desc(**_desc(k)))
        gmem.write(0x100000 + k * 0x10000, rng.integers(0, 256, 64 * 32 * 4, dtype=np.uint8))
    return gmem, smem


def _load(k, cid=0, **changes):
    c = dict(id=cid, op=CmdOp.TENSOR_LOAD, rank=2, desc_addr=LINES[k], coord=(k, -1),
             smem_addr=0x1000 * (cid % 16), mbar_addr=0x30000)
    return TmaCmd(**{**c, **changes})


def _is_user(cmd):
    """Cache user per §4.12, written out: tensor op, not reserved, multicast rules, aligned."""
    if cmd.op > 3:
        return False
    if cmd.mcast and (cmd.op != 0 or cmd.cta_mask == 0):
        return False
    return cmd.desc_addr % 128 == 0


def _random_stream(rng, nlines, n=40):
    cmds = []
    for cid in range(n):
        r = rng.random()
        k = rng.randrange(nlines)
        if r < 0.55:
            cmds.append(_load(k, cid & 0xFF))
        elif r < 0.62:
            cmds.append(_load(k, cid & 0xFF, rank=3))                 # rejected 0x06, reads
        elif r < 0.67:
            cmds.append(_load(k, cid & 0xFF).replace(desc_addr=LINES[k] + 16))   # 0x04, no read
        elif r < 0.72:
            cmds.append(_load(k, cid & 0xFF, mcast=1, cta_mask=0))    # 0x03, no read
        elif r < 0.80:
            cmds.append(TmaCmd(id=cid & 0xFF, op=CmdOp.DESC_INVAL))
        elif r < 0.86:
            cmds.append(TmaCmd(id=cid & 0xFF, op=CmdOp.WAIT_ALL))
        else:
            cmds.append(TmaCmd(id=cid & 0xFF, op=CmdOp.BLOCK_G2S, gaddr=0x100000, num_blocks=3,
                               smem_addr=0x30100, mbar_addr=0x30008))
    return cmds


def _count_reads(cmds):
    total, seen = 0, set()
    for c in cmds:
        if c.op == CmdOp.DESC_INVAL:
            seen = set()
        elif _is_user(c) and c.desc_addr not in seen:
            seen.add(c.desc_addr)
            total += 1
    return total


@pytest.mark.req("TMA-F4", "TMA-F5", "TMA-F8", "TMA-E1")
def test_descriptor_reads_equal_the_golden_count(seed):
    """Streams with at most DC_ENTRIES descriptor lines per DESC_INVAL epoch: one desc_rd per
    distinct line per epoch; rejected cache users read too, commands failing 0x01-0x04 never."""
    rng = random.Random(seed)
    for trial in range(30):
        entries = rng.choice([2, 4, 8])
        p = TmaParams(DC_ENTRIES=entries, Q_DEPTH=rng.choice([2, 4, 16]))
        cmds = _random_stream(rng, nlines=entries)
        gmem, smem = _world(p)
        run = TmaModel(p, gmem, smem).run(cmds)
        expect = _count_reads(cmds)
        assert len(run.desc_reads) == expect
        assert golden_desc_reads(cmds, entries) == (expect, expect)
        assert [r.addr for r in run.desc_reads] == [e[1].addr for e in run.events if e[0] == "desc_rd"]


@pytest.mark.req("TMA-F5")
def test_lru_replacement_and_bounds(seed):
    p = TmaParams(DC_ENTRIES=2)
    gmem, smem = _world(p)
    seq = [0, 1, 2, 0, 1, 0, 2, 1]       # A B C A B A C B with 2 entries, LRU
    run = TmaModel(p, gmem, smem).run([_load(k, i) for i, k in enumerate(seq)])
    # A B C(evict A) A(evict B) B(evict C) A(hit) C(evict B) B(evict A)
    assert [r.addr for r in run.desc_reads] == [LINES[k] for k in (0, 1, 2, 0, 1, 2, 1)]
    rng = random.Random(seed)
    for _ in range(20):
        cmds = _random_stream(rng, nlines=6)
        gmem, smem = _world(p)
        run = TmaModel(p, gmem, smem).run(cmds)
        lo, hi = golden_desc_reads(cmds, 2)
        assert lo <= len(run.desc_reads) <= hi


def _lru_reads(cmds, entries):
    """Independent reference: an OrderedDict LRU over the cache users' lines, emptied by each
    accepted DESC_INVAL; the look-ahead changes when a line is read, not which lines are."""
    from collections import OrderedDict
    cache, reads = OrderedDict(), []
    for c in cmds:
        if c.op == CmdOp.DESC_INVAL and not c.mcast:
            cache.clear()
        elif _is_user(c):
            if c.desc_addr in cache:
                cache.move_to_end(c.desc_addr)
            else:
                reads.append(c.desc_addr)
                if len(cache) == entries:
                    cache.popitem(last=False)
                cache[c.desc_addr] = True
    return reads


@pytest.mark.req("TMA-F5")
def test_lru_over_capacity_matches_a_reference_lru(seed):
    rng = random.Random(seed)
    for _ in range(30):
        entries = rng.choice([2, 3, 4])
        p = TmaParams(DC_ENTRIES=entries, Q_DEPTH=rng.choice([2, 5]))
        cmds = _random_stream(rng, nlines=entries + rng.randint(1, 4), n=50)
        gmem, smem = _world(p)
        run = TmaModel(p, gmem, smem).run(cmds)
        assert [r.addr for r in run.desc_reads] == _lru_reads(cmds, entries)


@pytest.mark.req("TMA-F5")
def test_victim_is_never_the_entry_held_by_setup():
    lines = {a: bytes([(a >> 7) & 0xFF]) * 128 for a in LINES}
    cache = DescCache(2, lambda a: lines[a])
    cache.lookup(LINES[0])
    cache.lookup(LINES[1])                              # LRU: line 0
    assert cache.lookahead(LINES[2], held_addr=LINES[0]) is True
    assert cache.lines() == [LINES[0], LINES[2]]        # line 1 evicted although line 0 was LRU
    assert cache.lookahead(LINES[2]) is False           # cached: no read, no refresh
    cache.invalidate()
    assert cache.lines() == [] and len(cache.reads) == 3
    with pytest.raises(ValueError):
        DescCache(1, lambda a: lines[a])



def test_lookahead_fetches_the_next_descriptor_before_the_current_requests():
    gmem, smem = _world()
    run = TmaModel(TmaParams(), gmem, smem).run([_load(0, 1), _load(1, 2), _load(1, 3)])
    kinds = [(e[0], e[1].lookahead if e[0] == "desc_rd" else None) for e in run.events
             if e[0] in ("desc_rd", "l2_req")]
    assert kinds[0] == ("desc_rd", False) and kinds[1] == ("desc_rd", True)
    assert all(k[0] == "l2_req" for k in kinds[2:])
    assert run.commands[1].cache_hit and run.commands[2].cache_hit
    assert [(r.addr, r.lookahead) for r in run.commands[0].desc_reads] == [(LINES[0], False)]
    assert [(r.addr, r.lookahead) for r in run.commands[1].desc_reads] == [(LINES[1], True)]
    assert run.commands[2].desc_reads == []
    # no look-ahead across DESC_INVAL, nor for non-users
    gmem, smem = _world()
    run = TmaModel(TmaParams(), gmem, smem).run(
        [_load(0, 1), TmaCmd(id=2, op=CmdOp.DESC_INVAL), _load(0, 3),
         TmaCmd(id=4, op=CmdOp.WAIT_ALL), _load(1, 5).replace(desc_addr=LINES[1] + 8)])
    assert [(r.addr, r.lookahead, r.seq) for r in run.desc_reads] == [(LINES[0], False, 0),
                                                                      (LINES[0], False, 2)]
    assert run.done == [1, 2, 3, 4] and run.errs == [(5, 0x04)]


@pytest.mark.req("TMA-F8")
def test_changed_descriptor_is_used_only_after_desc_inval():
    gmem, smem = _world()
    m = TmaModel(TmaParams(), gmem, smem)
    first = m.run([_load(0, 1)]).commands[-1]
    gmem.write(LINES[0], encode_desc(**_desc(0, box_size=(16, 2))))     # descriptor changed
    stale = m.run([_load(0, 2)]).commands[-1]
    assert stale.cache_hit and stale.request_keys() == first.request_keys()
    fresh = m.run([TmaCmd(id=3, op=CmdOp.DESC_INVAL), _load(0, 4)]).commands[-1]
    assert not fresh.cache_hit and len(fresh.requests) == 1 and fresh.box_bytes == 128   # rows y -1, 0
    assert m.completion.done == [1, 2, 3, 4]


@pytest.mark.req("TMA-F8")
def test_rejected_desc_inval_invalidates_nothing():
    gmem, smem = _world()
    cmds = [_load(0, 1), TmaCmd(id=2, op=CmdOp.DESC_INVAL, mcast=1, cta_mask=1), _load(0, 3)]
    run = TmaModel(TmaParams(), gmem, smem).run(cmds)
    assert run.errs == [(2, 0x02)] and len(run.desc_reads) == 1 and run.commands[2].cache_hit
    assert golden_desc_reads(cmds, 4) == (1, 1)


def _mixed_stream(rng, p, n=25):
    """Random tile loads (distinct descriptors), block copies, rejected commands, WAIT_ALL."""
    gmem, smem = GlobalMemory(p.ADDR_W), SharedMemory(p.SMEM_AW)
    cmds = []
    for cid in range(n):
        r = rng.random()
        if r < 0.6:
            desc, cmd, buf = random_tile_case(rng, max_box_bytes=2048)
            addr = 0x8000 + 128 * cid
            gmem.write(addr, encode_desc(**desc))
            gmem.write(desc["global_address"], buf)
            cmd = dict(cmd, smem_addr=cmd["smem_addr"] % 0x20000 // 1024 * 1024)
            c = TmaCmd(id=cid, desc_addr=addr, **cmd)
            if rng.random() < 0.15:
                c = c.replace(rank=(c.rank % 5) + 1)            # rejected: rank mismatch
            cmds.append(c)
        elif r < 0.75:
            cmds.append(TmaCmd(id=cid, op=CmdOp.BLOCK_G2S, gaddr=16 * rng.randint(0x1000, 0x2000),
                               num_blocks=rng.randint(0, 40), smem_addr=0x30000 + 16 * rng.randint(0, 100),
                               mbar_addr=0x3FFF0, cta_id=rng.randint(0, 15)))
        elif r < 0.85:
            cmds.append(TmaCmd(id=cid, op=CmdOp.BLOCK_S2G, gaddr=16 * rng.randint(0x3000, 0x4000),
                               num_blocks=rng.randint(0, 40), smem_addr=16 * rng.randint(0, 100),
                               cta_id=rng.randint(0, 15)))
        elif r < 0.93:
            cmds.append(TmaCmd(id=cid, op=CmdOp.WAIT_ALL))
        else:
            cmds.append(TmaCmd(id=cid, op=12))                  # rejected: reserved opcode
    return gmem, smem, cmds


def _observables(model, run):
    return ([c.request_keys() for c in run.commands], [dict(c.tx) for c in run.commands],
            run.errs, run.done, len(run.desc_reads))


@pytest.mark.req("TMA-F27", "TMA-F28", "TMA-F29", "TMA-C6", "TMA-C4")
def test_results_do_not_depend_on_response_order_or_sizes(seed):
    """The same stream under FIFO, LIFO and random response orders, different tracker sizes, queue
    depths and junk in unrequested sectors gives identical images, requests, tx, err and done;
    tags are distinct among outstanding requests and outstanding follows +1/-1 per handshake."""
    rng = random.Random(seed)
    for trial in range(4):
        base = None
        stream_seed = rng.getrandbits(32)
        for order, trk, q, junk in [("fifo", 32, 4, 1), ("lifo", 4, 2, 2), ("random", 8, 16, 3),
                                    ("random", 256, 3, 4)]:
            p = TmaParams(TRK_ENTRIES=trk, Q_DEPTH=q)
            gmem, smem, cmds = _mixed_stream(random.Random(stream_seed), p)
            model = TmaModel(p, gmem, smem, response_order=order, seed=junk)
            run = model.run(cmds)
            outstanding, count, peak = set(), 0, 0
            for e in run.events:
                if e[0] == "l2_req":
                    assert e[1].tag not in outstanding and 0 <= e[1].tag < trk
                    outstanding.add(e[1].tag)
                    count += 1
                elif e[0] == "l2_resp":
                    outstanding.remove(e[1])
                    count -= 1
                peak = max(peak, count)
            assert count == 0 and not outstanding and peak <= trk and run.outstanding == 0
            assert run.idle and model.idle
            obs = (_observables(model, run), gmem, smem)
            if base is None:
                base = obs
            else:
                assert obs[0] == base[0]
                assert gmem.same_as(base[1]) and smem.same_as(base[2])


@pytest.mark.req("TMA-F35", "TMA-F36", "TMA-F37", "TMA-F38", "TMA-E7")
@pytest.mark.parametrize("fixed_seed", [None, 1225022428],
                         ids=["random", "regression_waitall_first"])
def test_completion_accounting_from_the_event_stream(seed, fixed_seed):
    """Seed 1225022428 is a kept regression case: a WAIT_ALL at the head of the stream retires
    after the command behind it (the test once attributed that command's traffic wrongly).

    Per command and destination CTA the tx sum is the box bytes; at every point cumulative tx per
    (CTA, barrier) <= bytes written by beats of commands using that barrier; done follows
    acceptance order among accepted commands, WAIT_ALL after everything before it; each accepted
    command gets exactly one done, each rejected exactly one err."""
    seed = seed if fixed_seed is None else fixed_seed
    rng = random.Random(seed)
    p = TmaParams()
    gmem, smem, cmds = _mixed_stream(rng, p, n=40)
    model = TmaModel(p, gmem, smem, response_order="random", seed=seed)
    run = model.run(cmds)
    written, credited = {}, {}
    retired = []
    def current_mbar(n_retired):
        """The model is sequential and retires in acceptance order: traffic belongs to the first
        command after the retired prefix that is not a WAIT_ALL (a WAIT_ALL has no traffic and
        may retire only after the command behind it, e.g. at the head of the stream)."""
        i = n_retired
        while i < len(run.commands) and run.commands[i].cmd.op == CmdOp.WAIT_ALL:
            i += 1
        return run.commands[i].cmd.mbar_addr if i < len(run.commands) else None

    for e in run.events:
        mbar_addr = current_mbar(len(retired))
        if e[0] == "smem_wr":
            for cta in range(16):
                if e[1].mask >> cta & 1:
                    key = (cta, mbar_addr)
                    written[key] = written.get(key, 0) + e[1].nbytes
        elif e[0] == "mbar":
            assert e[1].addr == mbar_addr
            for cta in range(16):
                if e[1].mask >> cta & 1:
                    key = (cta, e[1].addr)
                    credited[key] = credited.get(key, 0) + e[1].tx
                    assert credited[key] <= written.get(key, 0)
        elif e[0] in ("done", "err"):
            retired.append(e[1])
    accepted = [c for c in run.commands if not c.rejected]
    assert run.done == [c.cmd.id for c in accepted]
    assert sorted(run.errs) == sorted((c.cmd.id, c.code) for c in run.commands if c.rejected)
    assert sorted(retired) == sorted(c.id for c in cmds)
    for c in accepted:
        if c.cmd.op in (CmdOp.TENSOR_LOAD, CmdOp.BLOCK_G2S):
            for cta in range(16):
                assert c.tx[cta] == (c.box_bytes if c.cmd.dest_mask >> cta & 1 else 0)
    assert run.idle and run.outstanding == 0


@pytest.mark.req("TMA-F36", "TMA-F37", "TMA-E7")
def test_completion_retires_in_order():
    log = []
    c = Completion(log)
    for seq, (cid, op) in enumerate([(1, CmdOp.TENSOR_LOAD), (2, CmdOp.BLOCK_S2G),
                                     (3, CmdOp.TENSOR_LOAD), (4, CmdOp.WAIT_ALL),
                                     (5, CmdOp.BLOCK_G2S)]):
        c.accept(seq, cid, op)
    c.finish(4)                       # command 5 finishes first: held back by 1..4
    c.finish(1)                       # command 2 finishes before 1
    assert c.done == [] and not c.idle
    c.reject(2, 0x06)                 # err at once, does not block
    assert c.errs == [(3, 0x06)] and c.done == []
    c.finish(3)                       # setup passes the WAIT_ALL: it retires in order
    c.finish(0)
    assert c.done == [1, 2, 4, 5] and c.idle
    assert log == [("err", 3, 6), ("done", 1), ("done", 2), ("done", 4), ("done", 5)]
    with pytest.raises(CompletionError):
        c.finish(0)
    c.request()
    assert not c.idle
    c.response()
    with pytest.raises(CompletionError):
        c.response()
    c.beat(0b101, 16, 0x100)
    c.mbar(MbarUpdate(0x100, 16, 0b001))
    with pytest.raises(CompletionError):
        c.mbar(MbarUpdate(0x100, 1, 0b100 | 0b001))


@pytest.mark.req("TMA-F37", "TMA-E2")
def test_rejected_wait_all_gets_only_err():
    """A WAIT_ALL reaching the head of the retirement order before setup has seen it is not
    retired yet: setup may still reject it (here E_MCAST_OP), and then it ends with err only.
    (Found by the RTL top bench: the model used to retire WAIT_ALL at acceptance.)"""
    c = Completion()
    c.accept(0, 10, CmdOp.TENSOR_LOAD)
    c.accept(1, 11, CmdOp.WAIT_ALL)
    c.finish(0)
    assert c.done == [10] and not c.idle
    c.reject(1, 0x02)
    assert c.errs == [(11, 0x02)] and c.done == [10] and c.idle


@pytest.mark.req("TMA-F27", "TMA-F28", "TMA-C6")
def test_tracker_tags():
    t = Tracker(4)
    tags = [t.issue(Placement(0, 0, dense=k)) for k in range(4)]
    assert tags == [0, 1, 2, 3] and t.full and t.outstanding == 4
    with pytest.raises(TrackerError):
        t.issue(Placement(0, 0))
    assert t.respond(2).dense == 2 and t.outstanding == 3
    with pytest.raises(TrackerError):
        t.respond(2)                  # not outstanding any more
    assert t.issue(Placement(0, 0, dense=9)) == 2 and t.placement(2).dense == 9
    assert t.outstanding_tags() == [0, 1, 3, 2]


@pytest.mark.req("TMA-F1", "TMA-C4")
def test_request_queue_is_a_fifo():
    q = ReqQueue(3)
    assert q.ready and [q.push(x) for x in "abc"] == [0, 1, 2] and not q.ready
    with pytest.raises(QueueFull):
        q.push("d")
    assert q.peek() == "a" and q.peek(1) == "b" and q.peek(3) is None
    assert q.pop() == "a" and q.ready and q.push("d") == 3
    assert [q.pop() for _ in range(3)] == ["b", "c", "d"] and len(q) == 0


@pytest.mark.req("TMA-GV34", "TMA-F34")
def test_gv34_multicast_on_gv9():
    (_, h, w, c), _, _ = gv.FIG8_TENSORS["B"]
    data = np.random.default_rng(34).integers(0, 256, h * w * c * 2, dtype=np.uint8)
    p = TmaParams()
    gmem, smem = GlobalMemory(), SharedMemory(default=0x11)
    gmem.write(gv.FIG8_DESC_ADDR, encode_desc(**gv.ERROR_BASES["T"][0]))
    gmem.write(gv.FIG8_GADDR, data)
    cmd = TmaCmd(**dict(gv.ERROR_BASES["T"][1], mcast=1, cta_mask=gv.GV34["cta_mask"], cta_id=1))
    res = TmaModel(p, gmem, smem).run([cmd]).commands[0]
    assert {b.mask for b in res.beats} == {u.mask for u in res.mbar} == {0x0005}
    a, b = (smem.read(cta, 0, 1600) for cta in gv.GV34["ctas"])
    assert bytes(a) == bytes(b) and res.tx[0] == res.tx[2] == gv.GV34["tx"] and res.tx[1] == 0
    assert set(smem.read(gv.GV34["not_written"], 0, 4096)) == {0x11}
    uni = SharedMemory()
    TmaModel(p, gmem, uni).run([cmd.replace(mcast=0, cta_mask=0, cta_id=0)])
    assert bytes(uni.read(0, 0, 1600)) == bytes(a)          # the unicast image


@pytest.mark.req("TMA-F36")
def test_run_command_runs_every_op():
    gmem, smem = _world()
    res = run_command(_load(0, 9), gmem, smem)
    assert res.code == 0 and res.done and res.smem is smem and res.gmem is gmem
    assert len(res.desc_reads) == 1 and not res.cache_hit
    loads = len(res.requests)
    for op in (CmdOp.TENSOR_STORE, CmdOp.TENSOR_PREFETCH):
        res = run_command(_load(0, 9, op=op), gmem, smem)
        assert res.code == 0 and res.done and 0 < len(res.requests) <= loads
        assert len(res.responses) == (len(res.requests) if op == CmdOp.TENSOR_STORE else 0)
    res = run_command(TmaCmd(op=CmdOp.BLOCK_PREFETCH, gaddr=0x1000, num_blocks=1), gmem, smem)
    assert res.done and [(q.op, q.line, q.sectors) for q in res.requests] == \
        [(L2Op.PREFETCH, 0x1000 >> 7, 0xF)]
