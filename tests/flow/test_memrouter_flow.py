"""`gpublocks run memrouter` and `gpublocks bench memrouter` (sim/blocks/memrouter.py): stimulus
errors in one line with exit status 2, the golden router alone (direct path, errors, poison,
migration commands, FLUSH), what the RTL refuses while the line path and the engine are not
built, the comparison, an RTL run against the golden router, and the bench JSON / plot
assembly (the stimulus schema is in docs/memrouter.md)."""

import json
import random

import pytest

from sim import registry
from sim.blocks import memrouter as adapter
from sim.errors import UsageError

BLOCK = registry.get("memrouter")
R = {"requests": [{"addr": 0, "len": 0}]}


def _stim(**extra):
    return json.dumps({**R, **extra})


BAD = [
    ('[1]', "the top level must be a JSON object"),
    ('{}', "stimulus: missing field 'requests'"),
    ('{"requests": []}', "requests: expected a list of 1..20000 requests"),
    ('{"requests": [{"len": 0}]}', "requests[0]: missing field 'addr'"),
    ('{"requests": [{"addr": 0, "len": 16}]}', "requests[0].len: 16 is outside 0..15"),
    ('{"requests": [{"addr": "0xZZ", "len": 0}]}', "requests[0].addr: '0xZZ' is not an integer"),
    ('{"requests": [{"addr": 0, "len": 0, "port": 1}]}', "requests[0].port: 1 is outside 0..0"),
    ('{"requests": [{"addr": 0, "len": 0, "colour": 1}]}', "requests[0]: unknown field 'colour'"),
    ('{"requests": [{"addr": 0, "len": 1, "wr": 1, "data": ["0x1"]}]}',
     "requests[0].data: expected a list of 2 values"),
    ('{"requests": [{"addr": 0, "len": 0, "data": ["0x1"]}]}',
     "requests[0]: data and be belong to writes"),
    ('{"requests": [{"addr": 0, "len": 0, "wr": 1, "be": ["0x1ffffffff"]}]}',
     "requests[0].be[0]: 8589934591 is outside"),
    (_stim(params={"CFG": "CFG-Q"}), "params.CFG: 'CFG-Q' is not one of"),
    (_stim(params={"CFG": 7}), "CFG must be an integer in 0..4"),
    (_stim(params={"N_PROC": 9}), "N_PROC must be an integer in 1..4"),
    (_stim(params={"ROB_BEATS": 8}), "ROB_BEATS must be an integer in 16.."),
    (_stim(params={"LOG2G": 8}), "LOG2G must be an integer in 9..16"),
    (_stim(params={"NUM_LINES": 17}), "NUM_LINES must be an integer in 4..16"),
    (_stim(params={"PT_ENTRIES": 512}), "params: unknown field 'PT_ENTRIES'"),
    (_stim(config={"MODEE": 1}), "config.MODEE: unknown configuration field"),
    (_stim(config={"MODE": 2}), "config.MODE: 2 is outside 0..1"),
    (_stim(config={"T_ACC": 0}), "config.T_ACC: 0 is outside 1..255"),
    (_stim(config={"SLOTS": "H,X1"}), "config.SLOTS: slot 'X1'"),
    (_stim(config={"NEAR_FRAMES": 113}), "config: PT_INIT refuses this configuration (MR-E12)"),
    (_stim(config={"QOS": [{"port": 4, "RATE_N": 1}]}), "config.QOS[0].port: 4 is outside 0..3"),
    (_stim(pt=[{"ppn": 1024, "state": "UNMAPPED"}]), "pt[0].ppn: 1024 is outside 0..1023"),
    (_stim(pt=[{"ppn": 1, "state": "MIGRATING"}]), "pt[0].state: 'MIGRATING' is not one of"),
    (_stim(pt=[{"ppn": 1, "pte": 2}]), "pt[0].state: only UNMAPPED (0) and STABLE (1)"),
    (_stim(pt=[{"ppn": 1, "state": "STABLE", "port": 0, "frame": 64}]),
     "pt[0]: port 0 frame 64 is outside the memory"),
    (_stim(poison=[{"port": 0, "dev": 3}]), "poison[0].dev: 0x3 is not sector (32-byte) aligned"),
    (_stim(poison=[{"port": 0, "dev": 32 * k} for k in range(5)]),
     "poison[4]: more than 4 poisoned sectors on port 0"),
    (_stim(poison=[{"addr": 0, "port": 0}]), "poison[0]: give either addr"),
    (_stim(mig_cmds=[{"op": "MOVE", "ppn": 1}]), "mig_cmds[0].op: 'MOVE' is not one of"),
    (_stim(mig_cmds=[{"op": 1}]), "mig_cmds[0]: missing field 'ppn'"),
    (_stim(flush=5), "flush: expected a list of cycles"),
    (_stim(ready=0), "ready: expected a probability in (0, 1]"),
    (_stim(gap=1), "gap: expected a probability in [0, 1)"),
    (_stim(max_cycles=0), "max_cycles: 0 is outside 1.."),
    (_stim(timing=1), "stimulus.timing: unknown field"),
]


@pytest.mark.parametrize("text, words", BAD)
def test_run_memrouter_bad_stimulus_one_line_exit_2(cli, tmp_path, build, text, words):
    path = tmp_path / "stim.json"
    path.write_text(text)
    code, out, err = cli("run", "memrouter", str(path), "--sim", "golden")
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    assert "Traceback" not in out + err
    assert not (build / "run" / "memrouter.json").exists()


def _golden(cli, tmp_path, stim):
    path = tmp_path / "stim.json"
    path.write_text(json.dumps(stim))
    out_file = tmp_path / "result.json"
    code, out, err = cli("run", "memrouter", str(path), "--sim", "golden", "--out", str(out_file))
    assert code == 0, out + err
    record = json.loads(out_file.read_text())
    assert record["passed"] and record["rtl"] is None
    return record


@pytest.mark.req("MR-E1", "MR-E4", "MR-E6", "MR-F3", "MR-F44")
def test_run_memrouter_golden_demo(cli, tmp_path, build, seed):
    """The demo stimulus on the golden router: every request answered once per port in
    order, each error kind present, the counters consistent with the responses."""
    stim = adapter.demo_stimulus(BLOCK.defaults(), random.Random(seed))
    g = _golden(cli, tmp_path, stim)["golden"]
    (resp,) = g["responses"]
    assert [r["id"] for r in resp] == [q.get("id", k & 0xFF)
                                        for k, q in enumerate(stim["requests"])]
    errs = [e for r in resp for e in r["err"]]
    assert {1, 2, 3} <= set(errs)
    c = g["counters"]
    assert c["PRSP_BEATS"] == len(errs) and c["ERR_POISON"] == errs.count(3)
    assert c["ERR_RANGE"] == 1 and c["ERR_UNMAPPED"] == 1
    assert sum(m[3] for m in g["mreqs"]) == sum(sum(p.values()) for p in g["ports"])
    # FAR_ALLOC = 1 (the reset value): far pages get lines, nothing migrates
    assert {e["code"] for e in g["events"]} <= {"ALLOC", "EVICT"} and g["pt_writes"] == [0]
    assert any(e["code"] == "ALLOC" for e in g["events"])


@pytest.mark.req("MR-F19", "MR-F47")
def test_run_memrouter_golden_migration_commands_and_flush(cli, tmp_path, build):
    """`--sim golden` runs what an RTL run cannot be compared on exactly: an explicit PROMOTE
    of a far page into the reserved near frame (NS far reads + NS near writes, MR-GV14), a
    rejected SWAP and a FLUSH, with FAR_ALLOC = 1."""
    p, cfg = adapter.mr_config()
    far = cfg.NEAR_FRAMES - 1                  # first far page with NEAR_RESERVE = 1
    stim = {"config": {"FAR_ALLOC": 1, "NEAR_RESERVE": 1},
            "requests": [{"addr": hex((far + 1) << p.LOG2G), "len": 7},
                         {"addr": hex((far << p.LOG2G) + 256), "len": 1, "wr": 1, "at": 10}],
            "mig_cmds": [{"op": "PROMOTE", "ppn": far, "at": 5},
                         {"op": "SWAP", "ppn": 0, "victim": 1, "at": 6}],
            "flush": [20]}
    g = _golden(cli, tmp_path, stim)["golden"]
    assert [c["mig_status"] for c in g["mig_cmds"]] == ["DONE", "REJ_STATE"]
    codes = [e["code"] for e in g["events"]]
    assert codes[:1] == ["ALLOC"] and "DONE" in codes and "REJECT" in codes and "EVICT" in codes
    assert str(far) in g["pt_changes"] and g["counters"]["MIG_DONE"] == 1
    mig = [m for m in g["mreqs"] if m[1] == "M"]
    assert sum(m[3] for m in mig if not m[4]) == p.NS      # the walker reads the whole page
    assert sum(m[3] for m in mig if m[4]) == p.NS


@pytest.mark.parametrize("extra, words", [
    ({"config": {"EN_ACC": 1}}, "config.EN_ACC: automatic migration"),
    ({"mig_cmds": [{"op": "PROMOTE", "ppn": 120}]}, "mig_cmds: an RTL run with migration"),
    ({"flush": [0]}, "flush: a FLUSH between requests"),
])
def test_run_memrouter_rtl_refuses_timing_dependent_runs(cli, tmp_path, build, extra, words):
    """One line, exit status 2, no build: ``rtl_unsupported`` is checked before anything runs."""
    path = tmp_path / "stim.json"
    path.write_text(json.dumps({**R, **extra}))
    code, out, err = cli("run", "memrouter", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    assert "Traceback" not in out + err
    params, stim = adapter.parse(json.loads(path.read_text()), BLOCK)
    assert words in adapter.rtl_unsupported(stim)
    assert adapter.rtl_unsupported(adapter.parse(dict(R), BLOCK)[1]) is None


def _compare_reports_every_difference(seed):
    params, stim = adapter.parse(adapter.demo_stimulus(BLOCK.defaults(), random.Random(seed)),
                                 BLOCK)
    want = adapter.golden(params, stim)
    assert adapter.compare(want, json.loads(json.dumps(want))) == []
    # a read whose beat 0 has data and err OK, so that both mutations below change it (a
    # poisoned direct read keeps its data and has err E_POISON already, MR-E6)
    read = next(n for n, r in enumerate(want["responses"][0]) if not r["wr"] and
                r["data"][0] != "0" * 64 and r["err"][0] == 0)
    for mutate, words in [
        (lambda r: r["responses"][0][read]["data"].__setitem__(0, "1" * 64), "data of beat 0"),
        (lambda r: r["responses"][0][read]["err"].__setitem__(0, 3), "err of beat 0"),
        (lambda r: r["responses"][0][1].update(id=300), "response 1: id RTL 300"),
        (lambda r: r["responses"][0].pop(), "responses from the RTL"),
        (lambda r: r["mreqs"].pop(), "memory requests [port, class, addr, sectors, wr] differ"),
        (lambda r: r["mreqs"].append([0, "M", 0, 1, 0]), "1 RTL-only"),
        (lambda r: r["counters"].update(SECT_HBM=-1), "counter SECT_HBM: RTL -1"),
        (lambda r: r["ports"][0].update(RD_N=-1), "port 0 RD_N: RTL -1"),
        (lambda r: r["events"].append({"code": "ALLOC", "line": 0, "ppn": 0, "arg": 0}),
         "events differ"),
        (lambda r: r["written"].setdefault("1", {}).update({"ffffe0": "0" * 64}),
         "written by the RTL only"),
        (lambda r: r["pt_writes"].append(1), "PT_DATA write err"),
    ]:
        got = json.loads(json.dumps(want))
        mutate(got)
        problems = adapter.compare(want, got)
        assert any(words in x for x in problems), (words, problems)


def test_compare_reports_every_difference(seed):
    _compare_reports_every_difference(seed)


@pytest.mark.parametrize("fixed_seed", [548904142])   # its first data read was poisoned
def test_compare_reports_every_difference_regression(fixed_seed):
    _compare_reports_every_difference(fixed_seed)


@pytest.mark.req("MR-F1", "MR-F4", "MR-F44", "MR-E5", "MR-E6", "MR-F52")
# (the two-port case needs a Verilator build of its own: slow, `pytest -m slow`)
@pytest.mark.parametrize("changes", [
    {}, pytest.param({"CFG": 0, "N_PROC": 2}, marks=pytest.mark.slow)], ids=["B", "A_2ports"])
def test_run_memrouter_rtl_matches_golden(cli, tmp_path, build, seed, monkeypatch, changes):
    """The demo's random stimulus (reads and partial writes over HBM, carve-out and far pages,
    a page-crossing read, E_RANGE, E_UNMAPPED, a poisoned sector; random preq gaps and prsp
    back-pressure) through `gpublocks run memrouter` on the default RTL build and on CFG-A with
    two processor ports (requests offered back to back on both: the acceptance order differs
    from the golden order wherever no common sector forbids it): responses, memory requests,
    counters, port beat counters and written sectors equal the golden router's."""
    stim = adapter.demo_stimulus(dict(BLOCK.defaults(), **changes), random.Random(seed))
    if changes:
        for q in stim["requests"]:
            q["at"] //= 4
    stim["gap"] = 0.2
    path = tmp_path / "stim.json"
    path.write_text(json.dumps(stim))
    out_file = tmp_path / "result.json"
    monkeypatch.setenv("GPUBLOCKS_SEED", str(seed))
    code, out, err = cli("run", "memrouter", str(path), "--out", str(out_file))
    assert code == 0, out + err
    record = json.loads(out_file.read_text())
    assert record["passed"], record["mismatches"][:10]
    rtl = record["rtl"]
    assert rtl["cycles"] > 0
    assert sum(len(r) for r in rtl["responses"]) == len(stim["requests"])
    assert sorted(rtl["order"]) == list(range(len(stim["requests"])))


def test_bench_json_keys_and_plot(monkeypatch, tmp_path):
    """The bench figures from canned testbench results (the RTL runs are those of
    tests/rtl/test_memrouter_bench.py, _mig.py and _trace.py): every key of issue #7 present
    and computed from the results, and the share plot written."""
    def fake(build, testcase, seed, sim, label, tb=None, **env):
        if testcase == "promote_time":
            return {"mig_cycles": 1378 if env.get("MIG_OUTSTANDING") == 16 else 1978,
                    "proc_link_extra_beats": 0, "far_read_bytes": 4096,
                    "near_write_bytes": 4096}
        if testcase == "program_trace":
            f = 0.5 if env["MIGRATE"] else 0.25
            return {"F_HBM": f, "F_NEARM": 0.0, "F_LINE": 0.9 - f, "F_FILL": 0.1, "F_FARD": 0.0,
                    "migrations": 3 * env["MIGRATE"], "requests": 100, "accesses": 90,
                    "cycles": 1000}
        if testcase == "streaming":
            bw = {"B": 0.875, "A2": 0.75}[build] if "RUN_CFG" not in env else 0.5
            return {"beats": int(bw * 10000), "bandwidth": bw, "_seconds": {}}
        near, far = env.get("QOS_NEAR", 1), env.get("QOS_FAR", 1)
        rn, rf = (int(x) for x in env.get("QOS_RATE", "2,1").split(","))
        n = 1250 * rn // (rn + rf) if far else 1250
        shares = {str(j): (n if near else 0, (1250 - n) if near else 1248) for j in (1, 2, 3)}
        out = {"shares": shares, "_seconds": {}}
        if "QOS_SAMPLE" in env:
            out["samples"] = {str(j): {"near": [40] * 30, "far": [22] * 30} for j in (1, 2, 3)}
        return out

    monkeypatch.setattr(adapter, "_bench_tb", fake)
    fig = adapter.bench(BLOCK, 1)
    for key in ("stream_bw_fraction_512_256", "stream_bw_fraction_512_384",
                "speedup_vs_hbm_512_256", "speedup_vs_hbm_512_384", "qos_near_share_error_pp",
                "work_conserving_fraction"):
        assert isinstance(fig[key], float), key
    assert fig["speedup_vs_hbm_512_384"] == 1.75 and fig["stream_bw_fraction_512_256"] == 1.0
    assert fig["work_conserving_fraction"] == round(1248 / 1250, 4)
    assert (fig["migration_proc_link_beats"], fig["promotion_far_read_bytes"],
            fig["promotion_near_write_bytes"], fig["promotion_cycles"],
            fig["promotion_cycles_outstanding16"]) == (0, 4096, 4096, 1978, 1378)
    assert (fig["trace_hbm_fraction_static"], fig["trace_hbm_fraction_migrating"]) == (0.25, 0.5)
    assert fig["trace_migrating"]["migrations"] == 3
    assert "builds" in fig["config"]
    png = tmp_path / "memrouter.png"
    adapter.plot(json.loads(json.dumps(fig)), png)
    assert png.stat().st_size > 1000


def test_parse_errors_are_usage_errors():
    """parse() raises UsageError (never KeyError / ValueError) on a wrong-typed field."""
    for bad in ({"requests": "x"}, {"requests": [1]}, {**R, "config": []},
                {**R, "pt": {}}, {**R, "poison": [3]}, {**R, "mig_cmds": [{"op": None}]}):
        with pytest.raises(UsageError):
            adapter.parse(bad, BLOCK)
