#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Used by bench/wire/fabric.sh: read the fabric's own per-link counters
(the link programs' maps, through mrfab_bpf) every PERIOD seconds, so a
timeline has a finer grain than the device's once-a-second counters file.

  fabric_sample.py MODDIR STATE SECONDS PERIOD LINK...  > timeline.csv
      t_s, then the bytes seen so far on each LINK (direction names).
  fabric_sample.py qdepth NETNS DEV SECONDS PERIOD  > depth.csv
      t_s, backlog_bytes of the link's bfifo (tc's 10:), every PERIOD.
  fabric_sample.py recovery CSV DOWN_S UP_S
      From a timeline of the receiver's incoming links (one per plane, the
      failing one second): the rate before the failure, the time until the
      surviving planes carry 90% of the pre-failure total again after
      DOWN_S (or of what they can: k-1 planes at most), the time until
      the returned plane carries 50% of its pre-failure share after UP_S.
"""

import json
import sys
import time

WIN = 0.2  # seconds over which a rate is taken


def sample(moddir, state, seconds, period, links):
    sys.path.insert(0, moddir)
    import mrfab_bpf
    with open(state) as fh:
        st = json.load(fh)
    ids = [st["dirs"][n]["stats_map"] for n in links]
    print("t_s," + ",".join(links), flush=True)
    t0 = time.monotonic()
    while True:
        t = time.monotonic() - t0
        if t > seconds:
            break
        vals = [mrfab_bpf.read_stats(i)["bytes"] for i in ids]
        print("%.3f,%s" % (t, ",".join(str(v) for v in vals)), flush=True)
        time.sleep(period)


def qdepth(ns, dev, seconds, period):
    import subprocess
    print("t_s,backlog_bytes", flush=True)
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        out = subprocess.run(["ip", "netns", "exec", ns, "tc", "-s", "-j",
                              "qdisc", "show", "dev", dev],
                             capture_output=True, text=True).stdout
        b = [q.get("backlog", 0) for q in json.loads(out or "[]")
             if q.get("handle") == "10:"]
        print("%.3f,%d" % (time.monotonic() - t0, b[0] if b else 0),
              flush=True)
        time.sleep(period)


def rates(rows, i, t):
    """Rate (bit/s) of column i over [t, t + WIN)."""
    a = next((r for r in rows if r[0] >= t), None)
    b = next((r for r in rows if r[0] >= t + WIN), None)
    if not a or not b or b[0] == a[0]:
        return None
    return (b[i] - a[i]) * 8 / (b[0] - a[0])


def recovery(csv, down, up):
    lines = open(csv).read().split()
    rows = [[float(x) for x in l.split(",")] for l in lines[1:]]
    n = len(rows[0]) - 1
    # the transfer's own start: the first window with traffic
    start = next(r[0] for r in rows
                 if sum(rates(rows, i, r[0]) or 0 for i in range(1, n + 1))
                 > 0)
    before = [r for r in rows if start + 1 <= r[0] <= down - WIN]
    tot = [sum(rates(rows, i, r[0]) or 0 for i in range(1, n + 1))
           for r in before]
    pre = sum(tot) / len(tot) if tot else 0
    share = [sum(rates(rows, i, r[0]) or 0 for r in before) / len(before)
             for i in range(1, n + 1)] if before else [0] * n
    # the failing plane is column 2 (plane 2)
    t_rec = None
    for r in rows:
        if down <= r[0] < up:
            s = sum(rates(rows, i, r[0]) or 0 for i in range(1, n + 1)
                    if i != 2)
            if s >= 0.9 * pre * (n - 1) / n:
                t_rec = r[0] - down
                break
    during = [sum(rates(rows, i, r[0]) or 0 for i in range(1, n + 1))
              for r in rows if down + 1 <= r[0] <= up - WIN]
    t_back = None
    for r in rows:
        if r[0] >= up:
            x = rates(rows, 2, r[0])
            if x is not None and x >= 0.5 * share[1]:
                t_back = r[0] - up
                break
    fmt = lambda v: "never" if v is None else "%.2f" % v
    print("%.3f,%.3f,%s,%s" % (pre / 1e9,
                               (sum(during) / len(during) / 1e9)
                               if during else 0, fmt(t_rec), fmt(t_back)))


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "qdepth":
        qdepth(sys.argv[2], sys.argv[3], float(sys.argv[4]),
               float(sys.argv[5]))
    elif len(sys.argv) == 5 and sys.argv[1] == "recovery":
        recovery(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
    elif len(sys.argv) > 5:
        sample(sys.argv[1], sys.argv[2], float(sys.argv[3]),
               float(sys.argv[4]), sys.argv[5:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
