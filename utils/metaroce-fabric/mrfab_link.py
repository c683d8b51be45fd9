# SPDX-License-Identifier: BSD-2-Clause
"""One link direction in the kernel: its queue (HTB + bfifo on a router's
egress), its program (mrfab_link.bpf.c on clsact egress or ingress) and
the program's configuration. Settings change while traffic flows: the
program's map is rewritten in place; a new rate, queue or lag rebuilds the
qdisc (what it held is dropped, as a real link re-provisioned would)."""

import json
import os
import signal
import subprocess
import time

import mrfab_bpf

LANE_CLASS = 0x10020  # tc classid 1:20, the reorder lane
LANE_QUEUE = 256 * 1024


class LinkError(Exception):
    pass


def run(ns, *args, check=True):
    cmd = ["ip", "netns", "exec", ns] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise LinkError("%s: %s: %s" % (ns, " ".join(args),
                                        (r.stderr or r.stdout).strip()))
    return r.stdout


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def _shaped(d, s):
    return d["hook"] == "egress" and s["rate"] > 0


def run_batch(ns, tool, lines, js=False):
    """Many ip or tc commands in a namespace, one process: building a
    fabric runs hundreds of them."""
    if not lines:
        return ""
    r = subprocess.run(["ip", "netns", "exec", ns, "tc"] +
                       (["-j"] if js else []) + ["-batch", "-"]
                       if tool == "tc" else
                       ["ip", "-n", ns, "-batch", "-"],
                       input="\n".join(lines) + "\n", capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise LinkError("%s: %s" % (ns, (r.stderr or r.stdout).strip()))
    return r.stdout


def attach_lines(d, bpf_obj):
    """tc -batch lines that attach the program to a direction's hook."""
    return ["qdisc replace dev %s clsact" % d["dev"],
            "filter add dev %s %s pref 1 bpf da obj %s sec tc"
            % (d["dev"], d["hook"], bpf_obj)]


def attach_found(d, shown, ifindex):
    """Record the program tc attached (its `filter show -j` output) and
    its maps."""
    ids = [x["options"]["prog"]["id"] for x in shown
           if "options" in x and "prog" in x["options"]]
    if len(ids) != 1:
        raise LinkError("%s %s %s: expected one program, tc shows %d"
                        % (d["ns"], d["dev"], d["hook"], len(ids)))
    maps = mrfab_bpf.prog_maps(ids[0])
    for m in ("mrfab_cfg", "mrfab_stats"):
        if m not in maps:
            raise LinkError("%s %s: program %d has no map %s"
                            % (d["ns"], d["dev"], ids[0], m))
    d["prog"] = ids[0]
    d["cfg_map"], d["stats_map"] = maps["mrfab_cfg"], maps["mrfab_stats"]
    d["ifindex"] = ifindex


def _delivered_raw(d, b, q):
    """(packets, bytes) delivered onto the link by the counter that sees
    it last: the real queue's transmissions where there is one, else what
    the program passed on."""
    if "1:" in q:
        return q["1:"]["packets"], q["1:"]["bytes"]
    return b["tx_pkts"], b["tx_bytes"]


def delivered(d, b, q):
    """What the direction delivered since it was made: the raw counter
    plus what earlier queues (rebuilt by set) delivered (dbase)."""
    p, n = _delivered_raw(d, b, q)
    base = d.get("dbase", [0, 0, 0])
    return p + base[0], n + base[1]


def set_qdisc(d, s, mtu):
    """Rebuild a direction's queue now (a changed rate, queue or lag). What
    the old queue delivered and tail-dropped stays counted (dbase)."""
    q = qdisc_stats(d)
    before = delivered(d, mrfab_bpf.read_stats(d["stats_map"]), q)
    base = d.setdefault("dbase", [0, 0, 0])
    base[2] += sum(v.get("drops", 0) for k, v in q.items()
                   if k in ("10:", "20:"))
    run(d["ns"], "tc", "qdisc", "del", "dev", d["dev"], "root",
        check=False)
    run_batch(d["ns"], "tc", qdisc_lines(d, s, mtu))
    now = _delivered_raw(d, mrfab_bpf.read_stats(d["stats_map"]),
                         qdisc_stats(d))
    base[0], base[1] = before[0] - now[0], before[1] - now[1]


def qdisc_lines(d, s, mtu):
    """The real queue of a router's egress, as tc -batch lines: HTB at the
    link rate into a bfifo of the queue size (drop-tail), and the reorder
    lane (a class of its own whose rate makes a full-size frame lag by
    `lane`). None where the direction is unshaped."""
    dev = d["dev"]
    if not _shaped(d, s):
        return []
    rate = s["rate"]
    # One ms of the rate as burst, at least two frames: HTB's default
    # (from HZ=250) lets 4 ms of traffic through at once.
    burst = max(2 * (mtu + 14), rate // 8000)
    lane = max(int((mtu + 14) * 8 / s["lane"]), 1_000_000)
    return [" ".join(args) for args in (
        ["qdisc", "add", "dev", dev, "root", "handle", "1:", "htb",
         "default", "10"],
        ["class", "add", "dev", dev, "parent", "1:", "classid", "1:10",
         "htb", "rate", str(rate), "ceil", str(rate), "burst", str(burst),
         "cburst", str(burst), "quantum", "65536"],
        ["qdisc", "add", "dev", dev, "parent", "1:10", "handle", "10:",
         "bfifo", "limit", str(s["queue"])],
        ["class", "add", "dev", dev, "parent", "1:", "classid", "1:20",
         "htb", "rate", str(lane), "ceil", str(lane), "burst",
         str(2 * (mtu + 14)), "cburst", str(2 * (mtu + 14)),
         "quantum", str(mtu + 14)],
        ["qdisc", "add", "dev", dev, "parent", "1:20", "handle", "20:",
         "bfifo", "limit", str(LANE_QUEUE)],
    )]


def down_window(d, s, now):
    """[from, until) of the link's down time after applying the state and
    the timed keys of s (relative seconds) at now."""
    frm, until = d.get("down", (0, 0))
    if "state" in s:
        frm, until = (0, mrfab_bpf.FOREVER) if s["state"] == "down" \
            else (0, 0)
    if "down_at" in s:
        frm = now + int(s["down_at"] * 1e9)
        if "up_at" not in s:
            until = mrfab_bpf.FOREVER
    if "up_at" in s:
        t = now + int(s["up_at"] * 1e9)
        if "down_at" not in s and not frm <= now < until:
            frm = 0  # not down now: the window ends at t (empty)
            t = 0
        until = t
    return frm, until


def write_cfg(d, s):
    shaped = _shaped(d, s)
    frm, until = d["down"]
    mrfab_bpf.write_cfg(d["cfg_map"], {
        "down_from": frm, "down_until": until,
        "rate_bps": s["rate"],
        "ecn_bytes": s["ecn"] if s["rate"] else 0,
        # Without a real queue behind it the phantom queue is the queue.
        "police_bytes": 0 if shaped or not s["rate"] else s["queue"],
        "loss": mrfab_bpf.prob32(s["loss"]),
        "corrupt": mrfab_bpf.prob32(s["corrupt"]),
        "dup": mrfab_bpf.prob32(s["dup"]),
        "reorder": mrfab_bpf.prob32(s["reorder"]) if shaped else 0,
        "lane_prio": LANE_CLASS if shaped else 0,
        "ifindex": d["ifindex"],
        "ingress": 1 if d["hook"] == "ingress" else 0,
        "delay_ns": int(round(s.get("delay", 0) * 1e9)),
        "delay_ifindex": d.get("delay_ifindex", 0),
    })


def delay_alive(d):
    pid = d.get("delay_pid")
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def delay_start(d, tap, mtu, stats_file, delay_bin):
    """Start the direction's delay line (mrfab_delay.c) in its namespace:
    a tap named tap that the program redirects IP packets to. Records
    delay_pid, delay_tap and delay_ifindex in d."""
    p = subprocess.Popen(
        ["ip", "netns", "exec", d["ns"], delay_bin, tap, d["hook"],
         d["dev"], str(d["cfg_map"]), str(mtu), stats_file],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True, text=True)
    line = p.stdout.readline().split()
    if len(line) != 2 or line[0] != "ready":
        err = p.stderr.read().strip() if p.wait(timeout=5) is not None \
            else ""
        raise LinkError("%s %s: delay line did not start: %s"
                        % (d["ns"], d["dev"], err or "no reply"))
    # ip netns exec execs the program: the pid is the delay line's.
    d["delay_pid"], d["delay_tap"] = p.pid, tap
    d["delay_ifindex"] = int(line[1])
    d["delay_stats"] = stats_file
    p.stdout.close()
    p.stderr.close()


def delay_reread(d):
    """The delay line reads the new delay from the map (SIGHUP)."""
    if delay_alive(d):
        os.kill(d["delay_pid"], signal.SIGHUP)


def delay_stop(d):
    """End the delay line (its tap goes with it); True if none is left."""
    if not delay_alive(d):
        return True
    os.kill(d["delay_pid"], signal.SIGTERM)
    # Its exit closes the tap, and the kernel unregisters the tap's netdev
    # under the RTNL lock: with namespaces being deleted beside it (a CI
    # run) that took over 2 s ("could not remove delay line"). 10 s.
    for _ in range(500):
        if not delay_alive(d):
            return True
        time.sleep(0.02)
    return False


def delay_stats(d):
    """The delay line's counters (in, out, dropped, held_bytes...)."""
    try:
        with open(d["delay_stats"]) as fh:
            return json.load(fh)
    except (KeyError, OSError, ValueError):
        return {}


def state_now(d, now=None):
    frm, until = d["down"]
    now = now_ns() if now is None else now
    return "down" if frm <= now < until else "up"


def qdisc_stats(d):
    """{handle: {drops, backlog, packets, bytes}} of the direction's
    qdiscs (empty when unshaped)."""
    out = {}
    try:
        q = json.loads(run(d["ns"], "tc", "-s", "-j", "qdisc", "show",
                           "dev", d["dev"]) or "[]")
    except (LinkError, ValueError):
        return out
    for x in q:
        out[x.get("handle", "")] = {
            "drops": x.get("drops", 0), "backlog": x.get("backlog", 0),
            "packets": x.get("packets", 0), "bytes": x.get("bytes", 0)}
    return out
