"""The CSR block of §3.3 (MR-F48, MR-E12) over a :class:`~golden.memrouter.router.Router`:
configuration, PT_INIT/FLUSH/CLR_COUNTERS, indirect page-table access, free-list pushes,
MIG_CMD/MIG_ARG/MIG_STATUS, counters, per-port QoS and beat counters, LINE_STATUS.

:meth:`Csr.access` returns (rdata, err) exactly as csr_rsp carries them."""

from golden.memrouter.formats import (CMD_CLR_COUNTERS, CMD_FLUSH, CMD_PT_INIT, FAR, ID_VALUE, MIG,
                                      MIGRATING, NEAR, PTE, Desc)
from golden.memrouter.params import config_error
from golden.memrouter.router import COUNTERS

__all__ = ["Csr", "OFFSETS"]

OFFSETS = {
    "ID": 0x000, "CTRL": 0x004, "STATUS": 0x008, "CMD": 0x00C, "NEAR_FRAMES": 0x010,
    "NEAR_RESERVE": 0x014, "HBM_FRAMES": 0x018, "MOD_FRAMES": 0x01C, "PAGES": 0x020,
    "SLOT_LEN": 0x024, "T_SECT": 0x028, "T_ACC": 0x02C, "WINDOW": 0x030, "WALK_STOP": 0x034,
    "MIG_OUTSTANDING": 0x038, "MIG_STARVE": 0x03C, "UW": 0x040, "HAND": 0x044,
    "PT_ADDR": 0x0C0, "PT_DATA": 0x0C4, "NFREE_PUSH": 0x0C8, "FFREE_PUSH": 0x0CC,
    "NFREE_CNT": 0x0D0, "FFREE_CNT": 0x0D4, "MIG_CMD": 0x0D8, "MIG_ARG": 0x0DC,
    "MIG_STATUS": 0x0E0,
}
_CFG_RW = ("NEAR_FRAMES", "NEAR_RESERVE", "HBM_FRAMES", "MOD_FRAMES", "T_SECT", "T_ACC", "WINDOW",
           "WALK_STOP", "MIG_OUTSTANDING", "MIG_STARVE", "UW")
_PORT_RW = ("RATE_N", "RATE_F", "BURST_N", "BURST_F", "UTH")
_PORT_BEATS = ((0, NEAR), (0, FAR), (0, MIG), (1, NEAR), (1, FAR), (1, MIG))   # RD_N..WR_M


class Csr:
    def __init__(self, router):
        self.r = router
        self.pt_addr = 0
        self.mig_arg = 0
        self.slot_len = len(router.cfg.SLOTS)
        self.slots = list(router.cfg.SLOTS) + [0] * (16 - len(router.cfg.SLOTS))

    def read(self, name_or_off):
        return self.access(self._off(name_or_off))[0]

    def write(self, name_or_off, value):
        return self.access(self._off(name_or_off), True, value)[1]

    @staticmethod
    def _off(x):
        return OFFSETS[x] if isinstance(x, str) else x

    def access(self, off, we=False, wdata=0):
        """One csr_req: returns (rdata, err)."""
        r, cfg = self.r, self.r.cfg
        wdata &= 0xFFFFFFFF
        name = {v: k for k, v in OFFSETS.items()}.get(off)
        if name in ("ID", "STATUS", "PAGES", "HAND", "NFREE_CNT", "FFREE_CNT", "MIG_STATUS"):
            if we:
                return 0, 1
            return self._ro(name), 0
        if name in ("CMD", "NFREE_PUSH", "FFREE_PUSH", "MIG_CMD"):
            if not we:
                return 0, 0              # write-only: reads as 0 (not an MR-E12 case)
            return 0, self._wo(name, wdata)
        if name == "CTRL":
            if we:
                cfg.set_ctrl(wdata)
            return cfg.ctrl, 0
        if name in _CFG_RW:
            if we:
                setattr(cfg, name, wdata)
            return getattr(cfg, name), 0
        if name == "SLOT_LEN":
            if we:
                self.slot_len = wdata & 0x1F
            return self.slot_len, 0
        if name == "PT_ADDR":
            if we:
                if wdata >= r.p.PT_ENTRIES:
                    return 0, 1
                self.pt_addr = wdata
            return self.pt_addr, 0
        if name == "PT_DATA":
            p = self.pt_addr
            if we:
                if r.pt[p].state == MIGRATING or r.lines.of(p) is not None:
                    return 0, 1
                r.pt[p] = PTE.decode(wdata)
            return r.pt[p].encode(), 0
        if name == "MIG_ARG":
            if we:
                self.mig_arg = wdata & 0xFFFF
            return self.mig_arg, 0
        if 0x080 <= off < 0x0C0 and off % 4 == 0:
            s = (off - 0x080) // 4
            if we:
                self.slots[s] = wdata & 0xF
            return self.slots[s], 0
        n_ports = r.p.N_OFF + 1
        if 0x100 <= off < 0x100 + 0x20 * n_ports and (off - 0x100) % 0x20 < 0x14 and off % 4 == 0:
            j, k = divmod(off - 0x100, 0x20)
            field = _PORT_RW[k // 4]
            if we:
                setattr(cfg.QOS[j], field, wdata & 0xFFFF)
            return getattr(cfg.QOS[j], field), 0
        if 0x200 <= off < 0x200 + 4 * len(COUNTERS) and off % 4 == 0:
            if we:
                return 0, 1
            return r.counters[COUNTERS[(off - 0x200) // 4]] & 0xFFFFFFFF, 0
        if 0x300 <= off < 0x300 + 0x20 * n_ports and (off - 0x300) % 0x20 < 0x18 and off % 4 == 0:
            if we:
                return 0, 1
            j, k = divmod(off - 0x300, 0x20)
            return r.ports[j].beats[_PORT_BEATS[k // 4]] & 0xFFFFFFFF, 0
        if 0x400 <= off < 0x400 + 4 * r.p.NUM_LINES and off % 4 == 0:
            if we:
                return 0, 1
            return r.lines[(off - 0x400) // 4].status(), 0
        return 0, 1

    def _ro(self, name):
        r = self.r
        e = r.engine
        if name == "ID":
            return ID_VALUE
        if name == "STATUS":
            return (int(r.idle()) << 1 | int(not e.idle) << 2
                    | int(len(e.cmdq) >= r.p.CMDQ_DEPTH) << 3 | int(e.flush_pending) << 4)
        if name == "PAGES":
            return r.pages
        if name == "HAND":
            return r.hand
        if name == "NFREE_CNT":
            return len(r.nfree)
        if name == "FFREE_CNT":
            return len(r.ffree)
        return e.status | (e.status_ppn << 16)

    def _wo(self, name, wdata):
        r = self.r
        if name == "CMD":
            if wdata == CMD_PT_INIT:
                new = r.cfg.copy(SLOTS=tuple(self.slots[:self.slot_len]))
                if config_error(r.p, new):
                    return 1
                r.cfg = new
                r.pt_init()
            elif wdata == CMD_FLUSH:
                r.engine.flush()
            elif wdata == CMD_CLR_COUNTERS:
                r.counters = dict.fromkeys(r.counters, 0)
                for port in r.ports.ports:
                    port.beats = dict.fromkeys(port.beats, 0)
            return 0
        if name in ("NFREE_PUSH", "FFREE_PUSH"):
            lst = r.nfree if name == "NFREE_PUSH" else r.ffree
            if len(lst) >= r.p.PT_ENTRIES:
                return 1
            lst.append(Desc.decode(wdata))
            return 0
        return r.engine.write_cmd(wdata, self.mig_arg)
