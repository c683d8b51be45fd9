#!/usr/bin/env python3
"""Markdown tables of bench/sim/data/*/sweep.csv (for results.md)."""
import csv
import sys

COLS = ["complete", "goodput_gbps", "fct_p99_us", "collective_us",
        "retx_pkts", "timeouts", "max_queue_bytes", "drops_overflow",
        "drops_loss", "drops_failed", "ecn_marked_pkts", "jain", "events",
        "events_per_s"]


def fmt(v):
    try:
        f = float(v)
    except ValueError:
        return v
    if f != f:
        return "-"
    if f == int(f) and abs(f) < 1e15:
        return "%d" % f
    return "%.3g" % f if abs(f) < 100 else "%.0f" % f


for path in sys.argv[1:]:
    rows = list(csv.DictReader(open(path)))
    keys = [k for k in rows[0] if k not in COLS and k not in (
        "fct_p50_us", "fct_max_us", "connections", "verify_errors",
        "cqe_errors", "sim_time_us", "wall_s")]
    cols = keys + COLS + ["verify_errors", "cqe_errors"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |")
    print()
