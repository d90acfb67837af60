"""`gpublocks fpga`: the ULX3S-85F flow (LFSR/XOR harness, YoWASP tools, report files).

The smoke build of the arbiter runs in `make test`; the DFP builds (DFP-P9, DFP-P10) take many
minutes and are marked ``slow``: `pytest -m slow tests/flow/test_fpga.py` runs them.
"""

import json

import pytest
from amaranth.sim import Simulator

from hw.common.fpga_wrapper import GROUPINGS, PINS, LfsrXorHarness, port_bits
from hw.common.skid import SkidBuffer
from sim import registry
from sim.fpga import build_fpga
from sim.paths import build_dir


def test_harness_flattens_streams_and_toggles_every_input():
    dut = SkidBuffer(8)
    inputs, outputs = port_bits(dut)
    # in: i.payload, i.valid, o.ready; out: i.ready, o.payload, o.valid
    assert [len(v) for v in inputs] == [8, 1, 1] and [len(v) for v in outputs] == [1, 8, 1]
    harness = LfsrXorHarness(dut)
    assert (harness.in_bits, harness.out_bits) == (10, 10)

    seen_in, seen_pins = [set() for _ in range(harness.in_bits)], set()

    async def bench(ctx):
        for _ in range(200):
            await ctx.tick()
            bits = "".join(format(ctx.get(v), f"0{len(v)}b")[::-1] for v in inputs)
            for i, b in enumerate(bits):
                seen_in[i].add(b)
            seen_pins.add(ctx.get(harness.pins))

    sim = Simulator(harness)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert all(s == {"0", "1"} for s in seen_in), "an input bit never toggled"
    assert len(seen_pins) > PINS, "the pins do not follow the outputs"


@pytest.mark.parametrize("grouping", ["interleaved", "contiguous"])
def test_harness_pins_xor_their_group_of_outputs(grouping):
    """Pin p is the XOR of its group of output bits (bits p, p + 8, ... or the p-th contiguous
    eighth), 1 + L cycles late: the capture register and one register per XOR level."""
    dut = SkidBuffer(40)
    _inputs, outputs = port_bits(dut)
    harness = LfsrXorHarness(dut, grouping)
    n = harness.out_bits
    groups = [list(range(p, n, PINS)) if grouping == "interleaved"
              else list(range(p * n // PINS, (p + 1) * n // PINS)) for p in range(PINS)]
    assert sorted(sum(groups, [])) == list(range(n))
    if grouping == "contiguous":
        assert all(g == list(range(g[0], g[-1] + 1)) for g in groups)

    def levels(size):
        count = 0
        while size > 1:
            size, count = -(-size // 4), count + 1
        return count

    outs, pins = [], []

    async def bench(ctx):
        for _ in range(120):
            await ctx.tick()
            outs.append("".join(format(ctx.get(v), f"0{len(v)}b")[::-1] for v in outputs))
            pins.append(ctx.get(harness.pins))

    sim = Simulator(harness)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    for p, group in enumerate(groups):
        late = 1 + levels(len(group))
        for t in range(late, len(pins)):
            want = sum(outs[t - late][i] == "1" for i in group) % 2
            assert (pins[t] >> p) & 1 == want, (grouping, p, t)


def test_harness_refuses_an_unknown_grouping():
    with pytest.raises(ValueError, match="striped"):
        LfsrXorHarness(SkidBuffer(8), "striped")


def test_a_design_too_big_is_read_from_the_placer_log(tmp_path):
    from sim.fpga import _placer_utilisation, _utilisation_text
    log = tmp_path / "x.tim"
    log.write_text("Info: Device utilisation:\nInfo: \t          TRELLIS_IO:       9/    365     2%\n"
                   "Info: \t              DP16KD:       0/    208     0%\n"
                   "Info: \t        TRELLIS_COMB:  110690/  83640   132%\n"
                   "ERROR: Unable to find legal placement for all cells\n")
    assert _placer_utilisation(log) == {"TRELLIS_IO": 9, "TRELLIS_IO_available": 365,
                                        "TRELLIS_COMB": 110690, "TRELLIS_COMB_available": 83640}
    assert _utilisation_text(log) == "TRELLIS_COMB 110690 of 83640"


_PNR_LINE = "nextpnr-ecp5 --json x.json"       # the build script's nextpnr command


class _FakeTools:
    """Stands in for build_component's stage() and tool(): records the nextpnr runs and plays
    back one outcome per run (True routed, False time limit, "nofit" the placer's error)."""

    def __init__(self, outcomes, timing_log):
        self.outcomes, self.timing_log, self.runs = list(outcomes), timing_log, []

    def stage(self, label, func):
        return func()

    def tool(self, label, argv, detail, limit=None):
        from sim.fpga import NO_FIT, FpgaBuildError
        # the options added to the build script's command
        self.runs.append((label, argv[-1].removeprefix(f"exec {_PNR_LINE}").split(), limit))
        outcome = self.outcomes.pop(0)
        if outcome == "nofit":
            self.timing_log.write_text(f"ERROR: {NO_FIT} for all cells\n")
            raise FpgaBuildError("pnr failed")
        return outcome


def _route(fits=True, routed=True, router="router1", ripup=False):
    return {"fits": fits, "routed": routed, "router": router, "ripup": ripup}


_ROUTER2_OPTS = ["--placer", "static", "--router", "router2"]
_UNTIMED_OPTS = _ROUTER2_OPTS + ["--no-tmdriv"]


@pytest.mark.parametrize("router, outcomes, fmax, limit, want, runs", [
    ("router1", [True], 120.0, 3600, _route(), [("pnr", [], "r1")]),
    ("router1", [True], 30.0, 3600, _route(), [("pnr", [], "r1")]),
    ("router1", [True, True], 95.0, 3600, _route(ripup=True),
     [("pnr", [], "r1"), ("pnr_ripup", ["--tmg-ripup"], "r1")]),
    ("router1", [True, False], 95.0, 3600, _route(),
     [("pnr", [], "r1"), ("pnr_ripup", ["--tmg-ripup"], "r1")]),
    ("router1", [False, True], None, 3600, _route(router="router2"),
     [("pnr", [], "r1"), ("pnr_router2", _ROUTER2_OPTS, 3600)]),
    ("router1", [False, False, True], None, 3600, _route(router="untimed"),
     [("pnr", [], "r1"), ("pnr_router2", _ROUTER2_OPTS, 3600), ("pnr_untimed", _UNTIMED_OPTS, 3600)]),
    ("router1", [False, False, False], None, 3600, _route(routed=False, router="untimed"),
     [("pnr", [], "r1"), ("pnr_router2", _ROUTER2_OPTS, 3600), ("pnr_untimed", _UNTIMED_OPTS, 3600)]),
    ("router1", [False, True], None, None, _route(router="router2"),
     [("pnr", [], "r1"), ("pnr_router2", _ROUTER2_OPTS, None)]),
    ("router1", ["nofit"], None, 3600, _route(fits=False, routed=False), [("pnr", [], "r1")]),
    ("router2", [True], 30.0, 3600, _route(router="router2"),
     [("pnr_router2", _ROUTER2_OPTS, 3600)]),
    ("router2", [False, True], 15.0, 3600, _route(router="untimed"),
     [("pnr_router2", _ROUTER2_OPTS, 3600), ("pnr_untimed", _UNTIMED_OPTS, 3600)]),
    ("router2", ["nofit"], None, None, _route(fits=False, routed=False, router="router2"),
     [("pnr_router2", _ROUTER2_OPTS, None)]),
    ("untimed", [True], 15.0, 3600, _route(router="untimed"), [("pnr_untimed", _UNTIMED_OPTS, 3600)]),
    ("untimed", [False], None, 600, _route(routed=False, router="untimed"),
     [("pnr_untimed", _UNTIMED_OPTS, 600)]),
], ids=["met", "far", "ripup", "ripup-limit", "router2", "untimed", "untimed-limit", "router2-unlimited",
        "nofit", "hint-router2", "hint-router2-limit", "hint-router2-nofit", "hint-untimed",
        "hint-untimed-limit"])
def test_place_and_route_policy(tmp_path, monkeypatch, router, outcomes, fmax, limit, want, runs):
    """router1 under a time limit, then a static placement routed by router2 under its own
    limit (or none), then an untimed static placement and router2 under that limit too; or
    the block's starting point (router2, untimed) at once; rip-up only within 10 % below the
    target; a placer failure is a no-fit result; any other nextpnr failure is raised."""
    import sim.fpga as fpga
    monkeypatch.setattr(fpga, "_timing", lambda report, target: (fmax, {}, {}))
    fake = _FakeTools(outcomes, tmp_path / "x.tim")
    got = fpga._place_and_route("x", _PNR_LINE, fake.timing_log, None,
                                fake.stage, fake.tool, lambda *a, **k: None, limit, router)
    assert got == want
    # (label, options added to the build script's command, time limit)
    assert fake.runs == [(label, opts, fpga.ROUTER1_LIMIT_S if lim == "r1" else lim)
                         for label, opts, lim in runs]


def test_place_and_route_refuses_an_unknown_router(tmp_path):
    import sim.fpga as fpga
    with pytest.raises(ValueError, match="router3"):
        fpga._place_and_route("x", _PNR_LINE, tmp_path / "x.tim", None, None, None, None,
                              router="router3")


def test_registry_routers_are_known():
    """Every block's ``fpga_router`` and ``fpga_variant_router`` is a policy the flow has (a
    typo would fail at build); the memory router's default build starts untimed, its smallest
    configuration (the variant, also when named with -p) with the timed router2."""
    import sim.fpga as fpga
    from sim.registry import REGISTRY
    policies = {b.fpga_router for b in REGISTRY.values()}
    policies |= {b.fpga_variant_router for b in REGISTRY.values() if b.fpga_variant_router}
    assert policies <= set(fpga.ROUTERS)
    memrouter = REGISTRY["memrouter"]
    assert memrouter.fpga_route_policy(memrouter.defaults()) == "untimed"
    smallest = memrouter.resolve_params({"CFG": 4, "LOG2G": 9, "ROB_BEATS": 16})
    assert memrouter.fpga_route_policy(smallest) == "router2"
    assert memrouter.fpga_route_policy(memrouter.resolve_params({"CFG": 4})) == "untimed"
    assert memrouter.fpga_harness == "contiguous" and registry.get("dfp").fpga_harness == "interleaved"
    assert {b.fpga_harness for b in REGISTRY.values()} <= set(GROUPINGS)


def test_fmax_text_says_why_there_is_no_fmax():
    from sim.fpga import fmax_text
    assert fmax_text({"fits": False, "comb": 99000, "fmax_mhz": None}) == \
        "does not fit (TRELLIS_COMB 99000)"
    assert fmax_text({"fits": True, "routed": False, "comb": 64000, "fmax_mhz": None}) == \
        "placed (TRELLIS_COMB 64000), not routed"
    assert fmax_text({"fits": True, "fmax_mhz": 101.08}) == "101.1"   # entry without "routed"
    assert fmax_text({"fits": True, "routed": True, "fmax_mhz": 15.43, "router": "untimed"}) == \
        "15.4 (untimed place and route)"
    assert fmax_text({"fits": True, "routed": True, "fmax_mhz": 32.9, "router": "router2"}) == "32.9"


def test_place_and_route_raises_other_failures(tmp_path):
    import sim.fpga as fpga

    def tool(label, argv, detail, limit=None):
        (tmp_path / "x.tim").write_text("ERROR: something else\n")
        raise fpga.FpgaBuildError("pnr failed")
    with pytest.raises(fpga.FpgaBuildError):
        fpga._place_and_route("x", "nextpnr-ecp5", tmp_path / "x.tim", None,
                              lambda label, func: func(), tool, lambda *a, **k: None)


def test_yowasp_stack_runs_the_tools_and_refuses_others():
    import subprocess
    import sys
    run = [sys.executable, "-m", "sim.yowasp_stack"]
    version = subprocess.run([*run, "yosys", "-V"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("Yosys"), version
    bad = subprocess.run([*run, "vivado"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_fpga_arbiter_smoke_build_and_reports(cli, build):
    code, out, err = cli("fpga", "arbiter")
    assert code == 0, out + err
    for stage in ("elaborate", "synth", "pnr", "pack", "block"):
        assert f"arbiter: {stage} ..." in out
    r = json.loads((build / "fpga" / "report.json").read_text())["arbiter"]
    assert r["params"] == {"n": 4}
    assert 0 < r["lut4"] < 1000 and 0 < r["ff"] < 1000 and r["dsp"] == 0 and r["bram"] == 0
    assert r["block"]["ff"] == 2                       # the arbiter's only state: ptr, 2 bits
    assert 0 < r["block"]["lut4"] < r["lut4"]
    assert 20 < r["fmax_mhz"] < 1500 and r["target_mhz"] == 100
    assert r["met"] == (r["fmax_mhz"] >= 100)
    assert r["critical_path"] and all(" ns " in step for step in r["critical_path"])
    assert (build / "fpga" / "arbiter.json").exists()
    assert (build / "fpga" / "arbiter" / "arbiter.bit").exists()

    code, out, err = cli("fpga", "arbiter", "-p", "n=7")     # a variant merges into the report
    assert code == 0, out + err
    report = json.loads((build / "fpga" / "report.json").read_text())
    assert set(report) == {"arbiter", "arbiter_n7"} and report["arbiter_n7"]["params"] == {"n": 7}
    table = (build / "fpga" / "report.md").read_text()
    assert "| arbiter | n=4 |" in table and "| arbiter_n7 | n=7 |" in table

    code, out, _ = cli("fpga", "arbiter")                   # unchanged inputs: no tool runs
    assert code == 0 and "reusing" in out and "synth ..." not in out


def test_fpga_builds_the_listed_variants_without_p():
    """`gpublocks fpga memrouter` also builds the memory router's smallest configuration,
    which routes; with -p only the named build."""
    from sim.cli import build_parser, fpga_builds
    from sim.fpga import module_name

    def names(*argv):
        args = build_parser().parse_args(["fpga", *argv])
        return [module_name(block, params) for block, params in fpga_builds(args)]

    assert names("memrouter", "arbiter") == ["memrouter", "memrouter_CFG4_LOG2G9_ROB_BEATS16",
                                             "arbiter"]
    assert names("memrouter", "-p", "CFG=2") == ["memrouter_CFG2"]
    for block in registry.REGISTRY.values():       # every variant is a legal build
        for variant in block.fpga_variants:
            block.check_params(block.resolve_params(dict(variant)))


@pytest.mark.parametrize("argv, words", [
    (["fpga", "nosuch"], "unknown block 'nosuch'"),
    (["fpga"], "name a block or use --all"),
    (["fpga", "arbiter", "-p", "n=0"], "n must be an integer in 1..1024"),
    (["fpga", "arbiter", "--board", "icebreaker"], "unknown board 'icebreaker'"),
    (["fpga", "arbiter", "--router2-limit", "-5"], "expected a whole number of seconds"),
])
def test_fpga_bad_arguments_one_line_exit_2(cli, build, argv, words):
    code, out, err = cli(*argv)
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err


def _dfp(**overrides):
    block = registry.get("dfp")
    params = block.resolve_params(overrides)
    return params, build_fpga(block, params)


@pytest.mark.slow
@pytest.mark.req("DFP-P9")
def test_dfp_p9_fmax_100mhz_and_multipliers_in_dsps():
    params, r = _dfp()
    assert (params["lanes"], params["acc_w"]) == (16, 32)
    # every non-constant multiplier of the RTL is a 16x16 product and sits in a MULT18X18D
    assert len(r["rtl_multipliers"]) == params["lanes"]
    assert all(max(w) <= 18 for w in r["rtl_multipliers"])
    assert r["dsp"] == params["lanes"] and r["alu54b"] == 0
    assert r["fmax_mhz"] >= 100, f"Fmax {r['fmax_mhz']} MHz; critical path:\n" + "\n".join(r["critical_path"])


FP32_PATH = ("post.to_fp32", "post.facc")      # DfpToFp32 and Fp32Accumulator (CHUNK mode)


@pytest.mark.slow
@pytest.mark.req("DFP-P10")
def test_dfp_p10_cost_per_mac_with_the_fp32_path_apart():
    rows = {}
    for lanes in (1, 16):
        _params, r = _dfp(lanes=lanes)
        fp32 = {}
        for part, counts in r["block_parts"].items():
            if part.startswith(FP32_PATH):
                for key, n in counts.items():
                    fp32[key] = fp32.get(key, 0) + n
        rest = {k: r["block"].get(k, 0) - fp32.get(k, 0) for k in ("lut4", "ccu2c", "ff", "dsp")}
        rows[lanes] = {"lanes": lanes,
                       "per_mac": {k: round(v / lanes, 1) for k, v in rest.items()},
                       "fp32_path": fp32, "block": r["block"], "fmax_mhz": r["fmax_mhz"]}
        assert rest["dsp"] == lanes and fp32.get("dsp", 0) == 0
        assert fp32.get("lut4", 0) > 0 and fp32.get("ff", 0) > 0
    rows["per_added_lane"] = {k: round((rows[16]["block"].get(k, 0) - rows[1]["block"].get(k, 0)) / 15, 1)
                              for k in ("lut4", "ccu2c", "ff", "dsp")}
    (build_dir("fpga") / "dfp_p10.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(json.dumps(rows, indent=1))
    assert rows[16]["per_mac"]["lut4"] < rows[1]["per_mac"]["lut4"]    # shared control amortised
    assert rows["per_added_lane"]["dsp"] == 1
