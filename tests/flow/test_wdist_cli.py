"""`gpublocks run wdist`: stimulus schema with one-line errors (exit 2), the golden model alone,
and a random stimulus on the RTL (small default build) matching the golden model's
timing-independent outcome (docs/wdist.md, "CLI").

The benchmark (`gpublocks bench wdist`, 64..128 SMs) is not run here."""

import json
import random

import pytest

GOOD = {"grids": [{"grid_id": 1, "level": "PLAIN", "grid": [10, 2, 1], "warps": 4},
                  {"grid_id": 2, "level": "GPC", "mode": "MC", "grid": [8, 1, 1], "in": [2, 1, 1]}]}

BAD = [
    ('{}', "grids: expected a non-empty list"),
    ('{"grids": []}', "grids: expected a non-empty list"),
    ('{"grids": [{"level": 1}]}', "grids[0]: missing field 'grid'"),
    ('{"grids": [{"grid": [4, 1]}]}', "grids[0].grid: expected a list of 3 integers"),
    ('{"grids": [{"grid": [4, 1, 1], "level": "WARP"}]}', "grids[0].level: 'WARP' is not one of"),
    ('{"grids": [{"grid": [4, 1, 1], "mode": 2}]}', "grids[0]: cmd.mode: 2 does not fit 1 bits"),
    ('{"grids": [{"grid": [4, 1, 1], "in": [64, 1, 1]}]}', "grids[0]: cmd.in_x: 64 does not fit"),
    ('{"grids": [{"grid": [4, 1, 1], "warps": -1}]}', "grids[0].warps: -1 is outside 0..None"),
    ('{"grids": [{"grid": [4, 1, 1], "colour": 3}]}', "grids[0].colour: unknown field"),
    ('{"grids": [{"grid": [4, 1, 1]}, {"grid": [5, 1, 1], "grid_id": 0, "warps": 2}]}',
     "grids[1].grid_id: 0 is reused with another shape"),
    ('{"grids": [{"grid": [1, 1, 1]}], "cfg": [{"sm": 8}]}', "cfg[0].sm: 8 is outside 0..7"),
    ('{"grids": [{"grid": [1, 1, 1]}], "cfg": [{"slot_cap": 1}]}', "cfg[0]: expected an object with 'sm'"),
    ('{"grids": [{"grid": [1, 1, 1]}], "cfg": [{"sm": 0, "speed": 1}]}', "cfg[0].speed: unknown field"),
    ('{"grids": [{"grid": [1, 1, 1]}], "sm": {"latency": [9, 2]}}', "sm.latency: lo 9 > hi 2"),
    ('{"grids": [{"grid": [1, 1, 1]}], "sm": {"hold": 1}}', "sm.hold: expected true or false"),
    ('{"grids": [{"grid": [1, 1, 1]}], "ready": 0}', "ready: expected a probability"),
    ('{"grids": [{"grid": [1, 1, 1]}], "max_cycles": 0}', "max_cycles: 0 is outside 1.."),
    ('{"grids": [{"grid": [1, 1, 1]}], "timing": 1}', "stimulus.timing: unknown field"),
    ('{"grids": [{"grid": [1, 1, 1]}], "params": {"N_GPC": 17}}', "N_GPC must be an integer in 1..16"),
    ('{"grids": [{"grid": [1, 1, 1]}], "params": {"SM_PER_GPC": [8, 6]}}',
     "params.SM_PER_GPC: the flow builds GPCs of equal size"),
    ('{"grids": [{"grid": [1, 1, 1]}], "params": {"DISTRIBUTOR": "fifo"}}',
     "params.DISTRIBUTOR: 'fifo' is not 'shadow' or 'legacy'"),
    ('{"grids": [{"grid": [1, 1, 1]}], "params": {"CPC_PER_GPC": 1}}', "params.CPC_PER_GPC"),
    ('{"grids": [{"grid": [1, 1, 1]}], "params": {"LANES": 2}}', "no parameter 'LANES'"),
    ('{"grids": [{"grid": [1, 1, 1]}], "params": [2]}', "params: expected an object"),
    ('[1]', "the top level must be a JSON object"),
]


@pytest.mark.req("WD-I1", "WD-I2")
@pytest.mark.parametrize("text, words", BAD)
def test_run_wdist_bad_stimulus_one_line_exit_2(cli, tmp_path, build, text, words):
    path = tmp_path / "stim.json"
    path.write_text(text)
    code, out, err = cli("run", "wdist", str(path), "--sim", "golden")
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    assert "Traceback" not in out + err
    assert not (build / "run" / "wdist.json").exists()


def test_run_wdist_golden(cli, tmp_path, build):
    """`--sim golden`: the golden model alone; every grid launched in full (a permutation)."""
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD))
    out_file = tmp_path / "result.json"
    code, out, err = cli("run", "wdist", str(path), "--sim", "golden", "--out", str(out_file))
    assert code == 0, out + err
    record = json.loads(out_file.read_text())
    g = record["golden"]
    assert record["passed"] and record["rtl"] is None and g["invariants"] == "passed"
    assert g["grids"]["1"]["ctaids"] == sorted([x, y, 0] for x in range(10) for y in range(2))
    assert g["grids"]["2"]["cgas_completed"] == 4 and g["quiescent"] and g["err"] == []


def test_compare_reports_every_difference():
    """The comparison is not vacuous: changed ctaids, CGA counts, err beats, quiescence and a
    failed RTL invariant are each reported."""
    from sim import registry
    from sim.blocks import wdist as adapter
    block = registry.get("wdist")
    params, stim = adapter.parse(json.loads(json.dumps(GOOD)), block)
    want = adapter.golden(params, stim)
    assert adapter.compare(want, json.loads(json.dumps(want))) == []
    for mutate, words in [
        (lambda r: r["grids"]["1"]["ctaids"].pop(), "grid 1: launched ctaids differ"),
        (lambda r: r["grids"]["1"]["ctaids"].append([0, 0, 0]), "1 extra or duplicated"),
        (lambda r: r["grids"]["2"].update(cgas_completed=3), "grid 2: cgas_completed RTL 3"),
        (lambda r: r["err"].append([5, 1, 0]), "err beats"),
        (lambda r: r.update(quiescent=False), "quiescent at the end"),
        (lambda r: r.update(invariants="WD-V4: interleave"), "invariants (RTL): WD-V4"),
        (lambda r: r["grids"].pop("2"), "grid 2: accepted by the golden model only"),
    ]:
        got = json.loads(json.dumps(want))
        mutate(got)
        problems = adapter.compare(want, got)
        assert any(words in x for x in problems), (words, problems)


@pytest.mark.req("WD-V8", "WD-V9", "WD-V10", "WD-V15")
@pytest.mark.parametrize("legacy", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_run_wdist_rtl_matches_golden(cli, tmp_path, build, seed, legacy, monkeypatch):
    """The demo's random stimulus (PLAIN, GPC and GPU grids, LB and MC, a disabled SM and a
    reduced SM; random stub latency; random back-pressure from the printed seed) through
    `gpublocks run wdist` on the RTL (2 GPCs x 4 SMs; the legacy build is a slow test): launched ctaids per
    grid, CGAs completed, err beats and quiescence equal the golden model's, and the invariant
    checkers pass on the RTL's port streams."""
    from sim import registry
    from sim.blocks import wdist as adapter
    block = registry.get("wdist")
    params = dict(block.defaults(), LEGACY=legacy)
    stim = adapter.demo_stimulus(params, random.Random(seed))
    rtl = _run_rtl(cli, tmp_path, stim, seed, monkeypatch)
    assert rtl["invariants"] == "passed" and rtl["quiescent"] and not rtl["timeout"]
    assert sum(g["ctas"] for g in rtl["grids"].values()) > 0


def _run_rtl(cli, tmp_path, stim, seed, monkeypatch):
    """``gpublocks run wdist`` of ``stim`` on the RTL: it must pass; returns the RTL outcome."""
    path = tmp_path / "stim.json"
    path.write_text(json.dumps(stim))
    out_file = tmp_path / "result.json"
    monkeypatch.setenv("GPUBLOCKS_SEED", str(seed))
    code, out, err = cli("run", "wdist", str(path), "--out", str(out_file))
    assert code == 0, out + err
    record = json.loads(out_file.read_text())
    assert record["passed"], record["mismatches"][:10]
    return record["rtl"]


HOLD = {"cfg": [{"sm": 1, "slot_cap": 2}, {"sm": 2, "warp_cap": 65}],
        "grids": [{"grid_id": 1, "level": "GPC", "grid": [8, 1, 1], "in": [8, 1, 1], "warps": 64},
                  {"grid_id": 2, "level": 6, "grid": [2, 1, 1]},
                  {"grid_id": 3, "level": "PLAIN", "grid": [0, 1, 1]},
                  {"grid_id": 4, "level": "GPU", "mode": "MC", "grid": [4, 2, 1], "in": [2, 1, 1],
                   "out": [2, 1, 1]},
                  {"grid_id": 5, "level": "PLAIN", "grid": [70, 1, 1]}],
        "sm": {"hold": True}, "max_cycles": 3000, "ready": 0.7}


@pytest.mark.req("WD-E1", "WD-E4", "WD-E5", "WD-E10", "WD-V8")
def test_run_wdist_rtl_errors_and_holding_stubs(cli, tmp_path, build, seed, monkeypatch):
    """Errors and a machine that fills up (stubs never complete) on the RTL: CFG_BAD for a
    warp_cap above WARP_CAP, NEVER_FITS for a 64-warp 8-CTA GPC CGA on 4-SM GPCs, BAD_LEVEL,
    BAD_DIMS; a GPU CGA grid launched in full; a plain grid of 70 CTAs of which the 8 SMs hold
    50 (one SM at slot_cap 2), the rest waiting. Everything equals the golden model."""
    rtl = _run_rtl(cli, tmp_path, HOLD, seed, monkeypatch)
    assert rtl["err"] == [[1, 3, 0], [4, 2, 0], [5, 1, 0], [10, 0, 2]]
    assert rtl["grids"]["4"]["ctas"] == 8 and rtl["grids"]["5"]["ctas"] == 50
    assert rtl["invariants"] == "passed" and not rtl["quiescent"]
