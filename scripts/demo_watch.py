#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Used by scripts/demo.sh. Two modes:

  demo_watch.py rate CTL NETNS DEV SECONDS T0 [EVENTS | @FILE]
      One line a second while a transfer runs: the bandwidth a device
      receives, in total and per plane, from `metaroce-ctl stats DEV
      --json` (the datapath rewrites its counters file once a second; a
      line is printed when a new one appears). Times are seconds since
      T0 (CLOCK_MONOTONIC seconds, the fabric's clock: on a loaded
      machine this script may start late). EVENTS: "T:text,T:text",
      notes printed on the line at absolute time T; @FILE: read them from
      FILE once it appears.

  demo_watch.py flowing CTL NETNS DEV TIMEOUT
      Returns (exit 0) once DEV receives data, i.e. its received bytes
      grow by 1 MiB or more between two counter files (neighbour
      discovery and connection set-up are a few frames); exit 1 after
      TIMEOUT seconds. Prints how long the wait was. The
      demo starts its clock here: on a loaded machine the two programs
      may take seconds to open their devices and connect, and a failure
      scheduled before the data flows would show no healthy phase.

  demo_watch.py summary CTL NETNS DEV
      The transport's own counters of the last process that used DEV
      (metaroce-ctl stats DEV --last --json): retransmissions, SACK holes,
      timeouts, ECN, and the traffic of each plane and path.
"""

import json
import subprocess
import sys
import time


def stats(ctl, ns, dev, last=False):
    cmd = ["ip", "netns", "exec", ns, ctl, "stats", dev, "--json"]
    if last:
        cmd.append("--last")
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None
    try:
        return json.loads(r.stdout)
    except ValueError:
        return None


def newest_counters(js):
    procs = [p for p in js.get("processes", []) if "counters" in p]
    if not procs:
        return None
    live = [p for p in procs if p.get("live")]
    return (live or procs)[0]["counters"]


def mono():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) / 1e9


def parse_events(events, t0):
    notes = []
    for e in filter(None, events.split(",")):
        t, _, text = e.partition(":")
        notes.append((float(t) - t0, text))
    return notes


def rate(ctl, ns, dev, seconds, t0, events):
    # "@FILE": the events are written there once known (the fabric takes
    # seconds to apply a schedule on a loaded machine; the watch must not
    # wait for it and miss the healthy phase).
    efile = events[1:] if events.startswith("@") else None
    notes = [] if efile else parse_events(events, t0)
    prev = None
    shown = set()
    while mono() - t0 < seconds:
        time.sleep(0.2)
        if efile and not notes:
            try:
                with open(efile) as f:
                    notes = parse_events(f.read().strip(), t0)
            except OSError:
                pass
        js = stats(ctl, ns, dev)
        c = newest_counters(js) if js else None
        if not c:
            continue
        planes = [p["rx_bytes"] for p in c["planes"]]
        now = mono()
        if prev is None or sum(planes) == sum(prev[1]) or prev[2] != c["pid"]:
            if prev is None or prev[2] != c["pid"]:
                prev = (now, planes, c["pid"])
            continue
        dt = now - prev[0]
        per = [(b - a) * 8 / dt / 1e9 for a, b in zip(prev[1], planes)]
        el = now - t0
        note = "".join("  <- " + text for t, text in notes
                       if t <= el and t not in shown)
        shown.update(t for t, _ in notes if t <= el)
        print("t=%4.1fs %6.2f Gb/s   %s%s" % (
            el, sum(per), "  ".join("p%d %5.2f" % (i + 1, g)
                                    for i, g in enumerate(per)), note),
            flush=True)
        prev = (now, planes, c["pid"])


def flowing(ctl, ns, dev, timeout):
    start = mono()
    end = start + timeout
    first = None
    while mono() < end:
        time.sleep(0.2)
        js = stats(ctl, ns, dev)
        c = newest_counters(js) if js else None
        if not c:
            continue
        got = (c["pid"], sum(p["rx_bytes"] for p in c["planes"]))
        if first is None or first[0] != got[0]:
            first = got
        elif got[1] - first[1] >= 1 << 20:
            print("(data flows %.1f s after the client started)"
                  % (mono() - start), flush=True)
            return 0
        elif got[1] != first[1]:
            first = got     # a newer file, still only set-up frames
    return 1


def summary(ctl, ns, dev):
    js = stats(ctl, ns, dev, last=True)
    c = newest_counters(js) if js else None
    if not c or "engine" not in c:
        print("(no counters of %s in %s)" % (dev, ns))
        return
    e = c["engine"]
    keys = ("tx_data_pkts", "retx_pkts", "sack_holes", "timeouts",
            "duplicates", "ecn_ce_rcvd", "ecn_ce_echoed", "gbn_rewinds",
            "drop_parse_icrc")
    print("  engine:  " + "  ".join("%s %d" % (k, e.get(k, 0))
                                   for k in keys[:5]))
    print("           " + "  ".join("%s %d" % (k, e.get(k, 0))
                                   for k in keys[5:]))
    for p in c["planes"]:
        print("  plane %d: tx_pkts %d  rx_pkts %d  rx_ecn_ce %d  "
              "tx_drop.no_route %d" % (p["plane"] + 1, p["tx_pkts"],
                                       p["rx_pkts"], p["rx_ecn_ce"],
                                       p.get("tx_drop", {}).get("no_route",
                                                                0)))
    for p in c.get("paths", []):
        print("  path %2d (plane %d): tx_pkts %7d  retx %6d  lost %6d  "
              "rto %3d  repaths %3d  rx_ce %d"
              % (p["path"], p["plane"] + 1, p["tx_pkts"], p["retx_pkts"],
                 p["lost_pkts"], p["rto_events"], p["repaths"],
                 p.get("rx_ce", 0)))


if __name__ == "__main__":
    if len(sys.argv) >= 7 and sys.argv[1] == "rate":
        rate(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]),
             float(sys.argv[6]), sys.argv[7] if len(sys.argv) > 7 else "")
    elif len(sys.argv) == 6 and sys.argv[1] == "flowing":
        sys.exit(flowing(sys.argv[2], sys.argv[3], sys.argv[4],
                         float(sys.argv[5])))
    elif len(sys.argv) == 5 and sys.argv[1] == "summary":
        summary(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
