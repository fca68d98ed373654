#!/usr/bin/env python3
"""Writes libgomp's omp.h and libgomp_f.h from their .in templates, as
libgomp's configure does (configure.ac: _AC_COMPUTE_INT of the locks' sizes
and alignments, then the Fortran kinds from them), for card programs: the
sizes are those of config/posix/omp-lock.h's types under the card compiler,
read from an object file's symbol sizes (`nm -S`), so nothing built for the
card has to run on the build machine.

usage: gomp-headers.py SRC OUTDIR CC [CFLAGS...]
  SRC: the unpacked gcc source (its libgomp/); CC CFLAGS: the compiler and
  the flags libgomp is built with (its include path among them).
"""
import os
import re
import subprocess
import sys
import tempfile

TYPES = {"OMP_LOCK": "omp_lock_t", "OMP_NEST_LOCK": "omp_nest_lock_t", "OMP_LOCK_25": "omp_lock_25_t",
         "OMP_NEST_LOCK_25": "omp_nest_lock_25_t", "INTPTR": "__INTPTR_TYPE__"}


def measure(cc, cflags):
    """{NAME_SIZE: n, NAME_ALIGN: n} of TYPES under the card compiler."""
    src = '#include "config.h"\n#include "omp-lock.h"\n' + "".join(
        f"char {k}_SIZE[sizeof({t})]; char {k}_ALIGN[__alignof__({t})];\n" for k, t in TYPES.items())
    with tempfile.TemporaryDirectory() as d:
        c, o = os.path.join(d, "sizes.c"), os.path.join(d, "sizes.o")
        with open(c, "w") as f:
            f.write(src)
        subprocess.run([cc, *cflags, "-fno-common", "-c", c, "-o", o], check=True)
        nm = subprocess.run(["nm", "-S", o], check=True, capture_output=True, text=True).stdout
    got = {m[2]: int(m[1], 16) for m in re.finditer(r"^[0-9a-f]+ ([0-9a-f]+) [BbDd] (\w+)$", nm, re.M)}
    missing = [f"{k}_{w}" for k in TYPES for w in ("SIZE", "ALIGN") if f"{k}_{w}" not in got]
    if missing:
        sys.exit(f"gomp-headers: no size for {missing} in nm's output:\n{nm}")
    return got


def values(got):
    """The @NAME@ substitutions, with configure's rule for a lock's Fortran kind."""
    v = {k: str(n) for k, n in got.items() if not k.startswith("INTPTR")}
    for lock in ("OMP_LOCK", "OMP_NEST_LOCK", "OMP_LOCK_25", "OMP_NEST_LOCK_25"):
        size, align = got[f"{lock}_SIZE"], got[f"{lock}_ALIGN"]
        v[f"{lock}_KIND"] = str(8 if size > 8 or align > size else size)
    v["INTPTR_T_KIND"] = str(got["INTPTR_SIZE"])
    v["OMP_DEPEND_KIND"] = str(2 * got["INTPTR_SIZE"])
    return v


def substitute(template, out, v):
    with open(template) as f:
        text = f.read()
    text = re.sub(r"@(\w+)@", lambda m: v[m[1]], text)  # a name configure would set and we do not: KeyError
    with open(out, "w") as f:
        f.write(text)


def main():
    src, outdir, cc, cflags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    v = values(measure(cc, cflags))
    substitute(os.path.join(src, "libgomp", "omp.h.in"), os.path.join(outdir, "omp.h"), v)
    substitute(os.path.join(src, "libgomp", "libgomp_f.h.in"), os.path.join(outdir, "libgomp_f.h"), v)


if __name__ == "__main__":
    main()
