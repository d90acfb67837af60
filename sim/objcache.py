"""A compiler wrapper that reuses Verilator's runtime objects between builds.

Every Verilator build compiles the same runtime sources (``verilated.cpp``, ``verilated_vpi.cpp``,
...) with the same flags; on a small design that is ~9 of its ~15 seconds. Verilator's makefile
puts ``$(OBJCACHE)`` in front of each compiler command, so :func:`install` points ``OBJCACHE``
at this module. Like ccache's preprocessor mode, the key is the preprocessed source plus the
flags, so a changed header or flag never reuses a stale object. Only sources outside the build
folder (the runtime) are cached; the model's own files are unique to each build anyway.

Usage (by make): ``objcache.sh c++ FLAGS... -c -o OUT.o SRC.cpp``.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["install", "main"]

CACHE_ENV = "GPUBLOCKS_OBJCACHE_DIR"


def install(cache_dir):
    """Write the wrapper script into ``cache_dir`` and return the ``OBJCACHE=...`` make flag.

    A script (not ``python -m ...``) because a make variable passed through ``MAKEFLAGS``
    cannot hold spaces.
    """
    cache_dir = Path(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    script = cache_dir / "objcache.sh"
    text = (f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" '
            f'"{cache_dir}" "$@"\n')
    if not script.exists() or script.read_text() != text:
        tmp = script.with_suffix(f".{os.getpid()}")
        tmp.write_text(text)
        tmp.chmod(0o755)
        os.replace(tmp, script)
    return f"OBJCACHE={script}"


def _split(argv):
    """(flags without ``-o OUT``, output path, source path) of a ``-c`` compile, else None."""
    if "-c" not in argv or "-o" not in argv[:-1]:
        return None
    i = argv.index("-o")
    out, rest = argv[i + 1], argv[:i] + argv[i + 2:]
    sources = [a for a in rest[1:] if a.endswith((".cpp", ".cc", ".c"))]
    if len(sources) != 1:
        return None
    return rest, out, sources[0]


def _key(flags, source):
    """Hash of the compiler command (minus its output) and the preprocessed source."""
    pre = [a for a in flags if a not in ("-c", "-MMD", "-MD")] + ["-E", "-P"]
    text = subprocess.run(pre, check=True, capture_output=True).stdout
    digest = hashlib.sha256(text)
    digest.update("\0".join(flags).encode())
    return digest.hexdigest()[:32]


def main(argv):
    cache_dir, command = Path(argv[0]), argv[1:]
    parsed = _split(command)
    if parsed is None or not os.path.isabs(parsed[2]):
        os.execvp(command[0], command)           # links, model sources: not cached
    flags, out, source = parsed
    key = _key(flags, source)
    cached_o, cached_d = cache_dir / f"{key}.o", cache_dir / f"{key}.d"
    dep = Path(out).with_suffix(".d")
    if cached_o.exists():
        shutil.copyfile(cached_o, out)
        if cached_d.exists():
            shutil.copyfile(cached_d, dep)
        return 0
    rc = subprocess.run(command).returncode
    if rc == 0:
        for src, dst in ((out, cached_o), (dep, cached_d)):
            if Path(src).exists():
                tmp = dst.with_suffix(f".{os.getpid()}.tmp")
                shutil.copyfile(src, tmp)
                os.replace(tmp, dst)             # atomic: parallel builds never see half a file
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
