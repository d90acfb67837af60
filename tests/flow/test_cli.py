"""The gpublocks CLI: every command exists, bad input gives one line and exit status 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest


COMMANDS = ["list", "verilog", "lint", "run", "regress", "bench", "fpga", "vplan"]


def test_console_script_help_lists_every_command():
    script = Path(sys.executable).parent / "gpublocks"
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    for command in COMMANDS:
        assert f"    {command} " in proc.stdout, command


def test_list_shows_arbiter_and_its_parameters(cli):
    code, out, _ = cli("list")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("arbiter "))
    assert "hw.common.arbiter:RoundRobinArbiter" in row and "n=4 (1..1024)" in row
    row = next(line for line in out.splitlines() if line.startswith("memrouter "))
    assert "sim.blocks.memrouter:build_top" in row and "CFG=1 (0..4)" in row


def test_list_json(cli):
    code, out, _ = cli("list", "--json")
    rows = {r["block"]: r for r in json.loads(out)}
    assert code == 0 and rows["arbiter"]["status"] == "ready"


def test_verilog_all_and_lint_all(cli, build):
    code, out, _ = cli("verilog", "--all")
    assert code == 0
    names = ("arbiter", "skid", "mwfifo", "memfifo", "prefix_popcount", "lzc", "dfp", "dfp_quantizer",
             "dfp_dequantizer", "dfp_downconverter", "trackq", "tma", "wdist", "memrouter")
    for name in names:
        text = (build / "verilog" / f"{name}.v").read_text()
        assert f"module {name}(" in text
    code, out, err = cli("lint", "--all")
    assert code == 0, out + err
    assert out.count("clean") == len(names)


def test_verilog_parameter_override_names_the_module(cli, build):
    code, out, _ = cli("verilog", "arbiter", "-p", "n=7")
    assert code == 0
    assert "module arbiter_n7(" in (build / "verilog" / "arbiter_n7.v").read_text()


@pytest.fixture
def planned_block(monkeypatch):
    """A planned block in the registry (every real block is built now)."""
    from sim import registry
    block = registry.Block(name="planned_x", kind="block", spec="x.md", issue=99,
                           status="planned (issue #99)", summary="not built")
    monkeypatch.setitem(registry.REGISTRY, "planned_x", block)
    return block


@pytest.mark.parametrize("argv, words", [
    (["verilog", "planned_x"], "issue #99"),
    (["run", "planned_x", "x.json"], "issue #99"),
    (["fpga", "planned_x"], "does not support 'planned_x' (planned (issue #99))"),
    (["bench", "planned_x"], "does not support"),
])
def test_planned_block_is_refused(cli, planned_block, argv, words):
    code, out, err = cli(*argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and words in err, err


@pytest.mark.parametrize("argv, words", [
    (["verilog", "nosuch"], "unknown block"),
    (["verilog"], "name a block or use --all"),
    (["verilog", "arbiter", "-p", "n=0"], "n must be an integer in 1..1024"),
    (["verilog", "arbiter", "-p", "m=3"], "no parameter 'm'"),
    (["verilog", "arbiter", "-p", "n=x"], "not an integer"),
    (["verilog", "arbiter", "-p", "n"], "NAME=VALUE"),
    (["run", "memrouter", "x.json"], "cannot read stimulus file"),
    (["fpga", "arbiter", "--board", "nosuch"], "unknown board"),
    (["bench", "lzc"], "does not support"),
    (["nosuch"], "invalid choice"),
    (["run", "arbiter"], "required"),
])
def test_bad_arguments_give_one_line_and_status_2(cli, argv, words):
    code, out, err = cli(*argv)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and words in err, err
    assert "Traceback" not in out + err


def test_regress_of_a_block_without_rtl_tests_is_refused(cli, monkeypatch):
    """Every registered block has RTL tests today, so the refusal is checked with none found."""
    import sim.regress
    monkeypatch.setattr(sim.regress, "rtl_test_files", lambda block: [])
    code, out, err = cli("regress", "arbiter")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "does not support" in err, err


BAD_STIMULI = [
    ("not json", "not valid JSON"),
    ("[1, 2]", "top level must be a JSON object"),
    ("{}", "missing field 'cycles'"),
    ('{"cycles": []}', "needs 1..1000000 cycles"),
    ('{"cycles": [{"advance": 1}]}', "cycles[0]: missing field 'req'"),
    ('{"cycles": [{"req": "11"}]}', "cycles[0].req: '11' is not 4 binary digits"),
    ('{"cycles": [{"req": 16}]}', "cycles[0].req: 16 is outside 0..15"),
    ('{"cycles": [{"req": 1}, {"req": 1, "advance": 2}]}', "cycles[1].advance: 2 is outside 0..1"),
    ('{"cycles": [{"req": 1, "grant": 1}]}', "cycles[0]: unknown field 'grant'"),
    ('{"cycles": [{"req": true}]}', "cycles[0].req: expected an integer"),
    ('{"params": {"n": 2000}, "cycles": [{"req": 1}]}', "n must be an integer in 1..1024"),
    ('{"params": [4], "cycles": [{"req": 1}]}', "stimulus.params: expected dict"),
]


@pytest.mark.parametrize("text, words", BAD_STIMULI)
def test_run_bad_stimulus_file(cli, tmp_path, build, text, words):
    path = tmp_path / "stim.json"
    path.write_text(text)
    code, out, err = cli("run", "arbiter", str(path), "--sim", "golden")
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    assert not (build / "run" / "arbiter.json").exists()


def test_run_missing_stimulus_file(cli, tmp_path):
    code, _, err = cli("run", "arbiter", str(tmp_path / "none.json"))
    assert code == 2 and "cannot read stimulus file" in err


def test_run_bad_stimulus_subprocess_has_no_traceback(tmp_path):
    path = tmp_path / "stim.json"
    path.write_text('{"cycles": [{"req": "2"}]}')
    script = Path(sys.executable).parent / "gpublocks"
    proc = subprocess.run([str(script), "run", "arbiter", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "cycles[0].req" in proc.stderr


@pytest.mark.req("TQ-GV16")
@pytest.mark.parametrize("sim", ["golden", "verilator"])
def test_run_tq_gv16_stimulus(cli, tmp_path, build, sim):
    """The spec's TQ-GV16 stimulus through `gpublocks run`: grants as the spec prints them."""
    from golden.common.arbiter_vectors import TQ_GV16
    path = tmp_path / "gv16.json"
    path.write_text(json.dumps({"params": {"n": 4},
                                "cycles": [{"req": r, "advance": a} for r, a, _, _ in TQ_GV16]}))
    out_file = tmp_path / "result.json"
    code, out, err = cli("run", "arbiter", str(path), "--sim", sim, "--out", str(out_file))
    assert code == 0, out + err
    result = json.loads(out_file.read_text())
    assert result["passed"] and result["mismatch_count"] == 0
    observed = result["rtl"] if sim != "golden" else result["golden"]
    got = [c["grant_idx"] if c["valid"] else None for c in observed["cycles"]]
    assert got == [row[2] for row in TQ_GV16]


def test_run_waves_writes_a_waveform(cli, tmp_path, build):
    path = tmp_path / "stim.json"
    path.write_text(json.dumps({"cycles": [{"req": k % 16} for k in range(20)]}))
    code, out, err = cli("run", "arbiter", str(path), "--waves")
    assert code == 0, out + err
    from sim.simulators import fst_supported
    waves = build / "waves" / ("arbiter.fst" if fst_supported() else "arbiter.vcd")
    assert waves.exists() and waves.stat().st_size > 0
    if waves.suffix == ".vcd":
        assert "$var" in waves.read_text() and "grant_idx" in waves.read_text()
