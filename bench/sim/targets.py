#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Issue 9's simulator targets against the committed data of
bench/sim/run.sh (bench/sim/data): one Markdown table, each target with
the figure it is checked on, the figure, and met or missed.

  bench/sim/targets.py [DATA_DIR]   (default: bench/sim/data)
"""

import csv
import json
import os
import sys


def rows(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


def pick(rs, **kv):
    for r in rs:
        if all(r.get(k) == v for k, v in kv.items()):
            return r
    return None


def f(r, k):
    try:
        return float(r[k])
    except (TypeError, KeyError, ValueError):
        return float("nan")


def series(path):
    with open(path) as fh:
        return list(csv.DictReader(fh))


OUT = []


def line(target, where, figure, ok):
    OUT.append("| %s | %s | %s | %s |" % (target, where, figure,
                                          "met" if ok else "**missed**"))


def loss(d):
    rs = rows(os.path.join(d, "loss", "sweep.csv"))
    m0 = pick(rs, loss="0", transport="metaroce")
    for p in ("0.001", "0.01", "0.05", "0.1"):
        m = pick(rs, loss=p, transport="metaroce")
        if not m or not m0:
            continue
        want = 0.95 * (1 - float(p)) * f(m0, "goodput_gbps")
        line("loss %s%%: goodput >= 0.95 x (1-p) x lossless" %
             (float(p) * 100), "loss",
             "%.1f Gb/s (>= %.1f; lossless %.1f; %.0f%% of lossless)" %
             (f(m, "goodput_gbps"), want, f(m0, "goodput_gbps"),
              100 * f(m, "goodput_gbps") / f(m0, "goodput_gbps")),
             f(m, "goodput_gbps") >= want)
    m = pick(rs, loss="0.01", transport="metaroce")
    r = pick(rs, loss="0.01", transport="roce")
    if m and r:
        x = f(m, "goodput_gbps") / max(f(r, "goodput_gbps"), 1e-9)
        line("loss 1%: >= 5 x the baseline", "loss",
             "%.1f / %.3f Gb/s = %.0fx" % (f(m, "goodput_gbps"),
                                           f(r, "goodput_gbps"), x), x >= 5)


def planes(d, fig, what):
    p = os.path.join(d, fig, "sweep.csv")
    if not os.path.exists(p):
        return
    rs = rows(p)
    one = pick(rs, planes="1", transport="metaroce")
    for k in ("2", "4", "8"):
        m = pick(rs, planes=k, transport="metaroce")
        if not m or not one:
            continue
        want = 0.95 * int(k) * f(one, "goodput_gbps")
        line("planes k=%s (%s): aggregate >= 0.95 x k x one plane" %
             (k, what), fig,
             "%.0f Gb/s (>= %.0f; one plane %.0f; %.2f x)" %
             (f(m, "goodput_gbps"), want, f(one, "goodput_gbps"),
              f(m, "goodput_gbps") / f(one, "goodput_gbps")),
             f(m, "goodput_gbps") >= want)


def mid_goodput(d, fig, k):
    """The aggregate while every connection is under way: the mean of the
    goodput samples in the middle half [T/4, 3T/4) of the collective's
    time T (the first RTT and the tail of the last connections left out),
    from the point's time series; None without one."""
    pt = os.path.join(d, fig, "planes=%s,transport=metaroce" % k)
    try:
        with open(os.path.join(pt, "summary.json")) as fh:
            t = float(json.load(fh)["collective_us"])
        ts = series(os.path.join(pt, "timeseries.csv"))
    except (OSError, KeyError, ValueError):
        return None
    v = [float(r["goodput_gbps"]) for r in ts
         if t / 4 <= float(r["t_us"]) < 3 * t / 4]
    return sum(v) / len(v) if v else None


def planes_steady(d, fig, what):
    one = mid_goodput(d, fig, "1")
    for k in ("2", "4", "8"):
        m = mid_goodput(d, fig, k)
        if m is None or one is None:
            continue
        want = 0.95 * int(k) * one
        line("planes k=%s (%s), steady state (middle half of the "
             "collective): >= 0.95 x k x one plane" % (k, what), fig,
             "%.0f Gb/s (>= %.0f; one plane %.0f; %.2f x)" %
             (m, want, one, m / one), m >= want)


def incast(d, fig="incast", how=""):
    p = os.path.join(d, fig, "sweep.csv")
    if not os.path.exists(p):
        return
    m = pick(rows(p), transport="metaroce")
    ts = series(os.path.join(d, fig, "transport=metaroce",
                             "timeseries.csv"))
    ecn = 100 * 1024  # run.sh: the simulator's default ECN threshold
    # the incast starts with the first queue; "back under" = the sample
    # after the last one over the threshold (the queue stays under from
    # then on), or the start if no sample is over it
    start = next((float(r["t_us"]) for r in ts
                  if float(r["queue_max_bytes"]) > 0), None)
    peak_t = max(ts, key=lambda r: float(r["queue_max_bytes"]))
    over = [i for i, r in enumerate(ts)
            if float(r["queue_max_bytes"]) > ecn]
    if not over:
        under = start
    elif over[-1] + 1 < len(ts):
        under = float(ts[over[-1] + 1]["t_us"])
    else:
        under = None
    # the base RTT of this topology: 2 links each way of 1 us, plus a
    # 4 KiB packet's serialisation per hop at 100 Gb/s (~0.33 us)
    rtt = 4 * (1.0 + 0.33)
    if start is not None and under is not None:
        line("incast 64-to-1%s: queue under the ECN threshold within 2 RTTs" % how,
             fig, "after %.0f us = %.0f RTTs (RTT ~%.1f us; peak %d B; "
             "%d of %d samples over)" %
             (under - start, (under - start) / rtt, rtt,
              int(float(peak_t["queue_max_bytes"])), len(over), len(ts)),
             under - start <= 2 * rtt)
    line("incast 64-to-1%s: no buffer-overflow drops" % how, fig,
         "%d dropped" % int(f(m, "drops_overflow")),
         f(m, "drops_overflow") == 0)
    line("incast 64-to-1%s: Jain fairness >= 0.95" % how, fig,
         "%.3f" % f(m, "jain"), f(m, "jain") >= 0.95)


def fail(d, fig, what, healthy):
    p = os.path.join(d, fig, "sweep.csv")
    if not os.path.exists(p):
        return
    m = pick(rows(p), transport="metaroce")
    line("%s: no connection fails" % what, fig,
         "complete %s, %d CQE errors, %d verify errors" %
         (m["complete"], int(f(m, "cqe_errors")), int(f(m, "verify_errors"))),
         m["complete"] == "true" and f(m, "cqe_errors") == 0)
    ts = series(os.path.join(d, fig, "transport=metaroce", "timeseries.csv"))
    at = 100.0
    # healthy: the mean goodput over the 50 us before the failure
    pre = [float(r["goodput_gbps"]) for r in ts
           if at - 50 <= float(r["t_us"]) < at]
    pre = sum(pre) / len(pre) if pre else 0
    want = 0.9 * 3 / 4 * pre
    # 20 us means after the failure: the first one back at the target
    # after the dip (0 if goodput never dipped below it)
    def mean(t):
        v = [float(r["goodput_gbps"]) for r in ts
             if t <= float(r["t_us"]) < t + 20]
        return sum(v) / len(v) if v else 0
    steps = [at + 5 * i for i in range(200)]
    dip = next((t for t in steps[:40] if mean(t) < want), None)
    rec = 0.0 if dip is None else next(
        (t - at for t in steps if t > dip and mean(t) >= want), None)
    rtt = 8 * (1.0 + 0.33)  # host-leaf-spine-leaf-host and back
    if rec is not None:
        line("%s: goodput back to 0.9 x (k-1)/k of healthy within 10 RTTs"
             % what, fig,
             "%.0f us = %.1f RTTs (healthy %.0f Gb/s, RTT ~%.0f us, 5 us "
             "samples)" % (rec, rec / rtt, pre, rtt), rec <= 10 * rtt)
    else:
        after = [mean(t) for t in steps[1:40]]
        line("%s: goodput back to 0.9 x (k-1)/k of healthy within 10 RTTs"
             % what, fig,
             "never back to %.0f Gb/s (healthy %.0f Gb/s; 20 us means in "
             "the 200 us after: %.0f..%.0f Gb/s)" %
             (want, pre, min(after), max(after)), False)
    if healthy:
        line("%s: collective time against no failure" % what, fig,
             "%.0f us" % f(m, "collective_us"), True)
    if fig == "blackhole":
        redraw(d, fig, what, rtt)


def plane_back(d, fig, what, down, up):
    # The failed plane's transmit rate (every host's port of it) back to
    # half its healthy rate (the 50 us before the failure), as
    # bench/wire/plane_fail.py judges "the failed plane back"
    p = os.path.join(d, fig, "transport=metaroce", "timeseries.csv")
    if not os.path.exists(p):
        return
    ts = series(p)
    pre = [float(r["plane1_gbps"]) for r in ts
           if down - 50 <= float(r["t_us"]) < down]
    pre = sum(pre) / len(pre) if pre else 0
    back = next((float(r["t_us"]) - up for r in ts
                 if float(r["t_us"]) > up and
                 float(r["plane1_gbps"]) >= pre / 2), None)
    rtt = 8 * (1.0 + 0.33)
    line("%s: the plane carries traffic again within 10 RTTs of its return"
         % what, fig,
         "never (healthy plane 1 %.0f Gb/s)" % pre if back is None else
         "%.0f us = %.1f RTTs (half its healthy %.0f Gb/s, 5 us samples)" %
         (back, back / rtt, pre), back is not None and back <= 10 * rtt)


def redraw(d, fig, what, rtt):
    # metaroce-sim's summary: every black-holed path's delay from its
    # first data packet lost in the hole to its sender's first packet on
    # that path with another entropy (mrsim_redraw.c)
    p = os.path.join(d, fig, "transport=metaroce", "summary.json")
    if not os.path.exists(p):
        return
    with open(p) as fh:
        sm = json.load(fh)
    n = sm.get("blackholed_paths", 0)
    if not n:
        return
    us = sm.get("redraw_us", [])
    within = sum(1 for x in us if x <= 3 * rtt)
    line("%s: affected paths re-drawn within 3 RTTs" % what, fig,
         "%d of %d paths within %.0f us (re-drawn %d; p50 %.1f, p99 %.1f, "
         "max %.1f us)" % (within, n, 3 * rtt, len(us),
                           sm["redraw_p50_us"], sm["redraw_p99_us"],
                           sm["redraw_max_us"]), within == n)


def collectives(d):
    for fig, what in (("allreduce64", "ring all-reduce 64 hosts"),
                      ("alltoall64", "all-to-all 64 hosts")):
        p = os.path.join(d, fig, "sweep.csv")
        if not os.path.exists(p):
            continue
        rs = rows(p)
        m0 = pick(rs, loss="0", transport="metaroce")
        r0 = pick(rs, loss="0", transport="roce")
        m1 = pick(rs, loss="0.01", transport="metaroce")
        r1 = pick(rs, loss="0.01", transport="roce")
        if m0 and r0:
            line("%s lossless: completion no worse than the baseline" % what,
                 fig, "%.0f us against %.0f us" %
                 (f(m0, "collective_us"), f(r0, "collective_us")),
                 f(m0, "collective_us") <= f(r0, "collective_us"))
        if m1 and r1:
            rc = f(r1, "collective_us") if r1["complete"] == "true" \
                else float("inf")
            line("%s 1%% loss: at least 2x better than the baseline" % what,
                 fig, "%.0f us against %s" %
                 (f(m1, "collective_us"),
                  "%.0f us" % rc if rc != float("inf") else
                  "baseline did not complete (retry exceeded)"),
                 2 * f(m1, "collective_us") <= rc)


def main(d):
    print("| target (issue 9) | figure | MetaRoCE | |")
    print("| --- | --- | --- | --- |")
    loss(d)
    planes(d, "planes", "16 hosts, 240 connections")
    planes_steady(d, "planes", "16 hosts, 240 connections")
    planes(d, "planes4k", "64 hosts, 4032 connections")
    planes_steady(d, "planes4k", "64 hosts, 4032 connections")
    planes(d, "planes4k1m", "64 hosts, 4032 connections, 1 MiB per pair")
    planes_steady(d, "planes4k1m",
                  "64 hosts, 4032 connections, 1 MiB per pair")
    planes(d, "planes4k4m", "64 hosts, 4032 connections, 4 MiB per pair")
    planes_steady(d, "planes4k4m",
                  "64 hosts, 4032 connections, 4 MiB per pair")
    incast(d)
    incast(d, "incast_one", " (cc_start=one first_pkt_bytes=0, the start"
           " before MR-CC-17)")
    fail(d, "planefail", "plane 1 of 4 fails", False)
    fail(d, "planefail_back", "plane 1 of 4 fails for 200 us", False)
    plane_back(d, "planefail_back", "plane 1 of 4 fails for 200 us", 100.0,
               300.0)
    fail(d, "blackhole", "spine 0 of plane 1 black-holes", False)
    collectives(d)
    print("\n".join(OUT))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
