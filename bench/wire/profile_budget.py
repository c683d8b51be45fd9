#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The cost budget table of bench/wire/profile.sh from its raw data.

Arguments: report.txt (perf report -t '|' --sort tid,dso,sym), stat.csv
(perf stat -x, --per-thread), client pid, server pid, "tx rx" datapath
counters of the client at the window's start and end, the same for the
server, window start and end (s), CPU GHz, perftest's average MB/s.
"""
import re
import sys
from collections import defaultdict

(rep, statf, cli, srv, c0, c1, s0, s1, t0, t1, ghz, mbs) = sys.argv[1:13]
cli, srv = int(cli), int(srv)
secs = float(t1) - float(t0)
ghz = float(ghz)
c0, c1, s0, s1 = ([int(x) for x in v.split()] for v in (c0, c1, s0, s1))
# Packets of each side in the window: what it sent plus what it polled.
pk = {"client": (c1[0] - c0[0], c1[1] - c0[1]),
      "server": (s1[0] - s0[0], s1[1] - s0[1])}
# The packet count a stage's cost is divided by: the data packets of the
# connection in the window, from perftest's average (MB/s, steady over a
# -D run) at 4096 payload bytes a packet. The counters files are written
# once a second, so their deltas (printed as a cross-check) are +-1 s.
data_pkts = max(int(float(mbs) * 1048576 / 4096 * secs), 1)

STAGES = ["application", "provider", "core", "datapath", "libc", "kernel"]


def stage(dso, sym):
    if dso.startswith("[kernel") or sym.startswith("[k]"):
        return "kernel"
    s = re.sub(r"^\[\.\] ", "", sym)
    if s.startswith("mrdp_") or s.startswith("rte_") or "af_packet" in s \
            or s.startswith("eth_") or s.startswith("bucket_") \
            or s.startswith("common_ring") or s.startswith("__rte"):
        return "datapath"
    if s.startswith("mr_") or "crc32c" in s or s.startswith("eng_"):
        return "core"
    if s.startswith("metaroce_"):
        return "provider"
    if "libc" in dso:
        return "libc"
    if "libmetaroce" in dso:
        # Static helpers of the provider's own files, or DPDK inlines.
        return "provider"
    return "application"


# tid -> (side, thread kind)
def who(tid, comm):
    side = None
    if comm.startswith("mrdp-"):
        side = "client" if comm.endswith("a") else "server"
        return side, "progress thread"
    return None, comm


samples = defaultdict(float)  # (tid, comm, stage) -> samples
tids = {}
total = 0
for line in open(rep):
    if line.startswith("#") or "|" not in line:
        continue
    f = [x.strip() for x in line.split("|")]
    if len(f) < 5:
        continue
    try:
        n = float(f[1])
    except ValueError:
        continue
    m = re.match(r"\s*(\d+):(.*)", f[2])
    if not m:
        continue
    tid, comm = int(m.group(1)), m.group(2).strip()
    samples[(tid, comm, stage(f[3], f[4]))] += n
    tids[tid] = comm
    total += n

# Thread -> side: main threads are the pids; progress threads by name;
# other threads (eal-intr-thread) by elimination are rare and left out.
def side_of(tid, comm):
    if tid == cli:
        return "client", "application thread"
    if tid == srv:
        return "server", "application thread"
    s, kind = who(tid, comm)
    return s, kind



# System calls per thread from perf stat -x, --per-thread: "comm-tid,
# value,unit,event,...".
sysc = defaultdict(lambda: defaultdict(float))
for line in open(statf):
    f = line.strip().split(",")
    if len(f) < 4 or line.startswith("#"):
        continue
    m = re.match(r"(.*)-(\d+)$", f[0])
    if not m:
        continue
    try:
        v = float(f[1])
    except ValueError:
        continue
    sysc[int(m.group(2))][f[3]] += v

print()
print("Packets in the window (%.2f s): client tx %d rx %d, server tx %d rx %d;"
      " costs per data packet (%d)" % (secs, pk["client"][0], pk["client"][1],
                                       pk["server"][0], pk["server"][1],
                                       data_pkts))
print()
print("| side | thread | " + " | ".join(STAGES) + " | total ns | cycles"
      " | syscalls | of which sendto / ppoll / futex / sched_yield |")
print("| --- | --- | " + " | ".join("---:" for _ in STAGES) +
      " | ---: | ---: | ---: | --- |")
rows = sorted({(side_of(t, c), t) for (t, c, _) in samples},
              key=lambda x: (str(x[0][0]), x[0][1]))
for (side, kind), tid in rows:
    if side is None:
        continue
    comm = tids[tid]
    sc = sysc.get(tid, {})
    # The thread's CPU time per packet (perf stat, exact over the window)
    # split by the stages' shares of its samples (perf record).
    nsamp = sum(samples.get((tid, comm, s), 0) for s in STAGES)
    tot = sc.get("task-clock", 0) * 1e6 / data_pkts
    per = {s: (samples.get((tid, comm, s), 0) / nsamp * tot if nsamp else 0)
           for s in STAGES}

    def c(ev):
        return sc.get("syscalls:sys_enter_" + ev, 0) / data_pkts
    allsc = sc.get("raw_syscalls:sys_enter", 0) / data_pkts
    print("| %s | %s | " % (side, kind) +
          " | ".join("%.0f" % per[s] for s in STAGES) +
          " | %.0f | %.0f | %.3f | %.3f / %.3f / %.3f / %.3f |" %
          (tot, tot * ghz, allsc, c("sendto"), c("ppoll"), c("futex"),
           c("sched_yield")))
print()
print("ns of CPU per data packet: each thread's task-clock (perf stat) over"
      " the window's data packets, split by the stages' shares of its"
      " cpu-clock samples (perf record -a -F 2000, %d samples of these"
      " threads); cycles at %.2f GHz nominal." % (total, ghz))
