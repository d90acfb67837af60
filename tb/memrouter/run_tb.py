"""``gpublocks run memrouter`` on the RTL (``hw.memrouter.top.Memrouter``): plays the normalized
stimulus of ``sim.blocks.memrouter`` and writes what the ports showed; nothing is asserted
here beyond the protocol and watchdog checks, so the flow reports a mismatch (``compare``)
rather than a failed test.

Set-up, through ``router_tb.Bench`` (cycle-exact golden port models on the memory ports):
reset and PT_INIT; the stimulus's configuration through the CSRs and PT_INIT again when it
differs from the reset one (``Bench.reconfigure``); the ``pt`` writes (PT_ADDR / PT_DATA); the
poison registers of the port models. Then each request is offered on its port from its ``at``
cycle on (counted from the end of the set-up), in order per port, with ``gap`` idle
probability per preq beat and ``ready`` probability on every prsp. A request waits while an
earlier one (global order) of another port that shares a sector with it, one of the two a
write, is not accepted yet: the acceptance order then gives the golden order's result.

Result: responses per port, the memory requests seen on ``mreq`` (a sorted multiset), the
per-port beat counters and the counters read through the CSRs, the events seen on ``evt``, the
final content of every written device sector, the PT_DATA write errs, ``cycles`` (set-up end
to the last response) and ``order`` (request indices in acceptance order).
"""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import decode_word
from golden.memrouter.formats import CLASS_NAMES, EVENT_NAMES, EVT
from golden.memrouter.router import COUNTERS
from sim.blocks.memrouter import PORT_BEATS, mr_config, schedule, stim_config
from tb.common import env
from tb.common.stream import read_int, sim_cycle
from tb.memrouter.router_tb import Bench


def _hex(v):
    return f"{v:064x}"


async def _events(dut, out):
    """Record every ``evt`` beat (always ready, MR-I6)."""
    while True:
        await RisingEdge(dut.clk)
        await ReadOnly()
        if read_int(dut.evt__valid) == 1:
            e = decode_word(read_int(dut.evt__payload), EVT)
            out.append({"code": EVENT_NAMES.get(e["code"], e["code"]), "line": e["line"],
                        "ppn": e["ppn"], "arg": e["arg"]})


def _conflict(a, b):
    """Requests ``a`` and ``b`` share a sector and one of them writes."""
    if not (a["wr"] or b["wr"]):
        return False
    a0, b0 = a["addr"] >> 5, b["addr"] >> 5
    return a0 < b0 + b["len"] + 1 and b0 < a0 + a["len"] + 1


async def _offer(b, reqs, t0, max_cycles):
    """Append the requests (global order) to their drivers as ``at`` and the conflict rule
    allow; returns {request index: (port, index of its header beat on the driver)}."""
    placed = {}
    beats = [0] * len(b.drivers)
    todo, pending = list(reqs), []              # pending: placed, header not yet accepted
    while todo:
        now = sim_cycle() - t0
        if now > max_cycles:
            raise AssertionError(f"{len(todo)} requests not offered within max_cycles")
        pending = [o for o in pending
                   if len(b.drivers[o["port"]].transfers) <= placed[o["k"]][1]]
        blocked, left = set(), []
        for n, q in enumerate(todo):
            if q["at"] > now:                   # sorted by at: the rest waits too
                left += todo[n:]
                break
            if q["port"] in blocked or any(o["port"] != q["port"] and _conflict(o, q)
                                           for o in pending + left):
                blocked.add(q["port"])
                left.append(q)
                continue
            nb = q["len"] + 1
            data = [int(x, 16) for x in q.get("data", [])] or None
            be = [int(x, 16) for x in q.get("be", [])] or None
            placed[q["k"]] = (q["port"], beats[q["port"]])
            beats[q["port"]] += nb if q["wr"] else 1
            pending.append(q)
            b.send(q["port"], q["addr"], nb, q["wr"], q["id"], data=data, be=be)
        todo = left
        if todo:
            await RisingEdge(b.dut.clk)
    return placed


@cocotb.test()
async def run_stimulus(dut):
    stim = env.stimulus()
    b = Bench(dut, ready_prob=stim["ready"], gap_prob=stim["gap"],
              reset=mr_config(**env.params()))
    events = []
    cocotb.start_soon(_events(dut, events))
    await b.start()
    cfg = stim_config(stim)
    if cfg.as_dict() != b.cfg.as_dict():
        await b.reconfigure(cfg)
    pt_errs = []
    for ppn, word in stim["pt"]:
        await b.csr_both("PT_ADDR", True, ppn)
        pt_errs.append((await b.csr_both("PT_DATA", True, word))[1])
    used = {}
    for j, dev in stim["poison"]:
        k = used.get(j, 0)
        used[j] = k + 1
        b.ports.models[j].poison[k] = dev
        b.golden.ports[j].poison.add(dev)
    t0 = sim_cycle()
    reqs = [x[1] for x in schedule(stim) if x[0] == "req"]
    placed = await _offer(b, reqs, t0, stim["max_cycles"])
    await b.drain(timeout=stim["max_cycles"])
    rsp_cycles = [t.cycle for mon in b.rsp for t in mon.transfers]
    cycles = (max(rsp_cycles) - t0) if rsp_cycles else 0

    responses = []
    for i, mon in enumerate(b.rsp):
        out, cur = [], None
        for t in mon.transfers:
            f = t.fields
            if cur is None:
                cur = {"id": f["id"], "wr": None, "err": [], "data": []}
            cur["err"].append(f["err"])
            cur["data"].append(_hex(f["data"]))
            if f["last"]:
                out.append(cur)
                cur = None
        if cur is not None:
            out.append(cur)
        kinds = [q["wr"] for q in sorted((q for q in reqs if q["port"] == i),
                                         key=lambda q: placed[q["k"]][1])]
        for r, wr in zip(out, kinds):
            r["wr"] = wr
        responses.append(out)

    counters = {}
    for k, name in enumerate(COUNTERS):
        counters[name] = (await b.csr(0x200 + 4 * k))[0]
    ports = []
    for j in range(b.nports):
        ports.append({name: (await b.csr(0x300 + 0x20 * j + 4 * k))[0]
                      for k, (name, _, _) in enumerate(PORT_BEATS)})
    mreqs, written = [], {}
    for (j, cls, addr, nb, wr), n in b.mreqs.items():
        mreqs += [[j, CLASS_NAMES[cls], addr, nb, wr]] * n
        if wr:
            for k in range(nb):
                a = addr + 32 * k
                written.setdefault(str(j), {})[f"{a:x}"] = _hex(b.ports.models[j].read_sector(a))
    headers = sorted((b.drivers[port].transfers[first].cycle, port, k)
                     for k, (port, first) in placed.items())
    env.write_result({
        "responses": responses, "mreqs": sorted(mreqs), "ports": ports, "counters": counters,
        "events": events, "written": written, "pt_writes": pt_errs, "mig_cmds": [],
        "cycles": cycles, "order": [k for _, _, k in headers],
    })
