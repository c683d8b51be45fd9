# SPDX-License-Identifier: BSD-2-Clause
"""metaroce-fabric: a routed multi-plane fabric of network namespaces for
real MetaRoCE packets. Commands: up CONFIG, down, set, stats, show
(docs/fabric.md). A fabric's state lives in $METAROCE_FABRIC_DIR
(default /run/metaroce-fabric) as <name>.json, written before each piece
is made, so `down` removes everything even after a failed `up`."""

import argparse
import json
import os
import subprocess
import sys

import mrfab_config as cfg
import mrfab_link as link
import mrfab_topo as topo

PROG = "metaroce-fabric"


def state_dir():
    return os.environ.get("METAROCE_FABRIC_DIR", "/run/metaroce-fabric")


def state_path(name):
    return os.path.join(state_dir(), name + ".json")


def save(st):
    os.makedirs(state_dir(), mode=0o755, exist_ok=True)
    tmp = state_path(st["config"]["name"]) + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(st, fh, indent=1)
    os.replace(tmp, state_path(st["config"]["name"]))


def fabrics():
    try:
        return sorted(n[:-5] for n in os.listdir(state_dir())
                      if n.endswith(".json"))
    except FileNotFoundError:
        return []


def load(name):
    if name is None:
        up = fabrics()
        if not up:
            die("no fabric is up (metaroce-fabric up CONFIG)")
        if len(up) > 1:
            die("several fabrics are up (%s): name one with -f NAME"
                % ", ".join(up))
        name = up[0]
    try:
        with open(state_path(name)) as fh:
            return json.load(fh)
    except FileNotFoundError:
        die("no fabric '%s' is up (up: %s)" % (name,
                                                ", ".join(fabrics()) or
                                                "none"))


def die(msg):
    print("%s: %s" % (PROG, msg), file=sys.stderr)
    sys.exit(1)


def sh(*args):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise link.LinkError("%s: %s" % (" ".join(args),
                                         (r.stderr or r.stdout).strip()))
    return r.stdout


def existing_netns():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True,
                         text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


def delay_file(st, name):
    return os.path.join(state_dir(), "%s.%s.delay" % (
        st["config"]["name"], name.replace("/", "_").replace(">", "_")))


def ensure_delay(st, name, d, mtu):
    """A direction with a delay needs its delay line (started once, kept
    while the fabric is up: idle, it sleeps)."""
    if d["settings"].get("delay", 0) and not link.delay_alive(d):
        st["taps"] = st.get("taps", 0) + 1
        save(st)
        link.delay_start(d, "dly%d" % st["taps"], mtu, delay_file(st, name),
                         DELAY_BIN)
        save(st)


def teardown(st):
    """Stop the delay lines, delete every namespace of the fabric (their
    veths, taps, routes, qdiscs and programs go with them)."""
    failed = []
    for name, d in st.get("dirs", {}).items():
        if not link.delay_stop(d):
            failed.append("delay line %d of %s" % (d["delay_pid"], name))
        if d.get("delay_stats"):
            try:
                os.unlink(d["delay_stats"])
            except FileNotFoundError:
                pass
    have = existing_netns()
    for ns in reversed(st.get("netns", [])):
        if ns in have:
            r = subprocess.run(["ip", "netns", "del", ns],
                               capture_output=True, text=True)
            if r.returncode != 0:
                failed.append("%s (%s)" % (ns, r.stderr.strip()))
    return failed


def json_arrays(text):
    """The JSON arrays tc -j -batch prints one after the other."""
    dec, out, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        v, i = dec.raw_decode(text, i)
        out.append(v)


def cmd_up(a):
    try:
        f = cfg.parse(a.config)
    except cfg.ConfigError as e:
        die(str(e))
    bpf_obj = os.environ.get("METAROCE_FABRIC_BPF", BPF_OBJ)
    if not os.path.isfile(bpf_obj):
        die("the link program %s is missing (build with clang, "
            "scripts/deps.sh installs it)" % bpf_obj)
    if os.path.exists(state_path(f.name)):
        die("fabric '%s' is already up (metaroce-fabric -f %s down)"
            % (f.name, f.name))
    taken = existing_netns() & set(topo.namespaces(f))
    if taken:
        die("namespace %s exists already: another fabric or a leftover "
            "(ip netns del %s)" % (sorted(taken)[0], sorted(taken)[0]))
    st = {"config": f.to_dict(), "netns": [], "dirs": {}}
    save(st)
    try:
        for ns in topo.namespaces(f):
            st["netns"].append(ns)
            save(st)
            sh("ip", "netns", "add", ns)
        veths, sysctls, cmds = topo.build_steps(f)
        for ns, kv in sysctls.items():
            link.run(ns, "sysctl", "-qw", *kv)
        for nsa, ia, nsb, ib in veths:
            sh("ip", "link", "add", "name", ia, "netns", nsa, "type", "veth",
               "peer", "name", ib, "netns", nsb)
        for ns, lines in cmds.items():
            link.run_batch(ns, "ip", lines)
        # The links' programs and queues: one tc per namespace.
        per_ns = {}
        for name, cable, snd, rcv, p, ns, dev, hook in topo.directions(f):
            d = {"cable": cable, "plane": p, "from": snd, "to": rcv,
                 "ns": ns, "dev": dev, "hook": hook, "down": [0, 0]}
            s = cfg.settings_of(f, cable, name)
            d["settings"] = s
            d["down"] = list(link.down_window(d, s, link.now_ns()))
            st["dirs"][name] = d
            per_ns.setdefault(ns, []).append(d)
        for ns, ds in per_ns.items():
            lines = []
            for d in ds:
                if not any(x is not d and x["dev"] == d["dev"]
                           for x in ds[:ds.index(d)]):
                    lines.append("qdisc add dev %s clsact" % d["dev"])
                lines += link.attach_lines(d, bpf_obj)[1:]
                lines += link.qdisc_lines(d, d["settings"], f.mtu)
            link.run_batch(ns, "tc", lines)
            shown = link.run_batch(ns, "tc", [
                "filter show dev %s %s" % (d["dev"], d["hook"])
                for d in ds], js=True)
            arrays = json_arrays(shown)
            links = json.loads(link.run(ns, "ip", "-j", "link", "show"))
            index = {x["ifname"]: x["ifindex"] for x in links}
            if len(arrays) != len(ds):
                raise link.LinkError("%s: tc showed %d filters for %d links"
                                     % (ns, len(arrays), len(ds)))
            for d, arr in zip(ds, arrays):
                link.attach_found(d, arr, index[d["dev"]])
        for name, d in st["dirs"].items():
            ensure_delay(st, name, d, f.mtu)
            link.write_cfg(d, d["settings"])
            link.delay_reread(d)
        save(st)
    except (link.LinkError, OSError) as e:
        left = teardown(st)
        os.unlink(state_path(f.name))
        die("up: %s%s" % (e, "; could not remove: " + ", ".join(left)
                          if left else " (nothing is left behind)"))
    print("fabric %s is up: %d hosts, %d planes, %d leaves and %d spines "
          "per plane, %d links" % (f.name, len(f.hosts), f.planes, f.leaves,
                                   f.spines if f.leaves > 1 else 0,
                                   len(cfg.cables(f))))


def cmd_check(a):
    try:
        f = cfg.parse(a.config)
    except cfg.ConfigError as e:
        die(str(e))
    print("%s: fabric %s: %d hosts, %d planes, %d leaves and %d spines per "
          "plane, %d links" % (a.config, f.name, len(f.hosts), f.planes,
                               f.leaves, f.spines if f.leaves > 1 else 0,
                               len(cfg.cables(f))))


def cmd_down(a):
    names = [a.fabric] if a.fabric else fabrics()
    if a.fabric and a.fabric not in fabrics():
        die("no fabric '%s' is up" % a.fabric)
    if len(names) > 1:
        die("several fabrics are up (%s): name one with -f NAME"
            % ", ".join(names))
    if not names:
        print("no fabric is up")
        return
    st = load(names[0])
    left = teardown(st)
    if left:
        die("down: could not remove %s" % ", ".join(left))
    os.unlink(state_path(names[0]))
    print("fabric %s is down" % names[0])


def cmd_set(a):
    st = load(a.fabric)
    f = cfg.Fabric.from_dict(st["config"])
    try:
        new = cfg.parse_settings(a.settings, True, "set")
    except cfg.ConfigError as e:
        die(str(e))
    if not new:
        die("set %s: no setting given (e.g. loss=0.01, down, up_at=5)"
            % a.link)
    chosen = [n for n, d in st["dirs"].items()
              if cfg.matches(a.link, d["cable"], n)]
    if not chosen:
        die("set: '%s' names no link (see metaroce-fabric show)" % a.link)
    now = link.now_ns()
    try:
        for n in chosen:
            d = st["dirs"][n]
            s = d["settings"]
            old = dict(s)
            s.update({k: v for k, v in new.items()
                      if k not in cfg.TIMED_KEYS})
            d["down"] = list(link.down_window(d, new, now))
            if any(old[k] != s[k] for k in ("rate", "queue", "lane")):
                link.set_qdisc(d, s, f.mtu)
            ensure_delay(st, n, d, f.mtu)
            link.write_cfg(d, s)
            link.delay_reread(d)
    except (link.LinkError, OSError) as e:
        save(st)
        die("set: %s" % e)
    save(st)
    print("set %s on %d link direction%s" % (" ".join(a.settings),
                                             len(chosen),
                                             "" if len(chosen) == 1
                                             else "s"))


def fmt_rate(r):
    if r == 0:
        return "unlimited"
    for div, unit in ((1e9, "gbit"), (1e6, "mbit")):
        if r >= div:
            return "%g%s" % (r / div, unit)
    return "%dbit" % r


def fmt_size(b):
    return "%dk" % (b // 1024) if b % 1024 == 0 else str(b)


def describe(s, d):
    parts = ["rate=" + fmt_rate(s["rate"])]
    if s["rate"]:
        parts.append("queue=" + fmt_size(s["queue"]))
        parts.append("ecn=" + (fmt_size(s["ecn"]) if s["ecn"] else "off"))
    for k in ("loss", "corrupt", "dup", "reorder"):
        if s[k]:
            parts.append("%s=%g%%" % (k, s[k] * 100))
    if s.get("delay", 0):
        parts.append("delay=%gus" % round(s["delay"] * 1e6, 3))
    if s["reorder"] and not (d["hook"] == "egress" and s["rate"]):
        parts.append("(reorder needs a rate on a router's egress)")
    return " ".join(parts)


def when(t, now):
    return "now" if t <= now else "in %.1fs" % ((t - now) / 1e9)


def cmd_show(a):
    st = load(a.fabric)
    f = cfg.Fabric.from_dict(st["config"])
    now = link.now_ns()
    if a.json:
        hosts = [{"host": h, "netns": topo.ns_of(f, h, 0),
                  "mgmt_ip": topo.mgmt_ip(f, h),
                  "device_ip": topo.device_ip(f, h),
                  "ports": ["p%d" % p for p in range(1, f.planes + 1)],
                  "gateways": [topo.port_gw(f, h, p)
                               for p in range(1, f.planes + 1)]}
                 for h, _ in f.hosts]
        if f.ipv6:
            for x, (h, _) in zip(hosts, f.hosts):
                x["device_ip6"] = topo.device_ip6(f, h)
                x["gateways6"] = [topo.port_gw6(f, h, p)
                                  for p in range(1, f.planes + 1)]
        def window(d):
            # CLOCK_MONOTONIC seconds, as scripts' own clocks read them.
            frm, until = d["down"]
            if until <= frm or until <= now:
                return None, None
            return frm / 1e9, None if until >= 1 << 63 else until / 1e9
        links = [{"link": n, "cable": d["cable"], "netns": d["ns"],
                  "dev": d["dev"], "hook": d["hook"],
                  "state": link.state_now(d, now),
                  "down_from_s": window(d)[0],
                  "down_until_s": window(d)[1],
                  "settings": d["settings"]}
                 for n, d in st["dirs"].items()]
        print(json.dumps({"fabric": f.name, "planes": f.planes,
                          "hosts": hosts, "links": links}))
        return
    print("fabric %s: %d planes%s, %d leaves and %d spines per plane, mtu %d"
          % (f.name, f.planes, " (IPv4 and IPv6)" if f.ipv6 else "",
             f.leaves, f.spines if f.leaves > 1 else 0, f.mtu))
    for h, leaf in f.hosts:
        print("host %s: netns %s, mgmt %s, device address %s/32%s, ports %s "
              "(leaf l%d of every plane)"
              % (h, topo.ns_of(f, h, 0), topo.mgmt_ip(f, h),
                 topo.device_ip(f, h),
                 " and %s/128" % topo.device_ip6(f, h) if f.ipv6 else "",
                 " ".join("p%d" % p for p in range(1, f.planes + 1)), leaf))
    for n, d in st["dirs"].items():
        frm, until = d["down"]
        state = link.state_now(d, now)
        sched = ""
        if frm > now:
            sched = " (down %s%s)" % (when(frm, now), "" if until >=
                                      (1 << 63) else ", up " +
                                      when(until, now))
        elif state == "down" and until < (1 << 63):
            sched = " (up %s)" % when(until, now)
        print("link %-14s %-4s %s%s" % (n, state, describe(d["settings"], d),
                                        sched))


def collect(st):
    """Per direction: what arrived (pkts_in, bytes_in: after the delay
    line on an egress), what was delivered onto the link (pkts, bytes: the
    real queue's transmissions where there is one, else what the program
    and the delay line passed on) and what was dropped, by cause."""
    rows = []
    for n, d in st["dirs"].items():
        try:
            b = link.mrfab_bpf.read_stats(d["stats_map"])
        except OSError as e:
            die("stats: %s (is the fabric still up?)" % e)
        q = link.qdisc_stats(d)
        base = d.get("dbase", [0, 0, 0])
        qdrop = q.get("10:", {}).get("drops", 0)
        lane = q.get("20:", {}).get("drops", 0)
        ln = link.delay_stats(d) if d.get("delay_stats") else {}
        pkts, nbytes = link.delivered(d, b, q)
        if "1:" not in q:
            if d["hook"] == "ingress" and ln:
                # The line comes after the program there: what it
                # dropped was counted as passed but not delivered.
                pkts -= ln.get("dropped", 0)
                nbytes -= ln.get("dropped_bytes", 0)
        rows.append({
            "link": n, "cable": d["cable"], "state": link.state_now(d),
            "pkts_in": b["pkts"], "bytes_in": b["bytes"],
            "pkts": pkts, "bytes": nbytes,
            "ecn_marked": b["ecn_marked"],
            "drops": {"down": b["drop_down"], "loss": b["drop_loss"],
                      "queue": b["drop_police"] + qdrop + base[2],
                      "reorder_lane": lane,
                      "delay": ln.get("dropped", 0)},
            "corrupted": b["corrupted"], "duplicated": b["duplicated"],
            "reordered": b["reordered"],
            "backlog_bytes": q.get("10:", {}).get("backlog", 0),
            "delay": {"delay_us": d["settings"].get("delay", 0) * 1e6,
                      "delayed": b["delayed"],
                      "held_bytes": ln.get("held_bytes", 0)},
        })
    return rows


def ports(st):
    f = cfg.Fabric.from_dict(st["config"])
    out = []
    for h, _ in f.hosts:
        ns = topo.ns_of(f, h, 0)
        try:
            js = json.loads(link.run(ns, "ip", "-s", "-j", "link", "show"))
        except (link.LinkError, ValueError) as e:
            die("stats: %s" % e)
        by = {x["ifname"]: x.get("stats64", {}) for x in js}
        for p in range(1, f.planes + 1):
            s = by.get("p%d" % p, {})
            rx, tx = s.get("rx", {}), s.get("tx", {})
            out.append({"port": "%s/p%d" % (h, p), "host": h, "plane": p,
                        "tx_pkts": tx.get("packets", 0),
                        "tx_bytes": tx.get("bytes", 0),
                        "rx_pkts": rx.get("packets", 0),
                        "rx_bytes": rx.get("bytes", 0),
                        "rx_drops": rx.get("dropped", 0)})
    return out


def cmd_stats(a):
    st = load(a.fabric)
    rows, prt = collect(st), ports(st)
    if a.json:
        print(json.dumps({"fabric": st["config"]["name"], "links": rows,
                          "ports": prt}))
        return
    print("%-14s %-4s %10s %12s %8s %8s %8s %8s %7s %7s %6s %6s"
          % ("link", "", "pkts", "bytes", "ecn", "d.loss", "d.queue",
             "d.down", "d.delay", "corrupt", "dup", "reord"))
    for r in rows:
        print("%-14s %-4s %10d %12d %8d %8d %8d %8d %7d %7d %6d %6d"
              % (r["link"], r["state"], r["pkts"], r["bytes"],
                 r["ecn_marked"], r["drops"]["loss"], r["drops"]["queue"],
                 r["drops"]["down"], r["drops"]["delay"], r["corrupted"],
                 r["duplicated"], r["reordered"]))
    print("%-10s %10s %12s %10s %12s" % ("port", "tx_pkts", "tx_bytes",
                                          "rx_pkts", "rx_bytes"))
    for p in prt:
        print("%-10s %10d %12d %10d %12d" % (p["port"], p["tx_pkts"],
                                              p["tx_bytes"], p["rx_pkts"],
                                              p["rx_bytes"]))


def main(argv=None):
    try:
        _main(argv)
    except BrokenPipeError:
        # `show | head`: the reader went away; that is not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _main(argv):
    ap = argparse.ArgumentParser(
        prog=PROG, description="A routed multi-plane fabric of network "
        "namespaces for MetaRoCE: planes, leaf and spine routers, ECMP on "
        "the UDP source port, per-link rate, queue, ECN marking and "
        "impairments (docs/fabric.md).")
    ap.add_argument("-f", "--fabric", metavar="NAME",
                    help="which fabric (needed when several are up)")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    p = sub.add_parser("up", help="build the fabric of CONFIG")
    p.add_argument("config")
    p = sub.add_parser("check", help="check CONFIG, build nothing")
    p.add_argument("config")
    sub.add_parser("down", help="remove the fabric and everything it made")
    p = sub.add_parser("set", help="change links while traffic flows")
    p.add_argument("link", help="a link, direction or glob: p1/h1-l1, "
                   "p1/h1>l1, 'p2/*', '*'")
    p.add_argument("settings", nargs="*", metavar="KEY=VALUE",
                   help="rate= queue= ecn= loss= corrupt= dup= reorder= "
                   "lane= delay= state=up|down (or up, down) down_at=S "
                   "up_at=S")
    p = sub.add_parser("stats", help="counters per link and per port")
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("show", help="hosts, addresses and links")
    p.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if a.cmd == "check":
        return cmd_check(a)
    if os.geteuid() != 0:
        die("needs root (network namespaces, tc, bpf)")
    try:
        {"up": cmd_up, "down": cmd_down, "set": cmd_set, "stats": cmd_stats,
         "show": cmd_show}[a.cmd](a)
    except link.LinkError as e:
        die(str(e))


BPF_OBJ = None
DELAY_BIN = None
