"""`gpublocks run dfp` and `gpublocks bench dfp`: stimulus schema, one-line errors, golden and
RTL runs, the benchmark's JSON keys; Verilog for every DFP module from its parameters."""

import json

import pytest

from golden.dfp import vectors as gv


BAD = [
    ('{}', "missing field 'chains'"),
    ('{"chains": []}', "stimulus.chains: needs at least one chain"),
    ('{"chains": [{"a": [1]}]}', "chains[0]: missing field 'b'"),
    ('{"chains": [{"a": [1], "b": [1, 2]}]}', "chains[0]: a has 1 elements and b 2"),
    ('{"chains": [{"a": [40000], "b": [1]}]}', "chains[0].a[0]: 40000 is outside -32768..32767"),
    ('{"chains": [{"a": [1], "b": [1], "cfg": {"mode": "FAST"}}]}', "chains[0].cfg.mode: 'FAST'"),
    ('{"chains": [{"a": [1], "b": [1], "cfg": {"mode": 4}}]}', "chains[0].cfg.mode: 4 is outside 0..3"),
    ('{"cfg": {"chunk_len": -1}, "chains": [{"a": [1], "b": [1]}]}', "stimulus.cfg.chunk_len: -1"),
    ('{"chains": [{"a": [1], "b": [1], "cfg": {"speed": 1}}]}', "unknown cfg field 'speed'"),
    ('{"chains": [{"a": [1], "b": [1], "bl_a": 16}]}', "chains[0].bl_a: 16 is outside 0..15"),
    ('{"chains": [{"a_fp32": [1e39], "b": [1]}]}', "chains[0].a_fp32[0]: 1e+39 does not fit"),
    ('{"chains": [{"a_fp32": ["zz"], "b": [1]}]}', "neither a number nor a hex bit pattern"),
    ('{"chains": [{"a": [1], "a_fp32": [1.0], "b": [1]}]}', "either a or a_fp32"),
    ('{"chains": [{"a": [1, 2], "b": [1, 2], "blk": [{"beat": 0}]}]}', "blk[0].beat: 0 is outside"),
    ('{"params": {"lanes": 3}, "chains": [{"a": [1], "b": [1]}]}', "lanes"),
    ('{"params": {"acc_w": 64}, "chains": [{"a": [1], "b": [1]}]}', "acc_w"),
    ('{"timing": {"ready_prob": 0}, "chains": [{"a": [1], "b": [1]}]}', "ready_prob"),
    ('{"chains": [{"a": [1], "b": [1], "colour": 1}]}', "chains[0]: unknown field 'colour'"),
]


@pytest.mark.req("DFP-C1", "DFP-C2", "DFP-C8")
@pytest.mark.parametrize("text, words", BAD)
def test_run_dfp_bad_stimulus_one_line_exit_2(cli, tmp_path, build, text, words):
    path = tmp_path / "stim.json"
    path.write_text(text)
    code, out, err = cli("run", "dfp", str(path), "--sim", "golden")
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    assert "Traceback" not in out + err
    assert not (build / "run" / "dfp.json").exists()


def _gv18_stimulus():
    chains = [{"a": gv.GV18_A, "b": gv.GV18_B, "es_a": -6, "es_b": -6, "bl_a": 15, "bl_b": 15,
               "k_log2": 1, "cfg": cfg} for cfg, *_ in gv.GV18]
    chains.append({"a_fp32": [318.0, 3.4667968], "b_fp32": [318.0, "0xC05DE000"], "cfg": {"mode": "NONE"}})
    chains.append({"a": [30000] * 3, "b": [30000] * 3, "bl_a": 15, "bl_b": 15,
                   "cfg": {"mode": "CHUNK"}, "blk": [{"beat": 2, "es_a": 1}], "clr_before": 1})
    # exponent extremes (DFP-F3): es_a + es_b + r from -1024 up to 1022 + r, no wrap
    chains.append({"a": [32767] * 3, "b": [32767] * 3, "es_a": 511, "es_b": 511,
                   "cfg": {"mode": "ADAPTIVE"}})
    chains.append({"a": [-32767], "b": [5], "es_a": -512, "es_b": -512, "cfg": {"mode": "NONE"}})
    return {"params": {"lanes": 1, "acc_w": 32}, "timing": {"gap_prob": 0.3, "ready_prob": 0.6},
            "chains": chains}


@pytest.mark.req("DFP-GV18", "DFP-GV28", "DFP-I10", "DFP-F3")
@pytest.mark.parametrize("sim", ["golden", "verilator"])
def test_run_dfp_worked_example(cli, tmp_path, build, sim):
    """GV18 in every mode, the quantized worked example and a GV28 blocked chain through `run`."""
    path = tmp_path / "gv18.json"
    path.write_text(json.dumps(_gv18_stimulus()))
    out_file = tmp_path / "result.json"
    code, out, err = cli("run", "dfp", str(path), "--sim", sim, "--out", str(out_file))
    assert code == 0, out + err
    record = json.loads(out_file.read_text())
    assert record["passed"] and record["mismatch_count"] == 0
    results = (record["rtl"] or record["golden"])["results"]
    for (cfg, acc, es_out, headroom, chunks, fp32), res in zip(gv.GV18, results):
        assert (res["acc"], res["es_out"], res["headroom"], res["chunks"], res["fp32"]) == \
            (acc, es_out, headroom, chunks, fp32)
    assert results[-3]["acc"] == 450000000 and results[-3]["fp32"] == 0x4F5693A4
    # the quantized example: 318^2 - 3.4667968^2 from I = [20352, 222], [20352, -222]
    assert results[-4]["acc"] == 20352 ** 2 - 222 ** 2
    assert (results[-2]["es_out"], results[-2]["r"], results[-2]["fp32"]) == (1024, 2, 0x7F800000)
    assert (results[-1]["es_out"], results[-1]["fp32"]) == (-1024, 0x80000000)
    assert record["summary"]["max_abs_err_vs_fp64"] < 0.02


@pytest.mark.req("DFP-I12", "DFP-C3", "DFP-C4", "DFP-C5", "DFP-C6")
def test_verilog_for_each_dfp_module_from_its_parameters(cli, build):
    for argv, module in [
        (["dfp", "-p", "lanes=4", "-p", "acc_w=48"], "dfp_acc_w48_lanes4"),
        (["dfp_quantizer", "-p", "q_lanes=4", "-p", "blk_max=128"], "dfp_quantizer_blk_max128_q_lanes4"),
        (["dfp_dequantizer", "-p", "q_lanes=2"], "dfp_dequantizer_q_lanes2"),
        (["dfp_downconverter", "-p", "in_w=48", "-p", "bias_bits=2"], "dfp_downconverter_bias_bits2_in_w48"),
    ]:
        code, out, err = cli("verilog", *argv)
        assert code == 0, err
        assert f"module {module}(" in (build / "verilog" / f"{module}.v").read_text()
    for argv, words in [(["dfp", "-p", "lanes=3"], "lanes"), (["dfp", "-p", "acc_w=31"], "acc_w"),
                        (["dfp_quantizer", "-p", "blk_max=63", "-p", "q_lanes=2"], "blk_max"),
                        (["dfp_downconverter", "-p", "in_w=49"], "in_w"),
                        (["dfp_quantizer", "-p", "bias_bits=5"], "bias_bits")]:
        code, out, err = cli("verilog", *argv)
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.req("DFP-I12")
def test_bench_dfp_json_keys(cli, build, monkeypatch):
    """`gpublocks bench dfp --json` end to end: RTL throughput run, error benchmark, training
    parity and the RTL spot check, every key the issue names in build/bench/dfp.json. To keep
    the regression short the training is cut to seed 0 and the spot check to 20 chains per
    mode here; the full protocols are tests/golden/test_dfp_training.py (five seeds) and
    tests/rtl/test_dfp_spot_check.py (>= 256 chains per mode)."""
    from golden.dfp import training
    from sim.blocks import dfp as adapter
    full_parity, full_spot = training.training_parity, adapter.spot_check
    monkeypatch.setattr(training, "training_parity", lambda: full_parity(seeds=[0]))
    monkeypatch.setattr(adapter, "spot_check",
                        lambda block, seed, sim="verilator": full_spot(block, seed, sim, n_per_mode=20))
    monkeypatch.setattr(adapter, "THROUGHPUT_BEATS", 256)
    code, out, err = cli("bench", "dfp", "--json")
    assert code == 0, out + err
    figures = json.loads((build / "bench" / "dfp.json").read_text())
    for key in ("macs_per_cycle", "dot_err_chunk_k4096", "dot_err_adaptive_k4096",
                "dot_err_preshift_k4096", "ovf_with_manager", "train_acc_fp32", "train_acc_dfp16",
                "train_acc_gap_pp", "rtl_spot_checks", "rtl_spot_mismatches"):
        assert key in figures, key
    assert figures["throughput_mismatches"] == 0 and figures["rtl_spot_mismatches"] == 0
    assert figures["macs_per_cycle"] == 16.0
    assert figures["ovf_with_manager"] == 0
    assert (build / "bench" / "dfp.png").exists()
