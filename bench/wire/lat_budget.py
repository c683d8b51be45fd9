#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/lat_budget.py: the per-stage latency budget of one ping-pong
# from `perf script -F comm,pid,tid,cpu,time,event,trace` of a window with
# the events sys_enter/exit_sendto, sched_waking and sched_switch (what
# lat_budget.sh records). Application threads are perftest's ("ib_*"),
# progress threads "mrdp-*". Prints medians (us) and counts per one-way:
# the sends (any thread's) of one process, from its first to the other
# process's first. LB_DEVS (environment): the two devices' names, as
# lat_budget.sh gives them: the processes of their progress threads
# (mrdp-DEVICE) count, others' benches on the machine are left out;
# without it, every process with an "ib_*" or "mrdp-*" thread (an
# ib_read_lat responder's application never runs: only its thread).
# Counting only the applications' own sends (as before) missed every
# one-way whose frame a progress thread sent (all of ib_read_lat's
# answers).
import collections
import os
import re
import sys

LINE = re.compile(r'\s*(\S+)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+?):?\s+(.*)')


def q(v):
    v = sorted(v)
    n = len(v)
    if not n:
        return 'n=0'
    return 'p50 %.1f p90 %.1f (n=%d)' % (v[n // 2], v[n * 9 // 10], n)


def main():
    ev = []
    for line in sys.stdin:
        m = LINE.match(line)
        if m:
            comm, pid, tid, cpu, t, e, a = m.groups()
            ev.append((float(t) * 1e6, comm, int(pid), int(tid), int(cpu),
                       e.split(':')[-1], a))
    if not ev:
        sys.exit('lat_budget.py: no events')
    kind = {}
    devs = os.environ.get('LB_DEVS', '').split()
    procs = set()
    for _, comm, pid, tid, _, _, _ in ev:
        kind[tid] = 'app' if comm.startswith('ib_') else \
            'thread' if comm.startswith('mrdp') else 'other'
        if (devs and any(comm == ('mrdp-' + x)[:15] for x in devs)) or \
                (not devs and kind[tid] != 'other'):
            procs.add(pid)
    entered, dur = {}, collections.defaultdict(list)
    sends = []
    woken, wake = {}, collections.defaultdict(list)
    running, runs = {}, collections.defaultdict(list)
    preempt = collections.Counter()
    for t, comm, pid, tid, cpu, e, a in ev:
        # net_af_packet0 transmits with sendto, net_mrpkt0 with sendmmsg.
        if e in ('sys_enter_sendto', 'sys_enter_sendmmsg'):
            entered[tid] = t
            if pid in procs:
                sends.append((t, pid))
        elif e in ('sys_exit_sendto', 'sys_exit_sendmmsg') and \
                tid in entered:
            dur[kind[tid]].append(t - entered.pop(tid))
        elif e in ('sched_waking', 'sched_wakeup'):
            m = re.search(r'comm=(\S+) pid=(\d+)', a)
            if m and m.group(1).startswith('mrdp'):
                woken[int(m.group(2))] = (t, cpu)
        elif e == 'sched_switch':
            m = re.search(r'prev_comm=(\S+) prev_pid=(\d+) .*prev_state=(\S+)'
                          r' ==> next_comm=(\S+) next_pid=(\d+)', a)
            if not m:
                continue
            prev, state, nxt = int(m.group(2)), m.group(3), int(m.group(5))
            if prev in running:
                runs[kind.get(prev, 'other')].append(t - running.pop(prev))
            running[nxt] = t
            if nxt in woken:
                wt, wc = woken.pop(nxt)
                wake['same core' if wc == cpu else 'other core'].append(
                    t - wt)
                if kind.get(prev) == 'app' and state.startswith('R'):
                    preempt['app preempted by a progress thread'] += 1
    # The first send of each process's run of sends.
    firsts = [s for i, s in enumerate(sends)
              if i == 0 or sends[i - 1][1] != s[1]]
    oneway = [b[0] - a[0] for a, b in zip(firsts, firsts[1:])]
    n = max(len(oneway), 1)
    span = (ev[-1][0] - ev[0][0]) / 1e6
    print('window %.2f s, %d one-ways (%.0f/s)' % (span, len(oneway),
                                                  len(oneway) / span))
    print('one-way, a process\'s first send to the peer\'s first:',
          q(oneway))
    for k in sorted(dur):
        print('sendto duration, %s: %s; per one-way %.2f' %
              (k, q(dur[k]), len(dur[k]) / n))
    for k in sorted(wake):
        print('progress thread wakeup -> running, woken from the %s: %s; '
              'per one-way %.2f' % (k, q(wake[k]), len(wake[k]) / n))
    print('progress thread run per switch-in:', q(runs['thread']))
    for k, v in preempt.items():
        print('%s: per one-way %.2f' % (k, v / n))


if __name__ == '__main__':
    main()
