#!/usr/bin/env python3
# The incast's queue from metaroce-sim output directories (one per point):
# targets.py's "under" (the first sample after the peak at or below the
# ECN threshold, from the first non-empty sample) and what it leaves out:
# the samples over the threshold after 2 RTTs, their first and the most.
# Usage: bench/sim/incast_queue.py DIR... (e.g. a sweep's point dirs)
import csv
import json
import os
import sys

ECN = 100 * 1024  # run.sh: the simulator's default ECN threshold
RTT = 4 * (1.0 + 0.33)  # targets.py's base RTT of the one-leaf incast


def point(d):
    ts = list(csv.DictReader(open(os.path.join(d, "timeseries.csv"))))
    sm = json.load(open(os.path.join(d, "summary.json")))
    q = [(float(r["t_us"]), float(r["queue_max_bytes"])) for r in ts]
    start = next(t for t, v in q if v > 0)
    pt, pv = max(q, key=lambda x: x[1])
    under = next((t for t, v in q if t > pt and v <= ECN), None)
    late = [(t, v) for t, v in q if t > start + 2 * RTT]
    over = [(t, v) for t, v in late if v > ECN]
    return [os.path.basename(d.rstrip("/")),
            "%.0f (%.1f)" % (under - start, (under - start) / RTT)
            if under is not None else "-",
            "%d (%.0f us)" % (pv, pt),
            "%d of %d" % (len(over), len(late)),
            "%.0f us" % (over[0][0] - start) if over else "-",
            "%d" % max(v for t, v in late) if late else "-",
            "%d" % (sum(v for t, v in late) / len(late)) if late else "-",
            "%d" % sm["drops_overflow"], "%.4f" % sm["jain"],
            "%.2f" % sm["goodput_gbps"], "%d" % sm["ecn_marked_pkts"]]


print("| point | under after us (RTTs) | peak B (at) | over after 2 RTTs |"
      " first over | max after 2 RTTs B | mean B | overflow drops | Jain |"
      " goodput Gb/s | CE marks |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    if os.path.isdir(d):
        print("| " + " | ".join(point(d)) + " |")
