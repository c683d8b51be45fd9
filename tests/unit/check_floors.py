#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The engine's floors (docs/architecture.md, "lib/core in floors").

Every file of lib/core belongs to one floor, named in FLOORS below; a file
may include only headers of its own floor or a lower one, so a module can
call down but never up (a call needs a prototype, a prototype needs the
header, and warnings are errors). A file missing from the table fails too,
so a new module must be given its floor.

Usage: check_floors.py LIB_CORE_DIR   (exit 0: floors kept; 1: broken)
       check_floors.py --self-test LIB_CORE_DIR   (the check catches a
       call up and an include up planted in a copy of LIB_CORE_DIR)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# floor: modules (a module is a .c and/or .h of the same base name)
FLOORS = {
    # 0 base: byte order, errors, the public types, wire format, rings
    0: ["mr_be", "mr_err", "mr_core", "mr_counters", "mr_crc32c",
        "mr_wire", "mr_ring", "mr_registry"],
    # 1 leaves: one concern each, no QP; they return results
    1: ["mr_ssnwin", "mr_timerq", "mr_pathrx", "mr_pathtx", "mr_pathsel",
        "mr_pathsel_spray", "mr_pathsel_single", "mr_cc", "mr_cc_registry",
        "mr_cc_metaroce", "mr_cc_dcqcn", "mr_cc_fixed", "mr_ratehint",
        "mr_rq", "mr_sge", "mr_sq", "mr_pathmgr", "mr_mw", "mr_qpout"],
    # 2 QP parts: requester, responder, datagrams (struct mr_qp)
    2: ["mr_engine", "mr_req", "mr_req_rx", "mr_resp", "mr_ud", "mr_uc",
        "mr_sqlocal", "mr_atomicw"],
    # 3 the endpoint's bookkeeping of its QPs: work queue, timer heap
    #   keys, qpn table; path counters and per-connection path views
    3: ["mr_sched", "mr_ep_stats", "mr_path_info"],
    # 4 the QP: state machine, completions, flush, error; QP and SRQ calls
    4: ["mr_qp", "mr_srq"],
    # 5 the endpoint: creation, demultiplexing, transmit turns, expiry
    5: ["mr_ep"],
}

# Calls up that are left, as (file, function of a higher floor). Each is a
# debt with its reason; the check fails on a new one and on one that is
# gone (then delete it here), so the list only shrinks. Empty: the QP
# parts return completions and failures in qp->out (mr_qpout.h) and the
# QP floor acts on them (mr_qp_settle()).
LEFT_UP = set()

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# A function definition in kernel style: the return type at column 0.
DEFINES = re.compile(r'^(?!static\b)[a-z][^;(=]*?\b(mr_\w+)\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)


def up_calls(core, files, floor_of):
    """(file, function) for each call of a function defined in a higher
    floor's .c file."""
    defined = {}
    for f in files:
        if not f.endswith(".c"):
            continue
        with open(os.path.join(core, f), encoding="utf-8") as fh:
            for line in fh:
                m = DEFINES.match(line)
                if m:
                    defined[m.group(1)] = floor_of.get(f[:-2], -1)
    found = set()
    for f in files:
        if not f.endswith(".c") or f[:-2] not in floor_of:
            continue
        mine = floor_of[f[:-2]]
        with open(os.path.join(core, f), encoding="utf-8") as fh:
            text = COMMENT.sub(" ", fh.read())
        for name in set(re.findall(r'\b(mr_\w+)\s*\(', text)):
            if defined.get(name, -1) > mine:
                found.add((f, name))
    return found


def self_test(core):
    """A copy of lib/core must pass; with a QP part that calls the QP
    floor (the calls LEFT_UP once held), or includes its header, it must
    fail and name the file."""
    plants = [
        ("mr_req.c", "\nvoid mr_req_planted(struct mr_qp *qp)\n"
         "{\n\tmr_qp_settle(qp);\n}\n", "calls mr_qp_settle()"),
        ("mr_sqlocal.c", '\n#include "mr_qp.h"\n', "includes mr_qp.h"),
    ]

    def run(d):
        return subprocess.run([sys.executable, os.path.abspath(__file__), d],
                              capture_output=True, text=True)

    with tempfile.TemporaryDirectory() as tmp:
        d = os.path.join(tmp, "core")
        shutil.copytree(core, d)
        r = run(d)
        if r.returncode != 0:
            print(f"self-test: the copy fails unplanted:\n{r.stdout}")
            return 1
        for f, text, want in plants:
            path = os.path.join(d, f)
            with open(path, encoding="utf-8") as fh:
                orig = fh.read()
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(text)
            r = run(d)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(orig)
            if r.returncode != 1 or f not in r.stdout or want not in r.stdout:
                print(f"self-test: {f} that {want} passed:\n{r.stdout}")
                return 1
    print("check_floors self-test: planted calls up caught")
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--self-test":
        return self_test(sys.argv[2])
    if len(sys.argv) != 2:
        print(__doc__[__doc__.index("Usage"):].rstrip(), file=sys.stderr)
        return 2
    core = sys.argv[1]
    floor_of = {}
    for floor, mods in FLOORS.items():
        for m in mods:
            if m in floor_of:
                print(f"check_floors: {m} is in two floors", file=sys.stderr)
                return 2
            floor_of[m] = floor
    bad = 0
    files = sorted(f for f in os.listdir(core)
                   if f.endswith(".c") or f.endswith(".h"))
    if not files:
        print(f"check_floors: no sources in {core}", file=sys.stderr)
        return 2
    for f in files:
        mod = f[:-2]
        if mod not in floor_of:
            print(f"{f}: not in any floor (add it to FLOORS in {__file__})")
            bad += 1
            continue
        mine = floor_of[mod]
        with open(os.path.join(core, f), encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                inc = os.path.basename(m.group(1))[:-2]
                if inc not in floor_of:
                    print(f"{f}:{n}: includes {m.group(1)}, in no floor")
                    bad += 1
                elif floor_of[inc] > mine:
                    print(f"{f}:{n}: floor {mine} includes {m.group(1)} "
                          f"of floor {floor_of[inc]} (a call upward)")
                    bad += 1
    calls = up_calls(core, files, floor_of)
    for f, name in sorted(calls - LEFT_UP):
        print(f"{f}: calls {name}() of a higher floor (a call upward)")
        bad += 1
    for f, name in sorted(LEFT_UP - calls):
        print(f"{f}: no longer calls {name}(): delete it from LEFT_UP")
        bad += 1
    print(f"check_floors: {len(files)} files, {len(calls)} calls upward "
          f"left, {bad} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
