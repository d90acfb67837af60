"""hw.memrouter.tags.PortTags against a Python model of the tag tables, under random takes and
in-order response streams on every memory port.

The contract checked cycle by cycle: a take gets the port's lowest free tag; a response beat
taken in cycle t is on the completion bus or the fill outputs in cycle t + 1 (registered), at
the slot its tag's destination and its beat number give; ``issued`` counts a take from the next
cycle; ``done`` and ``inflight`` count a request's last beat from the cycle after it is
delivered, so a FENCE that sees ``done`` reach its mark knows the beat has been written
(MR-F38), and PT_INIT's quiet check sees no request whose data is still on its way."""

import random

import pytest

from golden.memrouter.params import MemrouterParams
from hw.memrouter.tags import KIND_FILL, KIND_RD, KIND_WB, KIND_WR, E_POISON, PortTags, dest_width
from tb.common.amaranth_sim import assert_reached, run_clocked

NTAGS = 4                       # few, so that ports run out of tags


@pytest.mark.req("MR-F38")
def test_port_tags_follow_the_model(seed):
    rng = random.Random(seed)
    p = MemrouterParams(N_PROC=2, ROB_BEATS=24)         # 24: slot arithmetic wraps (not 2^n)
    dut = PortTags(p, NTAGS)
    ports, sw = p.N_OFF + 1, (p.ROB_BEATS - 1).bit_length()
    dw = dest_width(p)
    used = [set() for _ in range(ports)]
    queue = [[] for _ in range(ports)]        # per port, requests in issue order
    beat_no = [0] * ports                     # beats of the head request already delivered
    offer = [None] * ports                    # the beat a port presents until it is taken
    issued = [0] * (3 * ports)
    done = [0] * (3 * ports)
    inflight = [0] * ports
    completes = []                            # (cycle it is counted from, port, class)
    expect = None                             # outputs for this cycle, from last cycle's beat
    stats = dict(rd=0, wr=0, fill=0, wb=0, poisoned_rd=0, wrap=0, no_tag=0, contention=0,
                 take_and_last=0, w_ack=0)

    def request(kind):
        n = rng.randint(1, 4) if kind in (KIND_RD, KIND_FILL) else 1
        if kind == KIND_RD:
            slot = rng.randrange(p.ROB_BEATS)
        elif kind == KIND_FILL:
            slot = rng.randrange((p.NUM_LINES * p.NS) - n + 1)
        else:
            slot = rng.randrange(min(p.ROB_BEATS, 1 << dw))
        return dict(kind=kind, n=n, slot=slot, proc=rng.randrange(p.N_PROC),
                    ab=rng.randrange(4), cls=rng.randrange(3))

    async def bench(ctx):
        nonlocal expect
        for t in range(4000):
            for _, j, cls in [u for u in completes if u[0] == t]:
                done[3 * j + cls] += 1
                inflight[j] -= 1
            completes[:] = [u for u in completes if u[0] > t]
            # ---- the registered outputs: last cycle's beat (None: not looked at for its kind)
            for k, v in (expect or dict(c_en=0, f_en=0, w_ack=0)).items():
                if v is not None:
                    got = ctx.get(getattr(dut, k))
                    assert got == v, f"seed {seed}, cycle {t}: {k} {got}, want {v}"
            for i in range(3 * ports):
                assert ctx.get(dut.issued[i]) == issued[i] % 256, f"seed {seed}, cycle {t}: issued"
                assert ctx.get(dut.done[i]) == done[i] % 256, \
                    f"seed {seed}, cycle {t}: done[{i}] {ctx.get(dut.done[i])}, want {done[i]}"
            for j in range(ports):
                assert ctx.get(dut.inflight[j]) == inflight[j], \
                    f"seed {seed}, cycle {t}: inflight[{j}] {ctx.get(dut.inflight[j])}, " \
                    f"want {inflight[j]}"
                free = [x for x in range(NTAGS) if x not in used[j]]
                assert ctx.get(dut.avail[j]) == bool(free)
                if free:
                    assert ctx.get(dut.next_tag[j]) == free[0], f"seed {seed}, cycle {t}: tag"
            # ---- a take
            open_ports = [j for j in range(ports) if len(used[j]) < NTAGS]
            stats["no_tag"] += len(open_ports) < ports
            take = open_ports and rng.random() < 0.5
            take_j = rng.choice(open_ports) if take else None
            if take:
                req = request(rng.randrange(4))
                for sig, v in ((dut.take_port, take_j), (dut.take_kind, req["kind"]),
                               (dut.take_proc, req["proc"]), (dut.take_slot, req["slot"]),
                               (dut.take_ab, req["ab"]), (dut.take_cls, req["cls"])):
                    ctx.set(sig, v)
                req["tag"] = ctx.get(dut.next_tag[take_j])
            ctx.set(dut.take_en, bool(take))
            # ---- responses: each port's head request, in order, taken a cycle ago or more
            for j in range(ports):
                if offer[j] is None and queue[j] and queue[j][0]["at"] < t \
                        and rng.random() < 0.6:
                    head = queue[j][0]
                    offer[j] = dict(tag=head["tag"], data=rng.getrandbits(256),
                                    poison=int(rng.random() < 0.15),
                                    last=int(beat_no[j] == head["n"] - 1))
                ctx.set(dut.mrsp[j].valid, offer[j] is not None)
                if offer[j] is not None:
                    ctx.set(dut.mrsp[j].payload, offer[j])
            stats["contention"] += sum(o is not None for o in offer) > 1
            ready = [ctx.get(dut.mrsp[j].ready) for j in range(ports)]
            assert sum(ready) <= 1 and all(o is not None for o, r in zip(offer, ready) if r)
            assert any(ready) == any(o is not None for o in offer), "a waiting beat not served"
            expect = None
            for j in (j for j in range(ports) if ready[j]):
                head, beat = queue[j][0], offer[j]
                k, kind = beat_no[j], head["kind"]
                rd = kind == KIND_RD
                stats[("rd", "wr", "fill", "wb")[kind]] += 1
                stats["poisoned_rd"] += rd and beat["poison"]
                stats["wrap"] += rd and head["slot"] + k >= p.ROB_BEATS
                expect = dict(
                    c_en=int(kind in (KIND_RD, KIND_WR)), f_en=int(kind == KIND_FILL),
                    w_ack=int(kind == KIND_WB and head["ab"] & 1 and beat["last"]),
                    c_beat=int(rd), c_proc=head["proc"],
                    c_slot=(head["slot"] + k) % p.ROB_BEATS if rd else head["slot"] % (1 << sw),
                    c_set_a=int(rd or head["ab"] & 1), c_set_b=int(rd or head["ab"] >> 1),
                    c_err=E_POISON if rd and beat["poison"] else 0, c_data=beat["data"],
                    f_addr=head["slot"] + k if kind == KIND_FILL else None,
                    f_poison=beat["poison"] if kind == KIND_FILL else None,
                    f_walker=head["ab"] & 1 if kind == KIND_FILL else None)
                stats["w_ack"] += expect["w_ack"]
                offer[j] = None
                if beat["last"]:
                    queue[j].pop(0)
                    beat_no[j] = 0
                    used[j].discard(head["tag"])  # (from the next cycle: the model reads it then)
                    # delivered in t + 1, counted from t + 2
                    stats["take_and_last"] += j == take_j
                    completes.append((t + 2, j, head["cls"]))
                else:
                    beat_no[j] += 1
            if take:
                req["at"] = t
                queue[take_j].append(req)
                used[take_j].add(req["tag"])
                issued[3 * take_j + req["cls"]] += 1
                inflight[take_j] += 1             # visible from t + 1, as is issued
            await ctx.tick()

    run_clocked(dut, bench)
    assert_reached(stats, seed)
