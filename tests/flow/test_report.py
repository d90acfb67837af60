"""`gpublocks report`: the one page of figures and targets, from hand-made inputs.

The inputs are written by the test (bench JSON with one figure short of its target, an FPGA
and a synthesis report entry, a plot), so every marker is known in advance; the real figures
come from `gpublocks bench`, which the RTL tests and benches exercise.
"""

import json
import re

from sim.paths import specs_dir
from sim.targets import TARGETS, Target, judge


def _trackq_figures(**changes):
    f = {"hit_behind_miss_latency": {"50": 3, "500": 3}, "hit_behind_miss_latency_max": 3,
         "e1_mean_latency_perwarp": 32.5, "e1_mean_resp_latency_perwarp": 34.5,
         "e1_mean_latency_fifo": 100.0, "e1_mean_resp_latency_fifo": 102.0, "e1_mean_latency_mode1": 100.0,
         "resp_per_cycle_all_ready": 1.0,
         "resp_per_cycle_detail": {"4 warps": {"first_resp": 3, "last_resp": 66},
                                   "1 warp": {"first_resp": 3, "last_resp": 66}},
         "max_single_queue_occupancy": 16, "pool_full_req_ready_low_cycles": 87,
         "random_mix_speedup": 150.0, "random_mix_throughput_perwarp": 0.18,
         "random_mix_throughput_fifo": 0.07, "fast_hit_latency": 1,
         "gv4_cnt_req_stall_inorder": 49, "gv4_cnt_req_stall_freelist": 4, "config": {"seed": 7}}
    f.update(changes)
    return f


def _marks(figures, block="trackq", fpga=None):
    return {t.req: judge(t, figures, fpga or {}, None)[1] for t in TARGETS[block]}


# the -P IDs of each spec (TMA-P1..P12, TQ-P1..P7, WD-P1..P10, MR-P1..P10, DFP-P1..P10)
P_IDS = {"tma": ("TMA", 12), "trackq": ("TQ", 7), "wdist": ("WD", 10), "memrouter": ("MR", 10),
         "dfp": ("DFP", 10)}


def test_every_spec_performance_id_has_one_target():
    specs = specs_dir()
    for block, (prefix, n) in P_IDS.items():
        ids = [t.req for t in TARGETS[block]]
        assert ids == [f"{prefix}-P{i}" for i in range(1, n + 1)], block
        if specs is not None:          # and the spec, when this checkout has it, agrees
            assert set(ids) == set(re.findall(rf"\b({prefix}-P\d+)\b", (specs / f"{block}.md").read_text()))
    assert set(TARGETS) == set(P_IDS)


def test_judge_passes_the_golden_figures_and_marks_each_miss_short():
    assert set(_marks(_trackq_figures()).values()) == {"pass"}
    marks = _marks(_trackq_figures(fast_hit_latency=2, random_mix_throughput_perwarp=0.05))
    assert {r for r, m in marks.items() if m == "short"} == {"TQ-P5", "TQ-P6"}
    detail = {"4 warps": {"first_resp": 3, "last_resp": 67}, "1 warp": {"first_resp": 3, "last_resp": 66}}
    assert _marks(_trackq_figures(resp_per_cycle_detail=detail))["TQ-P3"] == "short"
    missing = _trackq_figures()
    del missing["fast_hit_latency"]
    assert _marks(missing)["TQ-P6"] == "not measured" and _marks(None)["TQ-P1"] == "not measured"


def test_judge_by_tests_and_by_fpga():
    by_tests = Target("X-P1", "MUST", "m", "t")
    assert judge(by_tests, {}, {}, "passed")[1] == "pass (tests)"
    assert judge(by_tests, {}, {}, "failed")[1] == "fail (tests)"
    assert judge(by_tests, {}, {}, None)[1] == "not run"
    p9 = next(t for t in TARGETS["dfp"] if t.req == "DFP-P9")
    assert judge(p9, {}, {"dfp": {"fmax_mhz": 101.1, "dsp": 16}}, None)[1] == "pass"
    assert judge(p9, {}, {"dfp": {"fmax_mhz": 99.9, "dsp": 16}}, None)[1] == "short"
    assert judge(p9, {}, {"dfp": {"fmax_mhz": 120.0, "dsp": 15}}, None)[1] == "short"
    assert judge(p9, {}, {}, None)[1] == "not measured"
    assert judge(p9, {}, {"dfp": {"fits": False, "fmax_mhz": None, "dsp": 16}}, None)[1] == "short"


def test_wdist_ratio_targets_need_the_spec_machine():
    f = {"config": {"full_benchmark_machine": False, "N_GPC": 4, "SM_PER_GPC": 8}, "fill_speedup": 6.1}
    text, mark = judge(TARGETS["wdist"][0], f, {}, None)
    assert mark == "not measured" and "4 × 8" in text
    f["config"].update(full_benchmark_machine=True, N_GPC=16)
    f["fill_speedup"] = 18.8
    assert judge(TARGETS["wdist"][0], f, {}, None)[1] == "pass"


def test_report_page_from_hand_made_inputs(cli, build):
    (build / "bench").mkdir()
    (build / "bench" / "trackq.json").write_text(json.dumps(_trackq_figures(fast_hit_latency=2)))
    (build / "bench" / "trackq.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (build / "fpga").mkdir()
    (build / "fpga" / "report.json").write_text(json.dumps({"trackq": {
        "params": {"POOL": 16}, "lut4": 1234, "ccu2c": 5, "comb": 1300, "ff": 567, "dsp": 0, "bram": 2,
        "fmax_mhz": 87.5, "target_mhz": 100, "met": False, "seconds": 1.0,
        "critical_path": ["0.52 ns clk-to-q a.Q -> Q", "0.13 ns setup b.DI -> DI"], "block": {}, "block_parts": {}}}))
    (build / "synth").mkdir()
    (build / "synth" / "report.json").write_text(json.dumps({"trackq": {
        "params": {"POOL": 16}, "nand2_eq": 35000, "cells": 17000, "ff": 2371, "inv_buf": 1, "nand_nor": 1,
        "and_or": 1, "xor_xnor": 1, "mux": 1, "memories": 3, "memory_bits": 1152, "seconds": 1.0}}))
    code, out, err = cli("report")
    assert code == 0, out + err
    md = (build / "report" / "index.md").read_text()
    html = (build / "report" / "index.html").read_text()
    summary = next(line for line in md.splitlines() if line.startswith("| trackq |"))
    assert "6 / 7 (short: TQ-P6)" in summary and "| 1234 | 567 | 0 | 2 | 87.5 ❌ | 35000 | 1152 |" in summary
    assert "| TQ-P6 | MUST | fast-path hit latency (cycles) | 1 | 2 | ❌ short |" in md
    assert "| TQ-P2 |" in md and "✅ pass" in md
    assert "No benchmark figures: run `gpublocks bench tma`." in md
    assert "![trackq: trackq](img/trackq.png)" in md and (build / "report" / "img" / "trackq.png").exists()
    assert "| trackq | POOL=16 | 1234 | 5 | 567 | 0 | 2 | 87.5 | ❌ short |" in md
    assert "<table>" in html and '<img src="img/trackq.png"' in html and "<code>gpublocks bench tma</code>" in html
    assert html.count("<h2>") == md.count("\n## ")


def test_summary_gives_the_fpga_variants_fmax(cli, build):
    """The memory router's default does not route; its summary row also gives the Fmax of the
    smallest configuration that `gpublocks fpga memrouter` builds beside it."""
    (build / "fpga").mkdir()
    common = {"ccu2c": 5, "ff": 567, "dsp": 0, "bram": 2, "target_mhz": 100, "seconds": 1.0,
              "critical_path": [], "block": {}, "block_parts": {}, "fits": True}
    (build / "fpga" / "report.json").write_text(json.dumps({
        "memrouter": {**common, "params": {}, "lut4": 40000, "comb": 49872, "routed": False,
                      "fmax_mhz": None, "met": False},
        "memrouter_CFG4_LOG2G9_ROB_BEATS16": {**common, "params": {}, "lut4": 17000,
                                              "comb": 25000, "routed": True, "fmax_mhz": 34.03,
                                              "met": False}}))
    code, out, err = cli("report")
    assert code == 0, out + err
    md = (build / "report" / "index.md").read_text()
    summary = next(line for line in md.splitlines() if line.startswith("| memrouter |"))
    assert ("| placed (TRELLIS_COMB 49872), not routed; CFG=4, LOG2G=9, ROB_BEATS=16: 34.0 ❌ |"
            in summary), summary
