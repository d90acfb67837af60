"""Requirement traceability: every ID in the specs, the tests that cite it, JSON form."""

import json

import pytest

from sim import vplan
from sim.cli import main
from sim.errors import UsageError
from sim.paths import specs_dir

SPEC_TEXT = """# demo spec
- TQ-F45 MUST: arbiter. See also TQ-GV16 and TQ-F45 again.
- DFP-P2, TMA-GV12; WD-C3 | MR-E1 and MR-I7.
- Not IDs: XTQ-F1, TQ-X1, TQ-F, tq-f1, TQ-F45a.
- Ranges: DFP-GV6 … GV8, MR-GV2..GV3.
"""

TEST_TEXT = """
import pytest

@pytest.mark.req("TQ-F45", "MR-E1")
def test_one():
    pass

@pytest.mark.req("TQ-F45")
@pytest.mark.parametrize("k", [1, 2])
def test_two(k):
    pass

@pytest.mark.req("TQ-F999")
def test_cites_unknown():
    pass
"""


@pytest.fixture
def fake_tree(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "demo.md").write_text(SPEC_TEXT)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_fake.py").write_text(TEST_TEXT)
    return specs, tests


def test_ids_follow_the_regular_expression(fake_tree):
    specs, _ = fake_tree
    ids = vplan.spec_requirements(specs)["demo.md"]
    assert ids == ["TQ-F45", "TQ-GV16", "DFP-P2", "TMA-GV12", "WD-C3", "MR-E1", "MR-I7",
                   "DFP-GV6", "DFP-GV7", "DFP-GV8", "MR-GV2", "MR-GV3"]


def test_citations_map_ids_to_node_ids(fake_tree):
    specs, tests = fake_tree
    _, table, unknown = vplan.vplan(specs, tests)
    assert len(table["TQ-F45"]) == 3 and all("test_fake.py::test_" in t for t in table["TQ-F45"])
    assert len(table["MR-E1"]) == 1 and table["MR-E1"][0].endswith("test_fake.py::test_one")
    assert table["TQ-GV16"] == [] and table["DFP-P2"] == []
    assert list(unknown) == ["TQ-F999"]


def test_vplan_json_on_the_real_suite(capsys, tmp_path):
    """--json covers every ID of the real specs; the arbiter's IDs are cited."""
    if specs_dir() is None:
        with pytest.raises(UsageError, match="no specification folder"):
            vplan.spec_requirements()
        return
    assert main(["vplan", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    all_ids = {i for ids in vplan.spec_requirements().values() for i in ids}
    assert set(table) == all_ids and len(all_ids) > 100
    for req in ("TQ-F45", "TQ-I12", "TQ-V16", "TQ-GV16"):
        assert table[req], req
    assert all(isinstance(v, list) for v in table.values())
