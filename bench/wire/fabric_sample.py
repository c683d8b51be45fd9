#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Used by bench/wire/fabric.sh: read the fabric's own per-link counters
(the link programs' maps, through mrfab_bpf) every PERIOD seconds, so a
timeline has a finer grain than the device's once-a-second counters file.

  fabric_sample.py MODDIR STATE SECONDS PERIOD LINK...  > timeline.csv
      t_s (CLOCK_MONOTONIC, the clock of the links' down windows), then
      the bytes each LINK (direction names) delivered so far: for a link
      into a host, what the host's port received (the kernel's rx_bytes,
      every drop of the link already taken off); otherwise what the link's
      program passed on (its tx_bytes: not its down, loss and policer
      drops; a shaped link's later tail drops are in it). Arrivals, drops
      included, are what `metaroce-fabric stats --json` calls bytes_in.
  fabric_sample.py qdepth NETNS DEV SECONDS PERIOD  > depth.csv
      t_s, backlog_bytes of the link's bfifo (tc's 10:), every PERIOD.
  fabric_sample.py recovery CSV STATE LINK COL
      From a timeline of the receiver's incoming links (one per plane) and
      the down window of LINK (the failed plane's, from the fabric's STATE;
      its column COL, 1-based): the rate before the failure, during it,
      the time until the surviving planes carry 90% of the pre-failure
      total scaled to them ((k-1)/k), and the time until the returned
      plane carries 50% of its pre-failure share.
  fabric_sample.py busiest CSV
      The 1-based column of the link that carried most bytes so far.
"""

import ctypes
import json
import os
import sys
import time

WIN = 0.2  # seconds over which a rate is taken


def _setns(fd):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), "setns")


def _rx_bytes(dev):
    """rx_bytes of dev in the current network namespace."""
    with open("/proc/net/dev") as fh:
        for line in fh:
            name, _, rest = line.partition(":")
            if name.strip() == dev:
                return int(rest.split()[0])
    raise KeyError(dev)


def sample(moddir, state, seconds, period, links):
    sys.path.insert(0, moddir)
    import mrfab_bpf
    with open(state) as fh:
        st = json.load(fh)
    name = st["config"]["name"]
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    how = []  # per link: ("port", netns fd, dev) or ("prog", map id)
    for n in links:
        d = st["dirs"][n]
        if d["to"][0] in "ls" and d["to"][1:].isdigit():
            how.append(("prog", d["stats_map"]))
        else:
            fd = os.open("/run/netns/%s-%s" % (name, d["to"]), os.O_RDONLY)
            how.append(("port", fd, "p%d" % d["plane"]))
    print("t_s," + ",".join(links), flush=True)
    t0 = time.monotonic()
    while time.monotonic() - t0 <= seconds:
        t = time.clock_gettime_ns(time.CLOCK_MONOTONIC) / 1e9
        vals = []
        for h in how:
            if h[0] == "prog":
                vals.append(mrfab_bpf.read_stats(h[1])["tx_bytes"])
            else:
                _setns(h[1])
                vals.append(_rx_bytes(h[2]))
                _setns(home)
        print("%.3f,%s" % (t, ",".join(str(v) for v in vals)), flush=True)
        time.sleep(period)


def busiest(csv):
    rows = [l.split(",") for l in open(csv).read().split()[1:]]
    if len(rows) < 2:
        print(1)
        return
    d = [int(b) - int(a) for a, b in zip(rows[0][1:], rows[-1][1:])]
    print(d.index(max(d)) + 1)


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


def recovery(csv, state, link, col):
    with open(state) as fh:
        frm, until = json.load(fh)["dirs"][link]["down"]
    down, up = frm / 1e9, until / 1e9
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
    fail = col  # the failed link's index in a row (row[0] is the time)
    t_rec = None
    for r in rows:
        if down <= r[0] < up:
            s = sum(rates(rows, i, r[0]) or 0 for i in range(1, n + 1)
                    if i != fail)
            if s >= 0.9 * pre * (n - 1) / n:
                t_rec = r[0] - down
                break
    during = [sum(rates(rows, i, r[0]) or 0 for i in range(1, n + 1))
              for r in rows if down + 1 <= r[0] <= up - WIN]
    t_back = None
    for r in rows:
        if r[0] >= up:
            x = rates(rows, fail, r[0])
            if x is not None and x >= 0.5 * share[fail - 1]:
                t_back = r[0] - up
                break
    fmt = lambda v: "never" if v is None else "%.2f" % v
    print("%d,%.1f,%.1f,%.3f,%.3f,%s,%s" % (col, down - start, up - start,
                               pre / 1e9,
                               (sum(during) / len(during) / 1e9)
                               if during else 0, fmt(t_rec), fmt(t_back)))


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "qdepth":
        qdepth(sys.argv[2], sys.argv[3], float(sys.argv[4]),
               float(sys.argv[5]))
    elif len(sys.argv) == 6 and sys.argv[1] == "recovery":
        recovery(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    elif len(sys.argv) == 3 and sys.argv[1] == "busiest":
        busiest(sys.argv[2])
    elif len(sys.argv) > 5:
        sample(sys.argv[1], sys.argv[2], float(sys.argv[3]),
               float(sys.argv[4]), sys.argv[5:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
