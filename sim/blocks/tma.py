"""Flow adapter of the TMA unit: stimulus schema, golden run, comparison, demo, bench.

Stimulus (docs/tma.md, "Stimulus")::

    {"params": {"trk_entries": 32},                       # optional, registry defaults
     "descriptors": {"A": {"addr": "0x8000", "dtype": "U32", "rank": 2,
                           "global_address": "0x100000", "tensor_size": [64, 64],
                           "tensor_stride": [256], "box_size": [32, 8],
                           "swizzle": "SW128B", "oob_fill": "ZERO"}},
     "commands": [{"op": "TENSOR_LOAD", "desc": "A", "coord": [0, 0], "smem_addr": 0,
                   "mbar_addr": "0x20000"},
                  {"op": "BLOCK_G2S", "gaddr": "0x200000", "num_blocks": 8, "smem_addr": "0x4000"},
                  ...],
     "global": [{"addr": "0x100000", "bytes": 16384, "fill": "random"},   # or "index", or a byte
                {"addr": "0x300000", "hex": "00112233"}],
     "smem": [{"cta": 0, "addr": 0, "bytes": 256, "fill": "index"}],
     "seed": 1,                                           # random fills
     "grouped": true}                                     # see docs/tma.md

The normalized stimulus (what ``tb.tma.run_tb`` plays) is ``{"gmem": [[addr, hex]], "smem":
[[cta, addr, hex]], "commands": [TmaCmd fields], "grouped": bool}`` with the descriptors stored in
``gmem`` at their addresses.
"""

import random

from golden.tma.encode import encode_desc
from golden.tma.formats import (LINE, N_CTA, CmdOp, DType, Interleave, L2Op, Mode, OobFill,
                                RedOp, Swizzle, TmaCmd, TmaDesc)
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.model import TmaModel
from golden.tma.params import TmaParams
from golden.tma.record import (beat_rows, compare_records, gmem_image, load_memories,
                               mbar_totals, request_entry, smem_image)
from sim.errors import UsageError
from sim.stimulus import checked_object, field, int_or_text, integer

TESTBENCH = "tb.tma.run_tb"
MAX_COMMANDS = 10_000
MAX_FILL_BYTES = 1 << 24
TENSOR_OP_NAMES = ("TENSOR_LOAD", "TENSOR_STORE", "TENSOR_RED", "TENSOR_PREFETCH")
_ENUMS = {"dtype": DType, "swizzle": Swizzle, "oob_fill": OobFill, "interleave": Interleave,
          "mode": Mode, "red_op": RedOp}
_CMD_KEYS = set(TmaCmd.__dataclass_fields__) | {"desc"}
_TOP_KEYS = {"params", "descriptors", "commands", "global", "smem", "seed", "grouped"}


def _enum(value, where, enum):
    if isinstance(value, str):
        if value.upper() not in enum.__members__:
            raise UsageError(f"{where}: {value!r} is not one of {', '.join(enum.__members__)}")
        return int(enum[value.upper()])
    return integer(value, where, 0, 15)


def _descriptor(name, obj, p):
    where = f"descriptors.{name}"
    if not isinstance(obj, dict):
        raise UsageError(f"{where}: expected an object of descriptor fields and addr")
    fields = {}
    for key, value in obj.items():
        w = f"{where}.{key}"
        if key == "addr":
            continue
        if key not in TmaDesc.__dataclass_fields__:
            raise UsageError(f"{where}: unknown descriptor field {key!r} (fields: addr, "
                             f"{', '.join(TmaDesc.__dataclass_fields__)})")
        if key in _ENUMS:
            fields[key] = _enum(value, w, _ENUMS[key])
        elif isinstance(value, list):
            fields[key] = [int_or_text(v, f"{w}[{k}]") for k, v in enumerate(value)]
        else:
            fields[key] = int_or_text(value, w)
    addr = int_or_text(field(obj, "addr", where), f"{where}.addr", 0, (1 << p.ADDR_W) - LINE)
    if addr % LINE:
        raise UsageError(f"{where}.addr: {addr:#x} is not 128-byte aligned")
    try:
        desc = TmaDesc.make(**fields)
        data = encode_desc(desc)
    except (ValueError, OverflowError) as exc:
        raise UsageError(f"{where}: {exc}") from None
    return addr, desc, data


def _command(obj, k, descs, p):
    where = f"commands[{k}]"
    checked_object(obj, where, _CMD_KEYS)
    op = field(obj, "op", where)
    if isinstance(op, str):
        if op.upper() not in CmdOp.__members__:
            raise UsageError(f"{where}.op: {op!r} is not one of {', '.join(CmdOp.__members__)}")
        op = op.upper()
    else:
        op = CmdOp(integer(op, f"{where}.op", 0, 10)).name
    values = {"id": k % (1 << p.ID_W), "op": int(CmdOp[op])}
    if "desc" in obj:
        name = obj["desc"]
        if name not in descs:
            raise UsageError(f"{where}.desc: no descriptor named {name!r}")
        addr, desc, _ = descs[name]
        values.update(desc_addr=addr, rank=desc.rank, mode=desc.mode)
    elif op in TENSOR_OP_NAMES and "desc_addr" not in obj:
        raise UsageError(f"{where}: a {op} names its descriptor (desc or desc_addr)")
    for key, value in obj.items():
        w = f"{where}.{key}"
        if key in ("op", "desc"):
            continue
        if key == "coord":
            if not isinstance(value, list) or len(value) > 5:
                raise UsageError(f"{w}: expected a list of at most 5 integers")
            values[key] = tuple(int_or_text(v, f"{w}[{n}]") for n, v in enumerate(value))
        elif key in _ENUMS:
            values[key] = _enum(value, w, _ENUMS[key])
        else:
            values[key] = int_or_text(value, w, 0)
    try:
        cmd = TmaCmd(**values).check(p)
    except ValueError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return cmd


def _fill_bytes(obj, where, rng, limit):
    if "hex" in obj:
        try:
            return bytes.fromhex(field(obj, "hex", where, str))
        except ValueError:
            raise UsageError(f"{where}.hex: not a hex byte string") from None
    n = int_or_text(field(obj, "bytes", where), f"{where}.bytes", 1, limit)
    fill = field(obj, "fill", where, default="random")
    if fill == "random":
        return rng.randbytes(n)
    if fill == "index":
        return bytes(j & 0xFF for j in range(n))
    return bytes([int_or_text(fill, f"{where}.fill", 0, 255)]) * n


def _regions(items, where, rng, p, smem):
    if not isinstance(items, list):
        raise UsageError(f"{where}: expected a list of {{addr, hex}} or {{addr, bytes, fill}}")
    out, total = [], 0
    size = (1 << p.SMEM_AW) if smem else (1 << p.ADDR_W)
    for k, obj in enumerate(items):
        w = f"{where}[{k}]"
        if not isinstance(obj, dict):
            raise UsageError(f"{w}: expected an object")
        unknown = set(obj) - {"addr", "hex", "bytes", "fill", "cta"}
        if unknown or (smem and "cta" not in obj) or (not smem and "cta" in obj):
            raise UsageError(f"{w}: fields are {'cta, ' if smem else ''}addr and hex or "
                             f"bytes/fill")
        addr = int_or_text(field(obj, "addr", w), f"{w}.addr", 0, size - 1)
        data = _fill_bytes(obj, w, rng, MAX_FILL_BYTES - total)
        total += len(data)
        if addr + len(data) > size:
            raise UsageError(f"{w}: [{addr:#x}, {addr + len(data):#x}) leaves the "
                             f"{'smem window' if smem else 'address space'}")
        entry = [addr, data.hex()]
        if smem:
            entry.insert(0, int_or_text(obj["cta"], f"{w}.cta", 0, N_CTA - 1))
        out.append(entry)
    return out


def parse(data, block):
    """Validate a user's stimulus (UsageError naming the field); returns (params, normalized)."""
    if not isinstance(data, dict):
        raise UsageError("stimulus: expected a JSON object with descriptors and commands")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise UsageError(f"stimulus: unknown field {sorted(unknown)[0]!r} "
                         f"(fields: {', '.join(sorted(_TOP_KEYS))})")
    params = block.resolve_params(field(data, "params", "stimulus", dict, default={}))
    try:
        p = TmaParams.of_build(params)
    except ValueError as exc:
        raise UsageError(f"params: {exc}") from None
    raw = field(data, "descriptors", "stimulus", dict, default={})
    descs = {name: _descriptor(name, obj, p) for name, obj in raw.items()}
    cmds = field(data, "commands", "stimulus", list)
    if not 1 <= len(cmds) <= MAX_COMMANDS:
        raise UsageError(f"stimulus.commands: 1..{MAX_COMMANDS} commands, got {len(cmds)}")
    commands = [_command(c, k, descs, p) for k, c in enumerate(cmds)]
    rng = random.Random(int_or_text(field(data, "seed", "stimulus", default=1), "stimulus.seed", 0))
    gmem = _regions(field(data, "global", "stimulus", default=[]), "global", rng, p, smem=False)
    gmem += [[addr, d.hex()] for addr, _, d in descs.values()]
    smem = _regions(field(data, "smem", "stimulus", default=[]), "smem", rng, p, smem=True)
    grouped = field(data, "grouped", "stimulus", bool, default=True)
    return params, {"gmem": gmem, "smem": smem, "grouped": bool(grouped),
                    "commands": [{**c.as_dict(), "coord": list(c.coord)} for c in commands]}


def golden(params, stim):
    """The golden model's record (``golden.tma.record``) of the stimulus."""
    p = TmaParams.of_build(params)
    gmem, smem = GlobalMemory(p.ADDR_W), SharedMemory(p.SMEM_AW)
    load_memories(stim, gmem.write, smem.write)
    res = TmaModel(p, gmem=gmem, smem=smem).run(
        [TmaCmd(**{**c, "coord": tuple(c["coord"])}) for c in stim["commands"]])
    cmds = res.commands
    reqs = [r for c in cmds for r in c.requests]
    return {
        "requests": [request_entry(r.op, r.line, r.sectors, r.dtype, r.data, r.be) for r in reqs],
        "errs": [[i, int(code)] for i, code in res.errs],
        "done": list(res.done),
        "smem": smem_image(lambda c, r: smem.read(c, r * LINE, LINE),
                           beat_rows((b.row, b.be, b.mask) for c in cmds for b in c.beats)),
        "gmem": gmem_image(lambda line: gmem.read(line * LINE, LINE),
                           {r.line for r in reqs if r.op != L2Op.READ and r.op != L2Op.PREFETCH}),
        "mbar_tx": mbar_totals((u.addr, u.tx, u.mask) for c in cmds for u in c.mbar),
        "desc_reads": len(res.desc_reads),
    }


def compare(expected, actual):
    return compare_records(expected, actual)


def summary(params, stim, result):
    out = {"commands": len(stim["commands"]), "requests": len(result["requests"]),
           "errors": len(result["errs"]), "done": len(result["done"]),
           "smem_rows_written": len(result["smem"]), "global_lines_written": len(result["gmem"]),
           "desc_reads": result["desc_reads"]}
    if "cycles" in result:
        out["cycles"] = result["cycles"]
        out["cmd_latency_max"] = max((c["end"] - c["cmd"] for c in result["per_command"]),
                                     default=None)
    return out


def demo_stimulus(params, rng):
    """A small mixed stimulus for ``make``'s demo: tile loads in every swizzle mode with OOB
    fill, a block copy each way, a rejected load, WAIT_ALL and DESC_INVAL; then an im2col load
    (3x3-filter tap with padding), a tensor store, a tensor reduction, a tensor prefetch, a block
    reduction and a block prefetch."""
    descs, cmds = {}, []
    for k, swz in enumerate(("NONE", "SW32B", "SW64B", "SW128B")):
        width = {"NONE": 16, "SW32B": 8, "SW64B": 16, "SW128B": 32}[swz]
        descs[swz] = {"addr": 0x8000 + LINE * k, "dtype": "F32" if k == 2 else "U32", "rank": 2,
                      "global_address": 0x100000, "tensor_size": [64, 40],
                      "tensor_stride": [256], "box_size": [width, 8], "swizzle": swz,
                      "oob_fill": ["ZERO", "CONST", "NAN", "ZERO"][k], "oob_const": 0x5A}
        cmds.append({"op": "TENSOR_LOAD", "desc": swz, "coord": [rng.randrange(-4, 60), 36],
                     "smem_addr": 0x1000 * k, "mbar_addr": 0x20000})
    cmds += [{"op": "BLOCK_G2S", "gaddr": 0x140010, "num_blocks": 20, "smem_addr": 0x8000,
              "mbar_addr": 0x20008},
             {"op": "WAIT_ALL"},
             {"op": "BLOCK_S2G", "gaddr": 0x180000, "num_blocks": 12, "smem_addr": 0x1000},
             {"op": "BLOCK_S2S", "smem_addr": 0x2000, "smem_dst": 0xA000, "num_blocks": 9},
             {"op": "TENSOR_LOAD", "desc": "NONE", "coord": [0, 0], "smem_addr": 0x7,
              "mbar_addr": 0x20000},                       # misaligned smem: rejected
             {"op": "DESC_INVAL"},
             {"op": "TENSOR_LOAD", "desc": "SW128B", "coord": [8, 0], "smem_addr": 0xC000,
              "mbar_addr": 0x20010}]
    # part 2: F16 NHWC 2 x 8 x 8 x 64 activations, one filter tap (w, h offset 1) of a 3 x 3
    # convolution with padding 1: 32 pixels of 64 channels
    descs["I2C"] = {"addr": 0x8000 + LINE * 4, "dtype": "F16", "rank": 4, "mode": "IM2COL",
                    "global_address": 0x120000, "tensor_size": [64, 8, 8, 2],
                    "tensor_stride": [128, 1024, 8192], "range_c": 64, "range_ndhw": 32,
                    "base_corner": [-1, -1], "far_corner": [-1, -1]}
    cmds += [{"op": "TENSOR_LOAD", "desc": "I2C", "coord": [0, -1, -1, 0], "im2col_off": 0x101,
              "smem_addr": 0xE000, "mbar_addr": 0x20018},
             {"op": "TENSOR_STORE", "desc": "NONE", "coord": [0, 0], "smem_addr": 0x1000},
             {"op": "TENSOR_RED", "desc": "NONE", "red_op": "ADD", "coord": [16, 8],
              "smem_addr": 0x1000},
             {"op": "TENSOR_PREFETCH", "desc": "SW128B", "coord": [0, 16]},
             {"op": "BLOCK_RED", "red_op": "XOR", "dtype": "U32", "gaddr": 0x180000,
              "num_blocks": 4, "smem_addr": 0x1000},
             {"op": "BLOCK_PREFETCH", "gaddr": 0x140000, "num_blocks": 16}]
    return {"params": params, "descriptors": descs, "commands": cmds, "seed": rng.randrange(1 << 16),
            "global": [{"addr": 0x100000, "bytes": 0x50000, "fill": "random"}]}


# -- benchmark (gpublocks bench tma) ----------------------------------------------------------

BENCH_RANDOM_CMDS = 300       # random regression commands behind min_request_ratio


def _run_json(block, params, testbench, testcase, seed, sim, **env):
    """One cocotb testcase on the RTL; returns what it wrote to GPUBLOCKS_RESULT."""
    import json
    import tempfile
    from pathlib import Path

    from sim.cocotb_run import run_testbench

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        run_testbench(block, params, testbench, testcase=testcase, sim=sim, seed=seed,
                      env={"GPUBLOCKS_RESULT": str(out), **env},
                      label=f"bench_{block.name}_{testcase}")
        return json.loads(out.read_text())


def _run_top(block, params, testcase, seed, sim, **env):
    """One ``tb.tma.top_tb`` testcase on the RTL; returns what it wrote."""
    return _run_json(block, params, "tb.tma.top_tb", testcase, seed, sim, **env)


def _redunit_throughput(seed, sim):
    """TmaRedUnit's cycles per RED line at downstream read latencies 1 and 20 (default build,
    no stalls; ``tb.tma.redunit_tb.throughput``) and the line bytes per cycle they allow."""
    from tb.tma.builds import REDUNIT
    fig = _run_json(REDUNIT, REDUNIT.resolve_params({}), "tb.tma.redunit_tb", "throughput",
                    seed, sim)
    for lat in (1, 20):
        fig[f"bytes_per_cycle_L{lat}"] = round(LINE / fig[f"red_cycles_L{lat}"][0], 3)
    return fig


def bench(block, seed, sim="verilator"):
    """The TMA-P benchmarks (BM-TILE, TILE8, LAT, SWZ, FILL, DMISS, BLK, 8D, I2C, ST, a
    TENSOR_RED and a 16-CTA multicast of BM-TILE) on the RTL at
    the default parameters, under the spec's benchmark memory model (``tb.tma.top_tb``), and the
    random regression (``BENCH_RANDOM_CMDS`` commands, random latency, order and back-pressure)
    for ``min_request_ratio`` = golden request count / issued requests (TMA-P3; target 1.0).
    Every command is also compared with the golden model. Returns the TMA-P12 figures."""
    params = block.resolve_params({})
    res = _run_top(block, params, "benchmarks", seed, sim)
    reg = _run_top(block, params, "random_commands", seed, sim, TMA_TOP_CMDS=str(BENCH_RANDOM_CMDS))
    rates = {k: res[k]["request"]["per_cycle"]
             for k in ("bm_tile", "bm_tile8", "bm_swz_128b", "bm_swz_none", "bm_blk")}
    i2c_rate = res["bm_i2c"]["request"]["per_cycle"]
    red = _redunit_throughput(seed, sim)
    return {
        "config": {"sim": sim, "params": params, "memory": "L2 20-cycle in-order responses, "
                   "desc_rd 50, smem_rd 2, every output ready"},
        "req_per_cycle": rates["bm_tile"],
        "bytes_per_cycle": res["bm_tile"]["request"]["bytes_per_cycle"],
        "min_request_ratio": round(reg["golden_requests"] / reg["requests"], 4),
        "random_regression": {k: reg[k] for k in ("commands", "rejected", "requests",
                                                  "golden_requests", "beats", "max_outstanding")},
        "min_req_per_cycle": min(rates.values()),
        "write_per_cycle_min": min(res[k]["write"]["per_cycle"] for k in ("bm_tile", "bm_fill")),
        "first_req_latency": res["bm_lat"]["first_req_latency"],
        "swizzle_throughput_ratio": round(rates["bm_swz_128b"] / rates["bm_swz_none"], 4),
        "dmiss_gap_cycles": res["bm_dmiss"]["gap_cycles"],
        "bm_8d_window_cycles": res["bm_8d"]["request"]["window_cycles"],
        "im2col_req_rate_ratio": round(i2c_rate / rates["bm_tile"], 4),
        "store_req_per_cycle": res["bm_st"]["request"]["per_cycle"],
        "store_bytes_per_cycle": res["bm_st"]["request"]["bytes_per_cycle"],
        "reduce_bytes_per_cycle": res["bm_red"]["request"]["bytes_per_cycle"],
        "multicast_dest_writes_per_cycle": res["bm_mcast"]["write"]["dest_writes_per_cycle"],
        "redunit": red,
        "reduce_unit_bytes_per_cycle": red["bytes_per_cycle_L20"],
        "rtl_checked_commands": res["check"]["commands"],
        "benchmarks": {k: v for k, v in res.items() if k.startswith("bm_")},
    }
