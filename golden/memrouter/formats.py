"""Encodings shared by hardware, golden model and testbench (spec memrouter.md §3.2-§3.4, §4.9):
page-table entries, classes, error codes, MIG_CMD ops and status codes, events, stream payloads.
One definition, three users."""

from dataclasses import dataclass

from golden.common.fields import Fields

__all__ = [
    "UNMAPPED", "STABLE", "MIGRATING", "NEAR", "FAR", "MIG", "CLASS_NAMES",
    "OK", "E_RANGE", "E_UNMAPPED", "E_POISON",
    "OP_PROMOTE", "OP_DEMOTE", "OP_SWAP", "SRC_EXPLICIT", "SRC_ACC", "SRC_SECT",
    "ST_IDLE", "ST_BUSY", "ST_DONE", "REJ_RANGE", "REJ_STATE", "REJ_NOFRAME", "ST_ABORTED",
    "REJ_FULL",
    "EV_ALLOC", "EV_EVICT", "EV_START", "EV_LINE_FULL", "EV_PT_UPDATE", "EV_DONE", "EV_ABORT",
    "EV_REJECT", "EVENT_NAMES",
    "PTE", "UNMAPPED_PTE", "Desc", "start_arg",
    "PREQ", "PRSP", "MREQ", "MRSP", "CSRREQ", "CSRRSP", "EVT", "SECTOR_BYTES", "FULL_BE",
    "ID_VALUE", "CMD_PT_INIT", "CMD_FLUSH", "CMD_CLR_COUNTERS",
]

SECTOR_BYTES = 32
FULL_BE = (1 << SECTOR_BYTES) - 1

# PTE state and pool (§3.3 PT_DATA, §4.1)
UNMAPPED, STABLE, MIGRATING = 0, 1, 2
NEAR, FAR = 0, 1
# memory request classes (MReq.cls, MR-F39); NEAR/FAR equal the pool bit
MIG = 2
CLASS_NAMES = {NEAR: "N", FAR: "F", MIG: "M"}

# PRsp.err (§3.4)
OK, E_RANGE, E_UNMAPPED, E_POISON = 0, 1, 2, 3

# MIG_CMD op codes and trigger sources (§3.3, §4.9 START arg)
OP_PROMOTE, OP_DEMOTE, OP_SWAP = 1, 2, 3
SRC_EXPLICIT, SRC_ACC, SRC_SECT = 0, 1, 2

# MIG_STATUS codes (MR-E11)
ST_IDLE, ST_BUSY, ST_DONE, REJ_RANGE, REJ_STATE, REJ_NOFRAME, ST_ABORTED, REJ_FULL = range(8)

# evt codes (§4.9)
EV_ALLOC, EV_EVICT, EV_START, EV_LINE_FULL, EV_PT_UPDATE, EV_DONE, EV_ABORT, EV_REJECT = range(1, 9)
EVENT_NAMES = {EV_ALLOC: "ALLOC", EV_EVICT: "EVICT", EV_START: "START", EV_LINE_FULL: "LINE_FULL",
               EV_PT_UPDATE: "PT_UPDATE", EV_DONE: "DONE", EV_ABORT: "ABORT",
               EV_REJECT: "REJECT"}

# CSR constants (§3.3)
ID_VALUE = 0x4D520001
CMD_PT_INIT, CMD_FLUSH, CMD_CLR_COUNTERS = 1, 2, 3


@dataclass(frozen=True)
class Desc:
    """A frame descriptor: memory port (0 = HBM, 1+m = module m) and device frame."""
    port: int
    frame: int

    def dev(self, offset, log2g):
        """Device byte address of ``offset`` within the frame: frame·G + offset (§4.1)."""
        return (self.frame << log2g) + offset

    def encode(self):
        """NFREE_PUSH/FFREE_PUSH encoding: [5:3] port, [31:8] frame."""
        return (self.port << 3) | (self.frame << 8)

    @classmethod
    def decode(cls, word):
        return cls((word >> 3) & 7, (word >> 8) & 0xFFFFFF)


@dataclass(frozen=True)
class PTE:
    """A page-table entry (§4.1): state, pool and descriptor."""
    state: int
    pool: int = NEAR
    port: int = 0
    frame: int = 0

    @property
    def desc(self):
        return Desc(self.port, self.frame)

    def with_state(self, state):
        return PTE(state, self.pool, self.port, self.frame)

    @classmethod
    def of(cls, state, pool, desc):
        return cls(state, pool, desc.port, desc.frame)

    def encode(self):
        """PT_DATA encoding: [1:0] state, [2] pool, [5:3] port, [31:8] frame."""
        return self.state | (self.pool << 2) | (self.port << 3) | (self.frame << 8)

    @classmethod
    def decode(cls, word):
        return cls(word & 3, (word >> 2) & 1, (word >> 3) & 7, (word >> 8) & 0xFFFFFF)

    def is_(self, state, pool):
        return self.state == state and self.pool == pool


UNMAPPED_PTE = PTE(UNMAPPED)


def start_arg(op, source, line_valid, victim=0):
    """START event arg (§4.9): [3:0] op, [5:4] source, [6] line field valid, [31:16] victim."""
    return op | (source << 4) | (int(bool(line_valid)) << 6) | (victim << 16)


# Stream payloads at the default widths (MR-I1..I6); hardware builds its layouts from these.
PREQ = Fields(("id", 8), ("addr", 32), ("len", 4), ("wr", 1), ("data", 256), ("be", 32),
              ("last", 1))
PRSP = Fields(("id", 8), ("data", 256), ("err", 2), ("last", 1))
MREQ = Fields(("tag", 8), ("addr", 24), ("len", 4), ("wr", 1), ("cls", 2), ("data", 256),
              ("be", 32), ("last", 1))
MRSP = Fields(("tag", 8), ("data", 256), ("poison", 1), ("last", 1))
CSRREQ = Fields(("addr", 12), ("we", 1), ("wdata", 32))
CSRRSP = Fields(("rdata", 32), ("err", 1))
EVT = Fields(("code", 4), ("line", 4), ("ppn", 16), ("arg", 32))
