#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause
"""Used by bench/wire/plane_fail.sh: what one plane's failure cost.

  plane_fail.py sample MODDIR STATE SECONDS PERIOD LINK...  > timeline.csv
      t_s (CLOCK_MONOTONIC, the clock of the links' down windows), then
      for each LINK the bytes it delivered so far: its packets less those
      it dropped (down, loss, policer), times the mean bytes per packet of
      the link so far. (The links' byte counter counts every packet that
      reached the link, dropped or not.)

  plane_fail.py CSV STATE LINK COL
      CSV: fabric_sample.py's timeline of the links into the receiver (t_s,
      then bytes so far per plane); STATE: the fabric's state file, which
      holds the down window of LINK (the failed plane's link, column COL,
      1-based). Prints a Markdown table: rates before / during / after, the
      time until the surviving planes carry 90% of (k-1)/k of the rate
      before (in a 10 ms window, and for good: every 10 ms window of the
      next 200 ms at 90% on average), and until the failed plane carries
      half its earlier share again (10 ms window).
"""

import json
import sys

SHORT = 0.010  # the target's resolution: 10 ms


def sample(moddir, state, seconds, period, links):
    import time
    sys.path.insert(0, moddir)
    import mrfab_bpf
    with open(state) as fh:
        st = json.load(fh)
    ids = [st["dirs"][n]["stats_map"] for n in links]
    print("t_s," + ",".join(links), flush=True)
    t0 = time.monotonic()
    while time.monotonic() - t0 <= seconds:
        t = time.clock_gettime_ns(time.CLOCK_MONOTONIC) / 1e9
        out = []
        for i in ids:
            s = mrfab_bpf.read_stats(i)
            ok = s["pkts"] - s["drop_down"] - s["drop_loss"] - \
                s["drop_police"]
            out.append(str(ok * s["bytes"] // s["pkts"] if s["pkts"] else 0))
        print("%.4f,%s" % (t, ",".join(out)), flush=True)
        time.sleep(period)


def load(csv):
    lines = open(csv).read().split()
    return [[float(x) for x in l.split(",")] for l in lines[1:]]


def rate(rows, cols, t, win):
    """bit/s of the columns over [t, t + win) (None past the end)."""
    a = next((r for r in rows if r[0] >= t), None)
    b = next((r for r in rows if r[0] >= t + win), None)
    if not a or not b or b[0] <= a[0]:
        return None
    return sum(b[i] - a[i] for i in cols) * 8 / (b[0] - a[0])


def main(csv, state, link, col):
    with open(state) as fh:
        frm, until = json.load(fh)["dirs"][link]["down"]
    down, up = frm / 1e9, until / 1e9
    rows = load(csv)
    k = len(rows[0]) - 1
    allc = list(range(1, k + 1))
    rest = [i for i in allc if i != col]
    pre = rate(rows, allc, down - 1.0, 1.0) or 0
    pre_fail = rate(rows, [col], down - 1.0, 1.0) or 0
    during = rate(rows, allc, down + 0.5, up - down - 0.5) or 0
    after = rate(rows, allc, up + 0.5, 1.0) or 0
    target = 0.9 * pre * (k - 1) / k
    t_first = t_good = None
    t = down
    while t < up - 0.2:
        r = rate(rows, rest, t, SHORT)
        if r is not None and r >= target:
            if t_first is None:
                t_first = t - down
            if (rate(rows, rest, t, 0.2) or 0) >= target:
                t_good = t - down
                break
        t += 0.002
    t_back = None
    t = up
    while t < up + 2.0:
        r = rate(rows, [col], t, SHORT)
        if r is not None and r >= 0.5 * pre_fail:
            t_back = t - up
            break
        t += 0.002
    ms = lambda v: "never" if v is None else "%.0f ms" % (v * 1000)
    g = lambda v: "%.3f" % (v / 1e9)
    print("| before Gb/s | plane %d before | during Gb/s (target >= %s) "
          "| after Gb/s | survivors at 90%% of their share: first 10 ms "
          "window | for good (200 ms) | failed plane back (10 ms window, "
          "half its share) |" % (col, g(target)))
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print("| %s | %s | %s | %s | %s | %s | %s |" % (
        g(pre), g(pre_fail), g(during), g(after), ms(t_first), ms(t_good),
        ms(t_back)))


if __name__ == "__main__":
    if len(sys.argv) > 6 and sys.argv[1] == "sample":
        sample(sys.argv[2], sys.argv[3], float(sys.argv[4]),
               float(sys.argv[5]), sys.argv[6:])
        sys.exit(0)
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
