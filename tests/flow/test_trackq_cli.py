"""`gpublocks run trackq` and `gpublocks bench trackq`: stimulus schema, one-line errors, golden
and RTL runs compared with the golden model, the benchmark's JSON keys and figures.

The full benchmark (B-RAND at N_Q = 48, POOL = 512) runs through the CLI; here the directed
protocols run in full and B-RAND at a reduced size, and the full-size B-RAND is a slow test."""

import json
import random

import pytest

from golden.trackq.bench import BRAND_REFERENCE
from golden.trackq.params import TrackqParams

E1 = {"cfg": {"mode": 4},
      "requests": [{"offer": i, "warp": i, "sectors": [[0, 0, i]]} for i in range(4)],
      "fills": [[10, 0, 0, 1], [12, 0, 0, 2], [14, 0, 0, 3], [100, 0, 0, 0]]}

BAD = [
    ('{}', "stimulus: missing field 'requests'"),
    ('{"requests": []}', "stimulus.requests: needs 1..100000 requests, got 0"),
    ('{"requests": [{"warp": 8}]}', "requests[0].warp: 8 is outside 0..7"),
    ('{"requests": [{"id": 256}]}', "requests[0].id: 256 is outside 0..255"),
    ('{"requests": [{"cls": "DMA"}]}', "requests[0].cls: 'DMA' is not one of"),
    ('{"requests": [{"sectors": [[4, 0, 0]]}]}', "requests[0].sectors[0][0] (bank): 4 is outside"),
    ('{"requests": [{"sectors": [[0, 16, 0]]}]}', "requests[0].sectors[0][1] (dslot): 16"),
    ('{"requests": [{"sectors": [[0, 1, 0], [0, 2, 1]]}]}', "bank 0 already names dslot 1"),
    ('{"requests": [{"dslot": [0, 0], "need": [1, 0, 0, 0]}]}', "requests[0]: req.dslot must be a tuple of BANKS = 4"),
    ('{"requests": [{"sectors": [], "dslot": [0, 0, 0, 0]}]}', "either sectors or dslot/need"),
    ('{"requests": [{"offer": 5}, {"offer": 2}]}', "requests[1].offer: 2 is outside 5.."),
    ('{"requests": [{"eoi": 2}]}', "requests[0].eoi: 2 is outside 0..1"),
    ('{"requests": [{"colour": 1}]}', "requests[0]: unknown field 'colour'"),
    ('{"requests": [{}], "fills": [[3, 0, 0, 0], [3, 1, 0, 0]]}', "fills[1]: a second fill in cycle 3"),
    ('{"requests": [{}], "fills": [[3, 0, 16, 0]]}', "fills[0]: fill.dslot = 16 does not fit"),
    ('{"requests": [{}], "fills": [[3, 0, 0]]}', "fills[0]: expected [cycle, bank, dslot, sector]"),
    ('{"requests": [{}], "invals": [[3, 5, 0]]}', "invals[0]"),
    ('{"requests": [{}], "cfg": {"mode": 5}}', "stimulus.cfg.mode: 5 is outside 1..4"),
    ('{"requests": [{}], "cfg": {"cgm": 32}}', "stimulus.cfg.cgm: 32 is outside 0..31"),
    ('{"requests": [{}], "cfg": {"reclaim": "lru"}}', "stimulus.cfg.reclaim: 'lru'"),
    ('{"requests": [{}], "cfg": {"speed": 1}}', "unknown cfg field 'speed'"),
    ('{"requests": [{}], "cfg_changes": [{"cycle": 9}, {"cycle": 4}]}', "increasing cycle order"),
    ('{"requests": [{}], "resp_not_ready": [[5, 2]]}', "resp_not_ready[0][1]: 2 is outside 5.."),
    ('{"requests": [{}], "params": {"N_Q": 65}}', "N_Q must be an integer in 1..64"),
    ('{"requests": [{}], "params": {"SEQ_W": 6}}', "SEQ_W must be an integer in 7..32"),
    ('{"requests": [{}], "params": {"LANES": 6}}', "no parameter 'LANES'"),
    ('{"requests": [{}], "timing": 1}', "stimulus: unknown field 'timing'"),
]


@pytest.mark.req("TQ-I1", "TQ-I3", "TQ-I4", "TQ-I6", "TQ-C17")
@pytest.mark.parametrize("text, words", BAD)
def test_run_trackq_bad_stimulus_one_line_exit_2(cli, tmp_path, build, text, words):
    path = tmp_path / "stim.json"
    path.write_text(text)
    code, out, err = cli("run", "trackq", str(path), "--sim", "golden")
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    assert "Traceback" not in out + err
    assert not (build / "run" / "trackq.json").exists()


@pytest.mark.req("TQ-GV1", "TQ-P2", "TQ-V1")
@pytest.mark.parametrize("sim", ["golden", "verilator"])
def test_run_trackq_e1_worked_example(cli, tmp_path, build, sim):
    """TQ-GV1 in mode 4 through `run`: the warp-1..3 hits pop at their fills (10, 12, 14), the
    miss at 100; resp two cycles later; the response order with cycles."""
    path = tmp_path / "e1.json"
    path.write_text(json.dumps(E1))
    out_file = tmp_path / "result.json"
    code, out, err = cli("run", "trackq", str(path), "--sim", sim, "--out", str(out_file))
    assert code == 0, out + err
    record = json.loads(out_file.read_text())
    assert record["passed"] and record["mismatch_count"] == 0
    trace = (record["rtl"] or record["golden"])["traces"][0]
    assert [(e["pop"], e["resp"], e["q"]) for e in trace["entries"]] == \
        [(100, 102, 0), (10, 12, 1), (12, 14, 2), (14, 16, 3)]
    assert trace["resp_order"] == [[12, 1], [14, 2], [16, 3], [102, 0]]
    assert record["summary"]["mean_latency"] == 34.5


@pytest.mark.req("TQ-V1", "TQ-F7", "TQ-F38", "TQ-F43")
def test_run_trackq_random_demo_matches_golden(cli, tmp_path, build, seed):
    """The demo's random trace (L/G, TTU, TEX instructions, status packets, fast-path hits,
    random resp back-pressure; printed seed) with a mode change and a free-list switch on the
    RTL: every request's accept/pop/cmt/resp cycle and delivered field, the counters, err and
    the status maxima equal the golden model's."""
    from sim import registry
    from sim.blocks import trackq as adapter
    block = registry.get("trackq")
    stim = adapter.demo_stimulus(block.defaults(), random.Random(seed))
    stim["cfg_changes"] = [{"cycle": 60, "mode": 3, "lgq": 2}, {"cycle": 140, "reclaim": "freelist"}]
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(stim))
    out_file = tmp_path / "result.json"
    code, out, err = cli("run", "trackq", str(path), "--out", str(out_file))
    record = json.loads(out_file.read_text())
    assert code == 0 and record["passed"], record["mismatches"][:10]
    rtl = record["rtl"]["traces"][0]
    assert len(rtl["resp_order"]) == len(stim["requests"])
    assert any(e.get("src") == 2 for e in rtl["entries"]), "no fast-path entry in the demo"


def test_compare_reports_every_difference():
    """The comparison is not vacuous: a changed cycle, field, counter or order is reported."""
    from sim import registry
    from sim.blocks import trackq as adapter
    block = registry.get("trackq")
    params, stim = adapter.parse(E1, block)
    want = adapter.golden(params, stim)
    assert adapter.compare(want, json.loads(json.dumps(want))) == []
    for mutate, words in [
        (lambda t: t["entries"][1].update(pop=11), "request 1 (id 1): pop RTL 11, golden 10"),
        (lambda t: t["entries"][2].update(q=0), "request 2 (id 2): q RTL 0"),
        (lambda t: t["counters"].update(cnt_pop=3), "cnt_pop: RTL 3, golden 4"),
        (lambda t: t["resp_order"].reverse(), "resp_order"),
        (lambda t: t.update(cycles=7), "cycles: RTL 7"),
    ]:
        got = json.loads(json.dumps(want))
        mutate(got["traces"][0])
        problems = adapter.compare(want, got)
        assert any(words in x for x in problems), (words, problems)


# B-RAND at a reduced size for the regression (the protocol of TQ-GV19 with fewer queues,
# warps and requests); the full size runs in `gpublocks bench trackq` and the slow test below.
SMALL_BRAND = {"params": TrackqParams.test(N_Q=8, POOL=32, N_WARPS=8, DSLOTS=16,
                                           FAST_PATH=0).as_dict(),
               "seed": 2, "n_warps": 8, "per_warp": 8, "miss_p": 0.3, "window": 1,
               "cfg_mode": 3, "cfg_cgm": 32, "warmup": 64, "max_cycles": 50_000}


@pytest.mark.req("TQ-P1", "TQ-P2", "TQ-P3", "TQ-P4", "TQ-P6", "TQ-P7", "TQ-GV4", "TQ-GV10",
                 "TQ-GV17", "TQ-GV18")
def test_bench_trackq_json_keys_and_figures(cli, build, monkeypatch):
    """`gpublocks bench trackq --json` end to end on the RTL: every key the issue names in
    build/bench/trackq.json, the directed figures at their spec values (E1 100.0 / 32.5, the hit
    behind a miss 3 cycles at Lm 50 and 500 against 52 / 502, 1.0 resp per cycle, one queue
    holding all POOL = 16 slots with req.ready low 87 cycles, a fast hit in 1 cycle, GV4 stalls
    49 / 4), no RTL/golden mismatch, and the latency CDF plot."""
    from sim.blocks import trackq as adapter
    monkeypatch.setattr(adapter, "BRAND", SMALL_BRAND)
    code, out, err = cli("bench", "trackq", "--json")
    assert code == 0, out + err
    figures = json.loads((build / "bench" / "trackq.json").read_text())
    assert figures["rtl_mismatches"] == 0, figures["mismatch_examples"]
    assert figures["e1_mean_latency_fifo"] == 100.0
    assert figures["e1_mean_latency_perwarp"] == 32.5
    assert figures["e1_mean_latency_mode1"] == 100.0
    assert (figures["e1_mean_resp_latency_fifo"], figures["e1_mean_resp_latency_perwarp"]) == \
        (102.0, 34.5)
    assert figures["hit_behind_miss_latency"] == {"50": 3, "500": 3}
    assert figures["hit_behind_miss_latency_fifo"] == {"50": 52, "500": 502}
    assert figures["resp_per_cycle_all_ready"] == 1.0
    assert {v["first_resp"] for v in figures["resp_per_cycle_detail"].values()} == {3}
    assert {v["last_resp"] for v in figures["resp_per_cycle_detail"].values()} == {66}
    assert figures["max_single_queue_occupancy"] == figures["pool"] == 16
    assert figures["pool_full_req_ready_low_cycles"] == 87
    assert figures["fast_hit_latency"] == 1
    assert (figures["gv4_cnt_req_stall_inorder"], figures["gv4_cnt_req_stall_freelist"]) == (49, 4)
    for key in ("random_mix_mean_hit_latency_fifo", "random_mix_mean_hit_latency_perwarp",
                "random_mix_speedup", "random_mix_throughput_fifo",
                "random_mix_throughput_perwarp", "random_mix_latency_cdf"):
        assert key in figures, key
    assert figures["random_mix"]["perwarp"]["requests"] == 64
    assert figures["random_mix_speedup"] > 1
    assert (build / "bench" / "trackq.png").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.req("TQ-P5", "TQ-GV19", "TQ-P7")
def test_brand_full_size_on_rtl(seed):
    """B-RAND (TQ-GV19) at full size on the RTL, both designs, lockstep with the golden model:
    the spec's reference values (mode 4: 3.06 / 0.1765 / 11,601 cycles; SingleFifo 460.10 /
    0.0670 / 30,575), at least 5x lower mean hit latency and a throughput not lower than the
    baseline's (TQ-P5); cnt_req_stall of both (TQ-P7)."""
    from sim import registry
    from sim.blocks import trackq as adapter
    block = registry.get("trackq")
    stim = {"brand": {k: v for k, v in adapter.BRAND.items() if k != "params"}}
    runs = {}
    for design, blk in (("tq", block), ("fifo", adapter.fifo_block())):
        result = adapter._run_rtl(blk, adapter.BRAND["params"], stim, seed, "verilator",
                                  f"brand_{design}", testcase="bench_brand")
        assert not result["lockstep_mismatches"], result["lockstep_mismatches"][:5]
        runs[design] = adapter._brand_figures(result)
    for design in ("tq", "fifo"):
        lat, thr, cycles = BRAND_REFERENCE[design]
        r = runs[design]
        assert (round(r["mean_hit_latency"], 2), round(r["throughput"], 4), r["cycles"],
                r["hits"]) == (lat, thr, cycles, BRAND_REFERENCE["hits"])
    assert runs["fifo"]["mean_hit_latency"] / runs["tq"]["mean_hit_latency"] >= 5
    assert runs["tq"]["throughput"] >= runs["fifo"]["throughput"]
