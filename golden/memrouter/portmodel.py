"""The simulation-only memory port model (spec §4.11, MR-F51), cycle-exact: BW_NUM/BW_DEN beats
per cycle shared by reads and writes, fixed latency LAT, in-order completion, byte-enabled
writes, the §4.12 initial pattern and poison injection. The RTL ``portmodel`` is compared with
it cycle by cycle (MR-V12)."""

from collections import deque

from golden.memrouter.merge import merge
from golden.memrouter.pattern import port_image, sector_bytes, sector_int

__all__ = ["PortModel"]


class PortModel:
    """Port ``j`` of ``frames`` frames of 2^log2g bytes.

    Per cycle call :meth:`cycle` with the beat presented on mreq (a dict with tag, addr, len, wr,
    data, be, last; or None). It returns (mreq.ready, mrsp beat presented or None); the beat is
    taken as transferred when ``rsp_ready``.
    """

    def __init__(self, j, bw_num, bw_den, lat, frames, log2g=12, pq_depth=16, out_depth=64):
        if not 1 <= bw_num <= bw_den <= 64:
            raise ValueError(f"BW_NUM/BW_DEN must satisfy 1 <= BW_NUM <= BW_DEN <= 64, "
                             f"got {bw_num}/{bw_den}")
        if not 1 <= lat <= 1024:
            raise ValueError(f"LAT must be in 1..1024, got {lat}")
        self.j, self.num, self.den, self.lat = j, bw_num, bw_den, lat
        self.pq_depth, self.out_depth = pq_depth, out_depth
        self.mem = port_image(j, frames << log2g)
        self.acc = bw_den
        self.q = deque()            # [req dict, beats accepted, k serviced, fully accepted at]
        self.out = deque()          # (due, beat)
        self.poison = [None] * 4    # poison_addr[k] when poison_en[k]
        self.t = 0
        self._writing = None        # write request still receiving data beats

    def read_sector(self, a):
        return sector_int(self.mem, a)

    def write_sector(self, a, value, be=(1 << 32) - 1):
        self.mem[a:a + 32] = sector_bytes(merge(self.read_sector(a), value, be))

    def cycle(self, offer=None, rsp_ready=True):
        t = self.t
        rsp = None
        if self.out and self.out[0][0] <= t:
            rsp = self.out[0][1]
            if rsp_ready:
                self.out.popleft()
        ready = True if self._writing is not None else len(self.q) < self.pq_depth
        self.acc = min(self.acc + self.num, self.den)
        head = self.q[0] if self.q and self.q[0][3] is not None and self.q[0][3] < t else None
        if head is not None and self.acc == self.den and len(self.out) < self.out_depth:
            self.acc -= self.den
            req, _, k, _ = head
            a = req["addr"] + 32 * k
            if not req["wr"]:
                poison = any(p is not None and p == a for p in self.poison)
                self.out.append((t + self.lat, dict(tag=req["tag"], data=self.read_sector(a),
                                                    poison=int(poison), last=int(k == req["len"]))))
            else:
                data, be = req["beats"][k]
                self.write_sector(a, data, be)
                if k == req["len"]:
                    self.out.append((t + self.lat, dict(tag=req["tag"], data=0, poison=0, last=1)))
            head[2] = k + 1
            if head[2] > req["len"]:
                self.q.popleft()
        if offer is not None and ready:
            self._accept(offer, t)
        self.t += 1
        return ready, rsp

    def _accept(self, beat, t):
        if self._writing is None:
            req = dict(beat)
            entry = [req, 1, 0, None]
            if req["wr"]:
                req["beats"] = [(beat["data"], beat["be"])]
                self._writing = entry
            self.q.append(entry)
            if not req["wr"] or req["len"] == 0:
                entry[3] = t
                self._writing = None
        else:
            entry = self._writing
            entry[0]["beats"].append((beat["data"], beat["be"]))
            entry[1] += 1
            if entry[1] > entry[0]["len"]:
                entry[3] = t
                self._writing = None
