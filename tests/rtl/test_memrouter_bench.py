"""Benchmarks MR-P1..P5 of the memory router on the RTL (tb/memrouter/bench_tb.py): streaming
bandwidth on CFG-B, CFG-A and CFG-D and its ratios, and the QoS shares on CFG-C. Each run also
passes the full golden comparison of the router testbench."""

import json

import pytest

from sim.cocotb_run import run_testbench
from tb.memrouter.builds import BLOCK, BUILDS

TB = "tb.memrouter.bench_tb"
OFF_BEATS = 1250                # 10,000 cycles at 1/8 beat per cycle


def bench(build, testcase, seed, tmp_path, label, **env):
    out = tmp_path / f"{label}.json"
    env = {k: str(v) for k, v in env.items()}
    env["GPUBLOCKS_RESULT"] = str(out)
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase, seed=seed,
                  env=env, label=label)
    return json.loads(out.read_text())


@pytest.mark.req("MR-P1", "MR-P2", "MR-P3", "MR-GV19")
def test_streaming_bandwidth_and_ratios(seed, tmp_path):
    """§4.14 streaming, len-7 reads over the near pool: CFG-B delivers >= 0.84875 beats/cycle
    (97 % of 0.875), CFG-A >= 0.7275, CFG-D (HBM alone) >= 0.485; CFG-A / CFG-D >= 1.455 and
    CFG-B / CFG-D >= 1.6975."""
    bw = {}
    bw["B"] = bench("B", "streaming", seed, tmp_path, "stream_B")["bandwidth"]
    bw["A"] = bench("A2", "streaming", seed, tmp_path, "stream_A")["bandwidth"]
    bw["D"] = bench("A2", "streaming", seed, tmp_path, "stream_D", RUN_CFG="D")["bandwidth"]
    print(f"streaming beats/cycle: {bw}, A/D {bw['A'] / bw['D']:.4f}, B/D {bw['B'] / bw['D']:.4f}")
    assert bw["B"] >= 0.84875 and bw["A"] >= 0.7275 and bw["D"] >= 0.485, bw
    assert bw["A"] / bw["D"] >= 1.455 and bw["B"] / bw["D"] >= 1.6975, bw


@pytest.mark.req("MR-P4", "MR-P5", "MR-F40", "MR-F41")
def test_qos_shares_and_work_conservation(seed, tmp_path):
    """CFG-C, both pools saturated: on every OFF port the near share of [5000, 15000) is within
    2 points of RATE_N / (RATE_N + RATE_F) for (2, 1) and (1, 2) and the port is >= 97 % used;
    with one stream off the other class gets >= 1212.5 sectors per port."""
    for rn, rf in ((2, 1), (1, 2)):
        res = bench("C2", "qos", seed, tmp_path, f"qos_{rn}{rf}", QOS_RATE=f"{rn},{rf}")
        for j, (n, f) in res["shares"].items():
            share = n / (n + f)
            print(f"RATE {rn}/{rf} port {j}: near {n} far {f} share {share:.4f}")
            assert abs(share - rn / (rn + rf)) <= 0.02, (j, n, f)
            assert n + f >= 0.97 * OFF_BEATS, (j, n, f)
    for near, far in ((1, 0), (0, 1)):
        res = bench("C2", "qos", seed, tmp_path, f"qos_alone{near}{far}", QOS_NEAR=near,
                    QOS_FAR=far)
        for j, (n, f) in res["shares"].items():
            print(f"alone near={near} far={far} port {j}: near {n} far {f}")
            assert (n if near else f) >= 0.97 * OFF_BEATS, (j, n, f)
