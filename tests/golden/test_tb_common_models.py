"""Simulator-free tests of the pure-Python parts of the testbench library.

golden.common.stream (pass-through model, payload encoding, RandomGate, ResponseScheduler),
tb.common.scoreboard.Scoreboard, tb.common.protocol.StreamRules and tb.common.memory's
SparseMemory and MemoryCore (driven cycle by cycle in Python against a flat reference memory).
"""

import random
from collections import deque

import pytest

from golden.common.fields import Fields
from golden.common.stream import (RandomGate, ResponseScheduler, decode_word, encode_item,
                                  pass_through)
from tb.common.memory import MemoryCore, SparseMemory
from tb.common.protocol import StreamRules
from tb.common.scoreboard import Scoreboard, ScoreboardError

# -- pass-through model and payload encoding ---------------------------------------------------


def test_pass_through_is_identity_copy():
    items = [3, 1, 4, 1, 5]
    out = pass_through(iter(items))
    assert out == items
    out.append(9)
    assert items == [3, 1, 4, 1, 5]


def test_encode_item_ints_and_fields(seed):
    rng = random.Random(seed)
    f = Fields(("tag", 5), ("addr", 12), ("write", 1))
    for _ in range(200):
        item = {"tag": rng.randrange(32), "addr": rng.randrange(4096), "write": rng.randrange(2)}
        word = encode_item(item, 18, f)
        # independent packing: tag at bit 0, addr at bit 5, write at bit 17
        assert word == item["tag"] | item["addr"] << 5 | item["write"] << 17
        assert decode_word(word, f) == item
    assert encode_item({"addr": 1}, 18, f) == 1 << 5          # missing fields are 0
    assert encode_item(7, 3) == 7 and decode_word(7) == 7
    assert encode_item(True, 1) == 1


@pytest.mark.parametrize("item, width, fields, text", [
    (8, 3, None, "does not fit"),
    (-1, 8, None, "does not fit"),
    (2.5, 8, None, "neither"),
    ("5", 8, None, "neither"),
    ({"a": 1}, 8, None, "needs a Fields"),
    ({"a": 4}, 8, Fields(("a", 2)), "does not fit"),
    ({"b": 1}, 8, Fields(("a", 2)), "unknown field"),
    ({"a": 1}, 3, Fields(("a", 2), ("b", 2)), "only 3"),
])
def test_encode_item_rejects(item, width, fields, text):
    with pytest.raises(ValueError, match=text):
        encode_item(item, width, fields)


# -- RandomGate ----------------------------------------------------------------------------------


def _runs(seq, value):
    runs, n = [], 0
    for s in seq:
        if s == value:
            n += 1
        elif n:
            runs.append(n)
            n = 0
    return runs


def test_gate_extremes():
    assert all(RandomGate(1.0, random.Random(1)).take(1000))
    assert not any(RandomGate(0.0, random.Random(1)).take(1000))
    assert all(RandomGate(1.0, random.Random(1), burst=8).take(1000))


@pytest.mark.parametrize("prob", [0.2, 0.5, 0.8])
@pytest.mark.parametrize("burst", [1.0, 5.0])
def test_gate_statistics(prob, burst, seed):
    n = 60_000
    seq = RandomGate(prob, random.Random(seed), burst).take(n)
    assert abs(sum(seq) / n - prob) < 0.03
    # mean run lengths of the Markov chain: off runs burst/prob, on runs burst/(1-prob)
    off, on = _runs(seq, False), _runs(seq, True)
    assert sum(off) / len(off) == pytest.approx(burst / prob, rel=0.12)
    assert sum(on) / len(on) == pytest.approx(burst / (1 - prob), rel=0.12)


def test_gate_independent_when_burst_1(seed):
    seq = RandomGate(0.3, random.Random(seed)).take(60_000)
    after_on = [b for a, b in zip(seq, seq[1:]) if a]
    after_off = [b for a, b in zip(seq, seq[1:]) if not a]
    assert sum(after_on) / len(after_on) == pytest.approx(0.3, abs=0.02)
    assert sum(after_off) / len(after_off) == pytest.approx(0.3, abs=0.02)


def test_gate_reproducible_and_checked(seed):
    assert RandomGate(0.4, random.Random(seed)).take(500) == RandomGate(0.4, random.Random(seed)).take(500)
    for bad in (-0.1, 1.1, True, "x"):
        with pytest.raises(ValueError, match="prob"):
            RandomGate(bad)
    with pytest.raises(ValueError, match="burst"):
        RandomGate(0.5, burst=0.5)
    gate = RandomGate(0.5)
    assert RandomGate.of(gate) is gate and RandomGate.of(0.25).prob == 0.25


# -- ResponseScheduler ---------------------------------------------------------------------------


def _drive_scheduler(sched, rng, n=400, push_prob=0.5):
    """Push n items at random times, pop at most one per time; returns [(item, push, due, pop)]."""
    pushed, out, time, k = {}, [], 0, 0
    while k < n or sched:
        if k < n and rng.random() < push_prob:
            due = sched.push(time, k)
            pushed[k] = (time, due)
            k += 1
        # invariant before popping: what pop may choose
        item = sched.pop(time)
        if item is not None:
            out.append((item, *pushed[item], time))
        time += 1
        assert time < 100_000
    return out


@pytest.mark.parametrize("order", ResponseScheduler.ORDERS)
def test_scheduler_latency_bounds_and_completeness(order, seed):
    rng = random.Random(seed)
    sched = ResponseScheduler(2, 9, order, random.Random(seed + 1))
    out = _drive_scheduler(sched, rng)
    assert sorted(item for item, *_ in out) == list(range(400))     # each exactly once
    lat = [due - push for _, push, due, _ in out]
    assert min(lat) == 2 and max(lat) == 9                            # bounds used and respected
    assert all(pop >= due for _, _, due, pop in out)                  # never early
    order_out = [item for item, *_ in out]
    if order == "in_order":
        assert order_out == sorted(order_out)
    else:
        assert order_out != sorted(order_out)                         # reordering happens


def test_scheduler_by_latency_picks_earliest_due(seed):
    rng = random.Random(seed)
    sched = ResponseScheduler(1, 6, "by_latency", random.Random(seed))
    due_of, n, popped = {}, 0, 0
    for t in range(400):
        if rng.random() < 0.7:
            due_of[n] = sched.push(t, n)
            n += 1
        due_now = [(due_of[i], i) for i in sched.items() if due_of[i] <= t]
        item = sched.pop(t)
        if due_now:
            assert item == min(due_now)[1]          # earliest due, oldest among equals
            popped += 1
        else:
            assert item is None
    assert popped > 200


def test_scheduler_in_order_waits_for_head():
    sched = ResponseScheduler(1, 1, "in_order")
    sched.push(0, "a")
    sched._entries[0][0] = 10          # force a long latency on the head
    sched.push(1, "b")                 # due at 2
    assert sched.pop(5) is None        # b is due but must not overtake a
    assert sched.pop(10) == "a" and sched.pop(10) == "b" and sched.pop(10) is None
    assert sched.next_due() is None and len(sched) == 0


def test_scheduler_checks_parameters():
    with pytest.raises(ValueError, match="min_latency"):
        ResponseScheduler(0, 3)
    with pytest.raises(ValueError, match="max_latency"):
        ResponseScheduler(4, 3)
    with pytest.raises(ValueError, match="order"):
        ResponseScheduler(1, 3, "lifo")


# -- Scoreboard ----------------------------------------------------------------------------------


def test_scoreboard_ordered_pass_and_failures():
    sb = Scoreboard("ok")
    sb.expect_all([1, 2, 3])
    for x in (1, 2, 3):
        assert sb.observe(x, cycle=x)
    sb.check_done()
    assert sb.matched == 3

    lost = Scoreboard("lost")
    lost.expect_all([1, 2, 3])
    lost.observe(1)
    lost.observe(2)
    lost.check()                                   # pending is fine mid-test
    with pytest.raises(ScoreboardError, match="never observed") as err:
        lost.check_done()
    assert len(err.value.errors) == 1 and "3" in err.value.errors[0]

    dup = Scoreboard("dup")
    dup.expect_all([1, 2])
    for x in (1, 2, 2):
        dup.observe(x)
    with pytest.raises(ScoreboardError, match="unexpected or duplicated"):
        dup.check()

    wrong = Scoreboard("wrong")
    wrong.expect_all([1, 2])
    wrong.observe(1)
    assert not wrong.observe(5, cycle=17)
    with pytest.raises(ScoreboardError, match=r"mismatch \(cycle 17\): expected 2, got 5"):
        wrong.check_done()

    swapped = Scoreboard("swapped")
    swapped.expect_all([1, 2])
    swapped.observe(2)
    swapped.observe(1)
    assert len(swapped.mismatches) == 2


def test_scoreboard_unordered_by_key():
    key = lambda r: r["tag"]                                   # noqa: E731
    sb = Scoreboard("ooo", ordered=False, key=key)
    sb.expect_all([{"tag": 1, "d": 10}, {"tag": 2, "d": 20}, {"tag": 1, "d": 11}])
    assert sb.observe({"tag": 2, "d": 20})                     # overtakes tag 1
    assert sb.observe({"tag": 1, "d": 10})                     # same key: oldest first
    assert sb.observe({"tag": 1, "d": 11})
    sb.check_done()
    assert sb.reordered == 1

    dup = Scoreboard("dup", ordered=False, key=key)
    dup.expect({"tag": 3, "d": 1})
    dup.observe({"tag": 3, "d": 1})
    dup.observe({"tag": 3, "d": 1})
    with pytest.raises(ScoreboardError, match="unexpected or duplicated"):
        dup.check_done()

    wrong = Scoreboard("wrong", ordered=False, key=key)
    wrong.expect({"tag": 4, "d": 1})
    wrong.observe({"tag": 4, "d": 2})
    with pytest.raises(ScoreboardError, match="mismatch"):
        wrong.check_done()

    lost = Scoreboard("lost", ordered=False, key=key)
    lost.expect_all([{"tag": 5, "d": 1}, {"tag": 6, "d": 2}])
    lost.observe({"tag": 6, "d": 2})
    assert lost.pending == [({"tag": 5, "d": 1}, None)]
    with pytest.raises(ScoreboardError, match="never observed"):
        lost.check_done()


def test_scoreboard_custom_compare():
    sb = Scoreboard("approx", compare=lambda e, o: abs(e - o) <= 1)
    sb.expect_all([10, 20])
    sb.observe(11)
    sb.observe(22)
    assert len(sb.mismatches) == 1 and sb.matched == 1


# -- StreamRules ---------------------------------------------------------------------------------


def _rules(samples):
    rules = StreamRules("s")
    for cycle, (v, r, p) in enumerate(samples):
        rules.step(v, r, p, cycle)
    return rules


def test_stream_rules_clean_sequence():
    rules = _rules([(0, 0, 7), (1, 0, 5), (1, 0, 5), (1, 1, 5), (0, 1, 9), (1, 1, 6), (1, 0, 8),
                    (1, 1, 8), (0, 0, 1)])
    assert rules.violations == [] and rules.transfers == 3
    rules.check()


@pytest.mark.parametrize("samples, kind, cycle", [
    ([(1, 0, 5), (0, 0, 5)], "valid_dropped", 1),
    ([(1, 0, 5), (1, 1, 6)], "payload_changed", 1),
    ([(1, 0, 5), (1, 0, 5), (1, 0, None)], "payload_changed", 2),   # and x_payload
    ([(None, 0, 5)], "x_valid", 0),
    ([(1, None, 5)], "x_ready", 0),
    ([(0, 1, 3), (1, 1, None)], "x_payload", 1),
])
def test_stream_rules_violations(samples, kind, cycle):
    rules = _rules(samples)
    found = [v for v in rules.violations if v.kind == kind]
    assert len(found) == 1 and found[0].cycle == cycle, rules.violations
    with pytest.raises(AssertionError, match=f"cycle {cycle}: {kind}"):
        rules.check()


def test_stream_rules_reset_forgets_pending():
    rules = StreamRules("s")
    rules.step(1, 0, 5, 0)
    rules.reset()
    rules.step(0, 0, 0, 1)
    assert rules.violations == []


# -- SparseMemory --------------------------------------------------------------------------------


def test_sparse_memory_against_bytearray(seed):
    rng = random.Random(seed)
    size = 3 * SparseMemory.PAGE
    mem = SparseMemory(size=size, fill=0xA5)
    ref = bytearray([0xA5]) * size
    for _ in range(500):
        n = rng.choice([1, 4, 8, 32, 100])
        addr = rng.choice([rng.randrange(size - n), SparseMemory.PAGE - 3, 2 * SparseMemory.PAGE - 50])
        data = bytes(rng.getrandbits(8) for _ in range(n))
        mask = rng.choice([None, rng.getrandbits(n), [rng.random() < 0.5 for _ in range(n)]])
        mem.write(addr, data, mask)
        for k in range(n):
            if mask is None or (isinstance(mask, int) and (mask >> k) & 1) or \
                    (isinstance(mask, list) and mask[k]):
                ref[addr + k] = data[k]
        a = rng.randrange(size - 64)
        assert mem.read(a, 64) == bytes(ref[a:a + 64])
    assert mem.read(0, size) == bytes(ref)
    mem.write_int(10, 0x1122334455, 5)
    assert mem.read(10, 5) == bytes([0x55, 0x44, 0x33, 0x22, 0x11]) and mem.read_int(10, 5) == 0x1122334455
    with pytest.raises(ValueError, match="outside"):
        mem.read(size - 2, 4)
    with pytest.raises(ValueError, match="mask"):
        mem.write(0, b"ab", [True])


# -- MemoryCore, cycle by cycle ------------------------------------------------------------------

REQ = Fields(("addr", 10), ("tag", 4), ("write", 1), ("wdata", 32), ("be", 4))
RESP = Fields(("tag", 4), ("write", 1), ("rdata", 32))


def _simulate(core, requests, rng, ready_prob=0.6, gap_prob=0.2, max_cycles=50_000):
    """Drive ``core`` like a DUT would: a request source with gaps that respects ready, a
    response sink with random ready. Returns (responses [(cycle, dict)], accepts [(cycle, tag)],
    the StreamRules fed with the response stream, peak outstanding)."""
    pending = deque(requests)
    current = None
    responses, accepts = [], []
    rules = StreamRules("resp")
    peak, cycle = 0, 0
    while pending or current is not None or not core.idle:
        if current is None and pending and rng.random() >= gap_prob:
            current = pending.popleft()
        ready = rng.random() < ready_prob
        rules.step(int(core.resp_valid), int(ready), core.resp_payload, cycle)
        req_fire = current is not None and core.req_ready
        resp_fire = core.resp_valid and ready
        if resp_fire:
            responses.append((cycle, RESP.unpack(core.resp_payload)))
        word = None
        if req_fire:
            word = REQ.pack(**current)
            accepts.append((cycle, current["tag"]))
            current = None
        core.edge(word, resp_fire)
        peak = max(peak, core.outstanding)
        cycle += 1
        assert cycle < max_cycles, "memory core stopped answering"
    return responses, accepts, rules, peak


def _random_requests(rng, n, ref):
    """Requests with unique-in-flight tags (a tag is reused only 16 requests later; the
    callers keep outstanding <= 16) and the expected responses from the flat reference."""
    reqs, expected = [], []
    for i in range(n):
        tag = i % 16
        addr = rng.choice([rng.randrange(1 << 10), 8, 12])
        if rng.random() < 0.5:
            be = rng.getrandbits(4)
            wdata = rng.getrandbits(32)
            reqs.append({"addr": addr, "tag": tag, "write": 1, "wdata": wdata, "be": be})
            for k in range(4):
                if (be >> k) & 1:
                    ref[addr + k] = (wdata >> 8 * k) & 0xFF
            expected.append({"tag": tag, "write": 1, "rdata": 0})
        else:
            reqs.append({"addr": addr, "tag": tag, "write": 0, "wdata": 0, "be": 0})
            expected.append({"tag": tag, "write": 0,
                             "rdata": int.from_bytes(ref[addr:addr + 4], "little")})
    return reqs, expected


@pytest.mark.parametrize("order", ResponseScheduler.ORDERS)
def test_memory_core_against_flat_reference(order, seed):
    rng = random.Random(seed)
    ref = bytearray(rng.getrandbits(8) for _ in range((1 << 10) + 4))
    core = MemoryCore(REQ, RESP, min_latency=2, max_latency=10, order=order, max_outstanding=5,
                      req_ready_prob=0.8, resp_gap_prob=0.1, rng=random.Random(seed + 1))
    core.write(0, bytes(ref))
    reqs, expected = _random_requests(rng, 600, ref)
    responses, accepts, rules, peak = _simulate(core, reqs, rng)
    rules.check()                                           # the core obeys the stream rules
    sb = Scoreboard("core", ordered=False, key=lambda r: r["tag"])
    sb.expect_all(expected)
    for cycle, resp in responses:
        sb.observe(resp, cycle)
    sb.check_done()
    assert peak == 5 and core.stats["max_outstanding"] == 5
    assert core.read(0, len(ref)) == bytes(ref)
    assert core.stats["min_latency"] >= 2
    core.check_idle()
    tags_in_order = [r["tag"] for _, r in responses] == [r["tag"] for r in reqs]
    assert tags_in_order == (order == "in_order")


def test_memory_core_latency_exact_without_contention(seed):
    """One request at a time, sink always ready, no gaps: every response comes exactly at its
    drawn latency, so the measured latencies lie in [min, max] and take every value there."""
    rng = random.Random(seed)
    ref = bytearray((1 << 10) + 4)
    core = MemoryCore(REQ, RESP, min_latency=1, max_latency=4, max_outstanding=1,
                      rng=random.Random(seed))
    reqs, _ = _random_requests(rng, 300, ref)
    responses, accepts, rules, _ = _simulate(core, reqs, rng, ready_prob=1.0, gap_prob=0.0)
    rules.check()
    assert len(responses) == len(accepts) == len(reqs)
    # a transfer sampled in cycle c happens at edge c + 1: latency = response cycle - request cycle
    latencies = []
    for (acycle, tag), (rcycle, resp) in zip(accepts, responses):
        assert resp["tag"] == tag
        latencies.append(rcycle - acycle)
    assert set(latencies) == {1, 2, 3, 4}
    assert core.stats["min_latency"] == 1 and core.stats["max_latency"] == 4


def test_memory_core_holds_response_under_backpressure(seed):
    rng = random.Random(seed)
    ref = bytearray((1 << 10) + 4)
    core = MemoryCore(REQ, RESP, min_latency=1, max_latency=3, rng=random.Random(seed))
    reqs, expected = _random_requests(rng, 16, ref)
    responses, _, rules, _ = _simulate(core, reqs, rng, ready_prob=0.1)
    rules.check()
    assert sorted(r["tag"] for _, r in responses) == sorted(r["tag"] for r in reqs)


def test_memory_core_errors_and_idle_check():
    core = MemoryCore(REQ, RESP, min_latency=5, max_latency=5)
    core.edge(REQ.pack(addr=0, tag=3), False)
    core.edge(REQ.pack(addr=4, tag=3), False)              # tag 3 still in flight
    with pytest.raises(AssertionError) as err:
        core.check_idle()
    assert "reuses tag 3" in str(err.value) and "2 request(s) still in flight" in str(err.value)

    silent = MemoryCore(REQ, RESP, write_response=False)
    silent.edge(REQ.pack(addr=0, tag=1, write=1, wdata=0xDEADBEEF, be=0b0101), False)
    silent.check_idle()
    assert silent.read(0, 4) == bytes([0xEF, 0, 0xAD, 0])


def test_memory_core_names_and_checks():
    req = Fields(("a", 8), ("id", 2))
    resp = Fields(("id", 2), ("d", 16))
    core = MemoryCore(req, resp, names={"addr": "a", "tag": "id", "resp_tag": "id", "rdata": "d"},
                      addr_shift=1, min_latency=1, max_latency=1)
    core.write(6, b"\x34\x12")
    core.edge(req.pack(a=3, id=2), False)
    assert core.resp_valid and resp.unpack(core.resp_payload) == {"id": 2, "d": 0x1234}
    with pytest.raises(ValueError, match="address"):
        MemoryCore(Fields(("x", 4)), RESP)
    with pytest.raises(ValueError, match="byte-enable"):
        MemoryCore(Fields(("addr", 4), ("wdata", 32), ("be", 3)), RESP)
    with pytest.raises(ValueError, match="role"):
        MemoryCore(REQ, RESP, names={"address": "addr"})
    with pytest.raises(ValueError, match="max_outstanding"):
        MemoryCore(REQ, RESP, max_outstanding=0)
    with pytest.raises(ValueError, match="req_ready_prob"):
        MemoryCore(REQ, RESP, req_ready_prob=2)
