"""The cycle-exact port model (memrouter §4.11) on MR-GV16 (MR-V12), the initial data pattern of
§4.12 on MR-GV17, byte-enabled writes, poison and back-pressure."""

import random

import pytest

from golden.memrouter import vectors as gv
from golden.memrouter.pattern import pat, port_image, sector_int
from golden.memrouter.portmodel import PortModel


def drive(pm, offers, cycles=400, rsp_ready=lambda t: True):
    """offers: {t: beat}; a beat not accepted is re-offered next cycle (held, as a stream)."""
    pending = sorted(offers.items())
    cur, out, accepted = None, [], []
    for t in range(cycles):
        if cur is None and pending and pending[0][0] <= t:
            cur = pending.pop(0)[1]
        ready, rsp = pm.cycle(cur, rsp_ready(t))
        if cur is not None and ready:
            accepted.append(t)
            cur = None
        if rsp is not None and rsp_ready(t):
            out.append((t, rsp))
    return out, accepted


def rd(length, addr=0, tag=0):
    return dict(tag=tag, addr=addr, len=length, wr=0, data=0, be=0, last=1)


@pytest.mark.req("MR-GV16", "MR-V12", "MR-F51", "MR-C29", "MR-C30")
@pytest.mark.parametrize("row", gv.GV16, ids=[r[0] for r in gv.GV16])
def test_gv16(row):
    _, num, lat, reqs, want = row
    pm = PortModel(1 if num == 1 else 0, num, 8, lat, frames=4)
    offers = {t: (rd(n) if not wr else dict(tag=0, addr=0, len=n, wr=1, data=0, be=1, last=1))
              for t, n, wr in reqs}
    out, _ = drive(pm, offers)
    assert [t for t, _ in out] == want
    assert out[-1][1]["last"] == 1


@pytest.mark.req("MR-GV16", "MR-F51")
def test_gv16_service_cycles():
    """OFF read len 7: beat k is serviced (read from memory) at 1 + 8k."""
    pm = PortModel(1, 1, 8, 96, frames=4)
    serviced = []
    for t in range(80):
        before = len(pm.out)
        pm.cycle(rd(7) if t == 0 else None)
        if len(pm.out) > before:
            serviced.append(t)
    assert serviced[:8] == gv.GV16_OFF_SERVICE


@pytest.mark.req("MR-GV17")
@pytest.mark.parametrize("j,d,word", gv.GV17)
def test_gv17_pattern(j, d, word):
    assert pat(j, d) == word
    img = port_image(j, d + 64)
    assert int.from_bytes(img[d:d + 4].tobytes(), "little") == word


@pytest.mark.req("MR-F51", "MR-I9", "MR-I10", "MR-I4")
def test_write_read_poison_backpressure(seed):
    """Byte-enabled multi-beat writes land, in-order completion, poison marks exactly the
    poisoned sector, random mrsp back-pressure loses nothing."""
    rng = random.Random(seed)
    pm = PortModel(2, 1, 8, 5, frames=2, pq_depth=2, out_depth=3)
    ref = port_image(2, 2 << 12)
    pm.poison[1] = 0x40
    beats, expect = [], []
    for k in range(30):
        a = 32 * rng.randrange(64)
        n = rng.randint(0, 3)
        if rng.random() < 0.5:
            for b in range(n + 1):
                d, be = rng.getrandbits(256), rng.getrandbits(32)
                beats.append(dict(tag=k, addr=a, len=n, wr=1, data=d, be=be, last=int(b == n)))
                x = a + 32 * b
                for i in range(32):
                    if be >> i & 1:
                        ref[x + i] = (d >> (8 * i)) & 0xFF
            expect.append((k, None))
        else:
            beats.append(rd(n, a, k))
            expect.append((k, [(sector_int(ref, a + 32 * b), int(a + 32 * b == 0x40))
                               for b in range(n + 1)]))
    got, t, i, cur = {}, 0, 0, None
    while (i < len(beats) or cur is not None or pm.q or pm.out) and t < 20000:
        if cur is None and i < len(beats):
            cur = beats[i]
            i += 1
        ready_rsp = rng.random() < 0.6
        ready, rsp = pm.cycle(cur, ready_rsp)
        if cur is not None and ready:
            cur = None
        if rsp is not None and ready_rsp:
            got.setdefault(rsp["tag"], []).append((rsp["data"], rsp["poison"]))
        t += 1
    order = list(got)
    assert order == [k for k, _ in expect]
    for k, want in expect:
        if want is None:
            assert got[k] == [(0, 0)]
        else:
            assert got[k] == want
    assert (pm.mem == ref).all()


@pytest.mark.req("MR-C29", "MR-C30")
def test_port_model_parameter_ranges():
    with pytest.raises(ValueError, match="BW_NUM"):
        PortModel(0, 9, 8, 32, 1)
    with pytest.raises(ValueError, match="LAT"):
        PortModel(0, 4, 8, 0, 1)
