"""Random stress of the router against the flat reference memory (MR-V3, V4, V5, V6, V9, V11):
random reads and partial/full writes from every processor port with 35% to 8 hot sectors,
rejected requests, random MIG_CMDs, automatic triggers, window ticks, FLUSH, poison injection,
and random interleaving of engine steps, class-queue dispatch and port completion.

:func:`run` returns a summary; any mismatch raises AssertionError with the seed's context. The
same generator can drive an RTL testbench (the requests and CSR writes are plain values)."""

import random

import numpy as np

from golden.memrouter.csr import Csr
from golden.memrouter.formats import (E_POISON, E_RANGE, E_UNMAPPED, EV_ABORT, EV_ALLOC,
                                      EV_DONE, EV_LINE_FULL, EV_PT_UPDATE, EV_START, FULL_BE, MIG,
                                      MIGRATING, NEAR, OK, PTE, STABLE)
from golden.memrouter.reference import FlatReference
from golden.memrouter.router import Router

__all__ = ["run", "check_final", "check_lines", "MapMirror"]


def _rand_be(rng):
    x = rng.random()
    if x < 0.5:
        return FULL_BE
    if x < 0.75:
        return rng.getrandbits(32) or 1
    lo = rng.randrange(32)
    hi = rng.randrange(lo, 32)
    return ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)


def check_lines(r):
    """MR-V9: no line holds a NEAR + STABLE page; locked lines belong to a migrating page."""
    for line in r.lines:
        if not line.tv:
            continue
        e = r.pt[line.tag]
        assert not (e.state == STABLE and e.pool == NEAR), f"line {line.idx} holds NEAR page"
        if line.lock:
            assert e.state == MIGRATING, f"locked line {line.idx} of a non-migrating page"


class MapMirror:
    """MR-V2: a mirror of the page table built only from PT_INIT and PT_UPDATE events. Every
    NEAR/FAR mreq must target its page's mirrored frame at issue; every MIG mreq must target the
    source or destination frame of a page of the running command (START, LINE_FULL and
    PT_UPDATE events name them; ALLOC events during a command are included, since line B of a
    CLOCK-chosen victim is named by its ALLOC only when the command aborts before LINE_FULL)."""

    def __init__(self, r):
        self.r = r
        self.mirror = [(e.port, e.frame) for e in r.pt]
        self.ev = self.log = 0
        self.cmd = None
        self.checked = 0

    def _events(self, upto):
        r = self.r
        while self.ev < upto:
            code, _, ppn, arg = r.events[self.ev]
            self.ev += 1
            if code == EV_START:
                self.cmd = dict(pages={ppn}, migs=[], before={})
                if arg & 0xF == 3:                   # explicit SWAP names its victim
                    self.cmd["pages"].add(arg >> 16)
            elif code == EV_ALLOC and self.cmd is not None:
                self.cmd["pages"].add(ppn)           # line B (a victim chosen by CLOCK)
            elif code in (EV_LINE_FULL, EV_PT_UPDATE):
                self.cmd["pages"].add(ppn)
                if code == EV_PT_UPDATE:
                    self.cmd["before"].setdefault(ppn, self.mirror[ppn])
                    e = PTE.decode(arg)
                    self.mirror[ppn] = (e.port, e.frame)
            elif code in (EV_DONE, EV_ABORT) and self.cmd is not None:
                pages = self.cmd["pages"]
                ok = {self.mirror[q] for q in pages} | {self.cmd["before"].get(q, self.mirror[q])
                                                         for q in pages}
                for m in self.cmd["migs"]:
                    assert (m.port, m.addr >> r.p.LOG2G) in ok, f"MIG mreq {m} outside {ok}"
                self.cmd = None

    def check(self):
        r = self.r
        log = r.ports.log
        while self.log < len(log):
            m = log[self.log]
            self.log += 1
            self._events(m.evn)
            if m.cls == MIG:
                assert self.cmd is not None, f"MIG mreq {m} outside a migration"
                self.cmd["migs"].append(m)
            else:
                assert self.mirror[m.ppn] == (m.port, m.addr >> r.p.LOG2G), \
                    f"mreq {m} not at page {m.ppn}'s mirrored frame {self.mirror[m.ppn]}"
            self.checked += 1
        self._events(len(r.events))


def check_final(r, ref):
    """MR-V3 end: through the final PT, every byte in the ports equals the reference."""
    g = r.p.G
    final = ref.image()
    for p in range(r.pages):
        e = r.pt[p]
        mem = r.ports[e.port].mem
        got = mem[e.frame * g:(e.frame + 1) * g]
        want = final[p * g:(p + 1) * g]
        if not np.array_equal(got, want):
            bad = int(np.flatnonzero(got != want)[0])
            raise AssertionError(f"page {p} ({e}) differs from the reference at byte {bad:#x}")


def run(params, cfg, seed, n_ops=3000, n_pages=20, poison=True, cmds=True, flush=True):
    rng = random.Random(seed)
    r = Router(params, cfg)
    csr = Csr(r)
    ref = FlatReference(r.init, params)
    mirror = MapMirror(r)
    g, ns, lg = params.G, params.NS, params.LOG2G
    pages = sorted(rng.sample(range(r.pages), min(n_pages, r.pages)))
    # a few pages on both sides of the near/far boundary, plus the last page
    hot = [(rng.choice(pages) << lg) + 32 * rng.randrange(ns) for _ in range(8)]
    expect = {}                 # uid -> (proc, id, wr, err, first sector address)
    order = [[] for _ in range(params.N_PROC)]
    stats = dict(reqs=0, reads=0, writes=0, rejected=0, poison_beats=0, cmds=0, aborts=0,
                 done=0, flushes=0, preq=0, prsp=0)
    poisoned = []
    next_id = 0

    def check_responses():
        for proc in range(params.N_PROC):
            for rsp in r.responses(proc):
                uid = order[proc].pop(0)
                assert rsp.uid == uid, f"proc {proc}: response {rsp.uid} out of order, want {uid}"
                _, rid, wr, err, a0 = expect.pop(uid)
                assert rsp.id == rid
                stats["prsp"] += len(rsp.beats)
                if wr:
                    assert len(rsp.beats) == 1
                    got_err = rsp.beats[0][1]
                    assert rsp.beats[0][0] == 0
                    assert got_err == err or (err == OK and got_err == E_POISON), (uid, got_err)
                    continue
                for k, (d, e) in enumerate(rsp.beats):
                    want = ref.read(a0 + 32 * k, uid) if err == OK else 0
                    if err != OK:
                        assert (d, e) == (0, err), (uid, k, e)
                    elif e == E_POISON:
                        stats["poison_beats"] += 1
                        assert d in (0, want), f"uid {uid} beat {k}: poisoned beat data"
                    else:
                        assert e == OK and d == want, \
                            f"uid {uid} beat {k}: read {d:#x} want {want:#x} (err {e})"

    def undo_dropped():
        for uid, a in r.dropped:
            ref.drop(uid, a)
        r.dropped.clear()

    def issue():
        nonlocal next_id
        proc = rng.randrange(params.N_PROC)
        nb = rng.randint(1, params.MAX_LEN)
        x = rng.random()
        if x < 0.35:
            addr = rng.choice(hot)
        elif x < 0.38:                       # an illegal request
            kind = rng.randrange(3)
            addr = (rng.choice(pages) << lg) + (16 if kind == 0 else 0)
            if kind == 1:
                nb = params.MAX_LEN + 1 if params.MAX_LEN < 16 else 1
                addr += 32
            if kind == 2:
                addr = r.pages * g - 32 * rng.randint(0, 2)
                nb = 4
        else:
            addr = (rng.choice(pages) << lg) + 32 * rng.randrange(ns)
        addr = min(addr, (1 << 32) - 32)
        wr = rng.random() < 0.5
        data = [rng.getrandbits(256) for _ in range(nb)] if wr else None
        be = [_rand_be(rng) for _ in range(nb)] if wr else None
        rid = next_id & 0xFF
        req = r.request(proc, rid, addr, nb, wr, data, be)
        if req is None:
            return
        next_id += 1
        stats["reqs"] += 1
        stats["preq"] += nb if wr else 1
        order[proc].append(req.uid)
        legal = not (addr & 31 or nb > params.MAX_LEN or addr + 32 * nb > r.pages * g)
        err = OK
        if not legal:
            err = E_RANGE
        elif any(r.pt[pp].state == 0 for pp in {addr >> lg, (addr + 32 * nb - 1) >> lg}):
            err = E_UNMAPPED
        if err != OK:
            stats["rejected"] += 1
            expect[req.uid] = (proc, rid, wr, err, addr)
            return
        if wr:
            stats["writes"] += 1
            for k in range(nb):
                ref.write(addr + 32 * k, data[k], be[k], req.uid)
        else:
            stats["reads"] += 1
        expect[req.uid] = (proc, rid, wr, OK, addr)

    def mig_cmd():
        op = rng.choice((1, 1, 1, 2, 2, 3, 3, 5))
        p = rng.choice(pages) if rng.random() < 0.95 else r.pages + 1
        csr.write("MIG_ARG", rng.choice(pages))
        csr.write("MIG_CMD", op | p << 16)
        stats["cmds"] += 1

    def toggle_poison():
        if poisoned and (len(poisoned) >= 2 or rng.random() < 0.5):
            j, a = poisoned.pop(rng.randrange(len(poisoned)))
            r.ports[j].poison.discard(a)
            return
        e = r.pt[rng.choice(pages)]
        a = e.desc.dev(32 * rng.randrange(ns), lg)
        r.ports[e.port].poison.add(a)
        poisoned.append((e.port, a))

    for _ in range(n_ops):
        x = rng.random()
        if x < 0.30:
            issue()
        elif x < 0.305 and cmds:
            mig_cmd()
        elif x < 0.34 and poison:
            toggle_poison()
        elif x < 0.35:
            r.tick(rng.randint(1, 2 * max(1, cfg.WINDOW)))
        elif x < 0.352 and flush:
            csr.write("CMD", 2)
            stats["flushes"] += 1
        else:
            r.step(rng)
        undo_dropped()
        check_responses()
        check_lines(r)
        mirror.check()
    for j, a in poisoned:
        r.ports[j].poison.discard(a)
    r.settle(rng)
    undo_dropped()
    check_responses()
    csr.write("CMD", 2)                      # final FLUSH, then compare through the final PT
    r.settle(rng)
    check_responses()
    mirror.check()
    assert r.idle() and all(not x for x in order), "requests left in flight (MR-V4)"
    assert not expect
    check_final(r, ref)
    assert r.counters["PREQ_BEATS"] == stats["preq"] and r.counters["PRSP_BEATS"] == stats["prsp"]
    for h in r.engine.history:               # MR-V5 identity for every command that ended DONE
        if h["done"]:
            total = (h["MIG_WALK_FILLS"] + h["MIG_DEMAND_FILLS"] + h["MIG_PREVALID"]
                     + h["MIG_FULL_WRITES"])
            assert total == ns * h["line_fulls"], h
    stats["done"] = sum(1 for h in r.engine.history if h["done"])
    stats["aborts"] = sum(1 for h in r.engine.history if not h["done"])
    stats["events"] = len(r.events)
    stats["mreqs_checked"] = mirror.checked
    return stats, r
