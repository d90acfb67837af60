"""sim.objcache: runtime objects are reused only when the preprocessed source and flags match."""

import os
import stat
import sys

from sim import objcache

# A stand-in compiler: "-E" prints the source, "-c -o OUT SRC" writes OUT (and OUT's .d when
# -MMD is given) and appends a line to a log, so the test can count real compiles.
FAKE_CXX = """\
import sys, pathlib
args = sys.argv[1:]
src = [a for a in args if a.endswith(".cpp")][0]
text = pathlib.Path(src).read_text()
if "-E" in args:
    sys.stdout.write(text)
    sys.exit(0)
out = args[args.index("-o") + 1]
pathlib.Path(out).write_text("obj:" + " ".join(a for a in args if a.startswith("-O")) + ":" + text)
if "-MMD" in args:
    pathlib.Path(out).with_suffix(".d").write_text(out + ": " + src + "\\n")
with open(pathlib.Path(__file__).with_name("compiles.log"), "a") as log:
    log.write(out + "\\n")
"""


def _setup(tmp_path):
    tool = tmp_path / "fakecxx"
    (tmp_path / "fakecxx.py").write_text(FAKE_CXX)
    tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{tmp_path / "fakecxx.py"}" "$@"\n')
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    src = tmp_path / "runtime.cpp"
    src.write_text("int f() { return 1; }\n")
    work = tmp_path / "work"
    work.mkdir()
    return str(tool), src, work


def _compiles(tmp_path):
    log = tmp_path / "compiles.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _compile(cache, tool, src, work, out, opt="-Os"):
    cwd = os.getcwd()
    os.chdir(work)
    try:
        return objcache.main([str(cache), tool, opt, "-MMD", "-c", "-o", out, str(src)])
    finally:
        os.chdir(cwd)


def test_second_build_reuses_the_object(tmp_path):
    tool, src, work = _setup(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    assert _compile(cache, tool, src, work, "a.o") == 0
    assert _compiles(tmp_path) == 1
    assert _compile(cache, tool, src, work, "b.o") == 0
    assert _compiles(tmp_path) == 1, "an unchanged runtime source was compiled again"
    assert (work / "b.o").read_text() == (work / "a.o").read_text()
    assert (work / "b.d").exists()


def test_changed_source_or_flags_recompile(tmp_path):
    tool, src, work = _setup(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    _compile(cache, tool, src, work, "a.o")
    src.write_text("int f() { return 2; }\n")
    _compile(cache, tool, src, work, "b.o")
    assert _compiles(tmp_path) == 2
    assert "return 2" in (work / "b.o").read_text()
    _compile(cache, tool, src, work, "c.o", opt="-O0")
    assert _compiles(tmp_path) == 3
    assert (work / "c.o").read_text().startswith("obj:-O0")


def test_install_writes_an_executable_wrapper(tmp_path):
    flag = objcache.install(tmp_path / "cache")
    name, script = flag.split("=", 1)
    assert name == "OBJCACHE" and " " not in script
    assert os.access(script, os.X_OK)
    assert objcache.__file__ in open(script).read()
