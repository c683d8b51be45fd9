#!/usr/bin/env bash
# metaroce-ctl stats. First on counters files the test writes (every byte
# of the output compared), in a network namespace of its own: the stats
# directory (mode 1777), no such device, never used, in use by one and by
# two processes (each shown, and their sum), files of processes gone
# (removed, except the last run's for --last; runs told apart by their
# writers' start, also with real programs run twice), a file planted for another
# user's process, stale, malformed, usage errors. Then real traffic
# between two emulated hosts: the engine's counters (retransmissions,
# SACK holes, NAKs, drops by reason) and the use of each path, live and
# after the end, also from a program run by an unprivileged user.
. "$(dirname "$0")/lib.sh"
cli_init "$@"
need_root
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
cli_own_netns

ip link add v0 type veth peer name v1
expect_ok "add mr0" "$CTL" link add mr0 --port net_af_packet0,iface=v0 \
	--ip 192.0.2.1/24
# Names that only contain another provider's prefix are ours.
expect_ok "add mr-rxe (not claimed by rxe)" "$CTL" link add mr-rxe \
	--port net_af_packet1,iface=v1 --ip 192.0.2.2/24
expect_ok "add Rxe1 (matching is case-sensitive)" "$CTL" link add Rxe1 \
	--port net_af_packet2,iface=lo --ip 192.0.2.3/24 --mac 02:00:00:00:00:03
out=$("$RUN" ibv_devices 2>&1)
check "ibv_devices lists mr-rxe" "^ +mr-rxe[[:space:]]+[0-9a-f]{16}$" "$out"
expect_ok "del mr-rxe" "$CTL" link del mr-rxe
expect_ok "del Rxe1" "$CTL" link del Rxe1
node=$("$CTL" link show mr0 --json | sed -n 's/.*"node": "\([^"]*\)".*/\1/p')
dir=$(echo "$METAROCE_RUNDIR"/net-*/sysfs/class/infiniband/mr0)
[ -c "/dev/infiniband/$node" ] && [ -d "$dir" ] && pass "node $node" ||
	fail "node '$node' dir '$dir'"
D=$dir/stats
m=$(stat -c '%a %U' "$D" 2>&1)
[ "$m" = "1777 root" ] && pass "stats directory: mode 1777" ||
	fail "stats directory: '$m'"

expect_err "no such device" "^metaroce-ctl: no MetaRoCE device mr9 in this network namespace$" \
	"$CTL" stats mr9
expect_err "never used" "^metaroce-ctl: device mr0 is not in use \(no counters written yet" \
	"$CTL" stats mr0
expect_err "missing name" "stats: missing device NAME" "$CTL" stats
expect_err "unknown option" "unknown option '--frob' for stats" \
	"$CTL" stats mr0 --frob
expect_err "two names" "unexpected argument 'mr1'" "$CTL" stats mr0 mr1
expect_err "bad name" "invalid device name 'a/b'" "$CTL" stats a/b
"$CTL" stats >/dev/null 2>&1
[ $? = 2 ] && pass "usage error: exit 2" || fail "usage error exit status"

# Pids of processes that are gone.
dead() { sh -c 'exit 0' & local p=$!; wait $p; echo $p; }
DEAD1=$(dead)
DEAD2=$(dead)
DEAD3=$(dead)

# What lib/dp/mrdp_stats.c writes, with two planes and distinct numbers
# (K scales every counter, so that two files differ).
counters() { # PID K
	local k=$2
	echo "{\"device\":\"mr0\",\"pid\":$1,\"loopback_pkts\":$((1 * k)),\"neigh_entries\":$((2 * k)),\"neigh_resolved\":3,\"progress_rounds\":4,\"inline_rounds\":5,\"sleeps\":6,\"planes\":[{\"plane\":0,\"rx_pkts\":$((10 * k)),\"rx_bytes\":11,\"tx_pkts\":12,\"tx_bytes\":13,\"rx_ecn_ce\":14,\"rx_frames\":15,\"arp_req_rx\":16,\"arp_req_tx\":17,\"arp_reply_rx\":18,\"arp_reply_tx\":19,\"rx_drop\":{\"short\":20,\"not_ipv4\":21},\"tx_drop\":{\"no_buffer\":22,\"port\":$((9223372036854775807 / k))}},{\"plane\":1,\"rx_pkts\":30,\"rx_bytes\":31,\"tx_pkts\":32,\"tx_bytes\":33,\"rx_ecn_ce\":34,\"rx_frames\":35,\"arp_req_rx\":36,\"arp_req_tx\":37,\"arp_reply_rx\":38,\"arp_reply_tx\":39,\"rx_drop\":{},\"tx_drop\":{\"no_buffer\":42}}],\"engine\":{\"retx_pkts\":$((7 * k)),\"sack_holes\":8,\"nak_sent_rnr\":9},\"paths\":[{\"path\":0,\"plane\":0,\"tx_pkts\":$((50 * k)),\"retx_pkts\":51},{\"path\":1,\"plane\":1,\"tx_pkts\":52,\"retx_pkts\":53}]}"
}
BODY='    loopback_pkts            1
    neigh_entries            2
    neigh_resolved           3
    progress_rounds          4
    inline_rounds            5
    sleeps                   6
    plane 0:
        rx_pkts                  10
        rx_bytes                 11
        tx_pkts                  12
        tx_bytes                 13
        rx_ecn_ce                14
        rx_frames                15
        arp_req_rx               16
        arp_req_tx               17
        arp_reply_rx             18
        arp_reply_tx             19
        rx_drop:
            short                    20
            not_ipv4                 21
        tx_drop:
            no_buffer                22
            port                     9223372036854775807
    plane 1:
        rx_pkts                  30
        rx_bytes                 31
        tx_pkts                  32
        tx_bytes                 33
        rx_ecn_ce                34
        rx_frames                35
        arp_req_rx               36
        arp_req_tx               37
        arp_reply_rx             38
        arp_reply_tx             39
        rx_drop:
        tx_drop:
            no_buffer                42
    engine:
        retx_pkts                7
        sack_holes               8
        nak_sent_rnr             9
    path 0:
        plane                    0
        tx_pkts                  50
        retx_pkts                51
    path 1:
        plane                    1
        tx_pkts                  52
        retx_pkts                53'
eq() { [ "$2" = "$3" ] && pass "$1" || { fail "$1:"; diff <(echo "$3") <(echo "$2"); }; }

# A process that has ended left its file long ago.
counters $DEAD1 1 >"$D/metaroce.stats.$DEAD1"
touch -d "2026-01-02 03:04:05 UTC" "$D/metaroce.stats.$DEAD1"
expect_err "written long ago, nobody holds it" \
	"^metaroce-ctl: device mr0 is not in use \(counters last written 2026-01-02 03:04:05 UTC, [0-9]+ s ago; --last shows them\)$" \
	"$CTL" stats mr0
out=$("$CTL" stats mr0 --last 2>&1)
eq "--last: header" "$(head -2 <<<"$out" | sed 's/([0-9.]* s ago)/(N s ago)/')" \
	"mr0: node $node, NOT in use
process $DEAD1 (ended), counters written 2026-01-02 03:04:05 UTC (N s ago)"
eq "--last: every counter" "$(tail -n +3 <<<"$out")" "$BODY"

# Files of processes gone: the last run's stay (files without a start,
# as an older writer's: the newest, and those within 10 s of it), older
# ones and temporary files go; other names are not ours.
counters $DEAD2 1 >"$D/metaroce.stats.$DEAD2"
touch -d "2026-01-02 03:04:30 UTC" "$D/metaroce.stats.$DEAD2"
counters $DEAD3 1 >"$D/metaroce.stats.$DEAD3"
touch -d "2026-01-02 03:04:21 UTC" "$D/metaroce.stats.$DEAD3"
echo x >"$D/metaroce.stats.$DEAD1.tmp"
echo x >"$D/notes"
out=$("$CTL" stats mr0 --last 2>&1)
eq "cleaning: what is left" "$(cd "$D" && ls | sort)" \
	"$(printf '%s\n' metaroce.stats.$DEAD2 metaroce.stats.$DEAD3 notes | sort)"
check "cleaning: both kept files shown" \
	"^process $DEAD2 \(ended\), counters written 2026-01-02 03:04:30 UTC" "$out"
check "cleaning: their sum" "^sum of 2 processes:$" "$out"
rm -f "$D"/*

# Runs told apart by when each writer started ("started_ns"), not by pid
# nor by a window: a run (pid DEAD6) that ended a second before the next
# one started goes; the last run is the file written last (DEAD4) and
# those that ran alongside it (DEAD5: written after DEAD4 started).
DEAD4=$(dead)
DEAD5=$(dead)
DEAD6=$(dead)
run() { # PID K STARTED WRITTEN
	counters "$1" "$2" |
		sed "s/\"pid\":$1,/&\"started_ns\":$(date -d "$3" +%s%N),/" \
			>"$D/metaroce.stats.$1"
	touch -d "$4" "$D/metaroce.stats.$1"
}
run $DEAD6 1 "2026-01-02 03:05:00 UTC" "2026-01-02 03:05:02 UTC"
run $DEAD4 2 "2026-01-02 03:05:03 UTC" "2026-01-02 03:05:06 UTC"
run $DEAD5 3 "2026-01-02 03:05:01.5 UTC" "2026-01-02 03:05:04 UTC"
out=$("$CTL" stats mr0 --last 2>&1)
eq "runs: the earlier run's file is gone" "$(cd "$D" && ls | sort)" \
	"$(printf '%s\n' metaroce.stats.$DEAD4 metaroce.stats.$DEAD5 | sort)"
expect_err "runs: not in use" \
	"^metaroce-ctl: device mr0 is not in use \(counters last written 2026-01-02 03:05:06 UTC, [0-9]+ s ago; --last shows them\)$" \
	"$CTL" stats mr0
eq "runs: --last shows the last run, each with its start" \
	"$(grep -E '^(mr0|process|sum)' <<<"$out" | sed 's/([0-9.]* s ago)/(N s ago)/')" \
	"mr0: node $node, NOT in use
process $DEAD4 (ended), started 2026-01-02 03:05:03 UTC, counters written 2026-01-02 03:05:06 UTC (N s ago)
process $DEAD5 (ended), started 2026-01-02 03:05:01 UTC, counters written 2026-01-02 03:05:04 UTC (N s ago)
sum of 2 processes:"
check "runs: the sum is the last run's" "^    loopback_pkts +5$" \
	"$(sed -n '/^sum of/,$p' <<<"$out")"
check_not "runs: the start is not a counter" "started_ns" "$out"
out=$("$CTL" stats mr0 --last --json 2>&1)
python3 - "$DEAD4" "$DEAD5" <<PY && pass "runs: --last --json" || fail "runs --json: $out"
import json, sys
j = json.loads('''$out''')
ps = j["processes"]
assert [p["pid"] for p in ps] == sorted(int(a) for a in sys.argv[1:3]), ps
assert [p["started"] for p in ps] == ["2026-01-02T03:05:03Z", "2026-01-02T03:05:01Z"], ps
assert ps[0]["counters"]["started_ns"] == 1767323103000000000, ps[0]
assert j["written"] == "2026-01-02T03:05:06Z", j
assert "started_ns" not in j["counters"] and j["counters"]["loopback_pkts"] == 5, j
PY
check_not "runs: --prom has no start" "started" "$("$CTL" stats mr0 --last --prom 2>&1)"
rm -f "$D"/*

# Another process holds the node open, as a verbs program does, and
# writes its counters.
# shellcheck disable=SC2217 # sleep holds the node open, as a verbs program
sleep 300 <"/dev/infiniband/$node" &
HOLD=$!
cli_on_exit "kill $HOLD"
S=$D/metaroce.stats.$HOLD
counters $HOLD 1 >"$S"
out=$("$CTL" stats mr0 2>&1)
eq "in use: header" "$(head -2 <<<"$out" | sed 's/written .* UTC (.* s ago)/written T/')" \
	"mr0: node $node, in use by pid $HOLD (sleep)
process $HOLD (sleep), counters written T"
eq "in use: every counter" "$(tail -n +3 <<<"$out")" "$BODY"
touch "$S"
out=$("$CTL" stats mr0 --json 2>&1)
python3 - "$HOLD" "$node" "$S" <<PY && pass "--json: wrapper and every counter" || fail "--json: $out"
import json, sys
j = json.loads('''$out''')
f = json.load(open(sys.argv[3]))
pid = int(sys.argv[1])
assert j["device"] == "mr0" and j["node"] == sys.argv[2], j
assert j["in_use"] is True and j["pids"] == [pid], j
assert 0 <= j["age_s"] < 5 and j["written"].endswith("Z"), j
assert len(j["processes"]) == 1, j
p = j["processes"][0]
assert p["pid"] == pid and p["comm"] == "sleep" and p["live"] is True, p
assert p["running"] is True, p
assert p["counters"] == f, p
del f["pid"]
assert j["counters"] == f, j["counters"]
PY

# A file for a live process of another user's making is not that
# process's: ignored.
chown 65534 "$S"
expect_err "planted file: ignored" \
	"^metaroce-ctl: device mr0 is open by pid $HOLD but has no counters yet: its datapath has not started$" \
	"$CTL" stats mr0
chown 0 "$S"

# Two processes: each shown, and the sum (identifiers kept, counters
# added, a sum that would overflow saturates).
# shellcheck disable=SC2217 # sleep holds the node open, as a verbs program
sleep 300 <"/dev/infiniband/$node" &
HOLD2=$!
cli_on_exit "kill $HOLD2"
S2=$D/metaroce.stats.$HOLD2
touch "$S"
counters $HOLD2 3 >"$S2"
# (Files count as live for 5 s: a loaded machine may take that long
# between two checks, so each check makes them fresh.)
out=$("$CTL" stats mr0 2>&1)
p1=$(grep -n "^process $HOLD " <<<"$out" | cut -d: -f1)
p2=$(grep -n "^process $HOLD2 " <<<"$out" | cut -d: -f1)
ps=$(grep -n "^sum of 2 processes:$" <<<"$out" | cut -d: -f1)
if [ -n "$p1" ] && [ -n "$p2" ] && [ -n "$ps" ]; then
	eq "two: first process" \
		"$(sed -n "$((p1 + 1)),$((p1 + $(wc -l <<<"$BODY")))p" <<<"$out")" \
		"$BODY"
	check "two: header" "^mr0: node $node, in use by pid ($HOLD|$HOLD2) \(sleep\), ($HOLD|$HOLD2) \(sleep\)$" "$out"
	sum=$(sed -n "$((ps + 1)),\$p" <<<"$out")
	check "two: sum of loopback_pkts" "^    loopback_pkts +4$" "$sum"
	check "two: sum of neigh_resolved" "^    neigh_resolved +6$" "$sum"
	check "two: sum of plane 0 rx_pkts" "^        rx_pkts +40$" "$sum"
	check "two: plane 1 stays plane 1" "^    plane 1:$" "$sum"
	check "two: sum of retransmissions" "^        retx_pkts +28$" "$sum"
	check "two: sum of path 0 tx_pkts" "^        tx_pkts +200$" "$sum"
	check "two: path 1 on plane 1" "^        plane +1$" "$sum"
	check "two: sum of port drops" "^            port +12297829382473034409$" "$sum"
else
	fail "two processes: sections missing: $out"
fi
touch "$S" "$S2"
out=$("$CTL" stats mr0 --json 2>&1)
python3 - "$S" "$S2" <<PY && pass "--json: two processes and their sum" || fail "--json two: $out"
import json, sys
j = json.loads('''$out''')
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def add(x, y, key=None):
    if isinstance(x, dict):
        return {k: add(x[k], y[k], k) for k in x}
    if isinstance(x, list):
        return [add(u, v) for u, v in zip(x, y)]
    if key in ("device", "plane", "path"):
        return x
    return x + y
assert [p["counters"] for p in j["processes"]] == sorted([a, b], key=lambda c: c["pid"])
del a["pid"], b["pid"]
assert j["counters"] == add(a, b), j["counters"]
PY
# --prom: the same sum in Prometheus's text format, grouped by name, each
# name's TYPE line once, identifiers as labels.
touch "$S" "$S2"
prom=$("$CTL" stats mr0 --prom 2>&1)
python3 - "$S" "$S2" <<PY && pass "--prom: every number of the sum, labelled" || fail "--prom: $prom"
import json, re, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
text = """$prom"""
seen, samples, last, helps, help_for = set(), {}, None, {}, None
for line in text.splitlines():
    # HELP (from the counter tables), then TYPE, once per name.
    m = re.match(r'^# HELP (\S+) (\S.*)$', line)
    if m:
        assert m.group(1) not in helps, "two HELP lines for " + m.group(1)
        helps[m.group(1)] = m.group(2); help_for = m.group(1); continue
    m = re.match(r'^# TYPE (\S+) untyped$', line)
    if m:
        assert m.group(1) not in seen, "two TYPE lines for " + m.group(1)
        assert help_for in (None, m.group(1)), "HELP of another name: " + line
        help_for = None
        seen.add(m.group(1)); last = m.group(1); continue
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} (\S+)$', line)
    assert m, "bad line: " + line
    assert m.group(1) == last, "not grouped: " + line
    samples[(m.group(1), m.group(2))] = m.group(3)
dev = 'device="mr0"'
assert samples[("metaroce_processes", dev)] == "2"
def s(name, lab=""):
    return int(samples[(name, dev + lab)])
assert s("metaroce_sleeps") == a["sleeps"] + b["sleeps"]
assert s("metaroce_plane_rx_pkts", ',plane="0"') == a["planes"][0]["rx_pkts"] + b["planes"][0]["rx_pkts"]
assert s("metaroce_plane_rx_drop_short", ',plane="0"') == a["planes"][0]["rx_drop"]["short"] + b["planes"][0]["rx_drop"]["short"]
assert s("metaroce_engine_retx_pkts") == a["engine"]["retx_pkts"] + b["engine"]["retx_pkts"]
p0 = a["paths"][0]
assert s("metaroce_path_tx_pkts", ',path="0",plane="%d"' % p0["plane"]) == p0["tx_pkts"] + b["paths"][0]["tx_pkts"]
assert not any(k[0] in ("metaroce_plane_plane", "metaroce_path_path", "metaroce_pid") for k in samples)
# Every counter of the tables has its help: engine, plane, drop reason, path, device.
for name in ("metaroce_engine_retx_pkts", "metaroce_engine_nak_sent_rnr",
             "metaroce_plane_rx_pkts", "metaroce_plane_rx_drop_short",
             "metaroce_path_tx_pkts", "metaroce_sleeps", "metaroce_processes"):
    assert helps.get(name), "no HELP for " + name
assert set(helps) <= seen
PY
expect_err "--json and --prom together" "stats: --json or --prom, not both" "$CTL" stats mr0 --json --prom
# A sum past 2^64 - 1 saturates.
counters $HOLD2 3 | sed 's/"sleeps":6/"sleeps":18446744073709551615/' >"$S2"
touch "$S"
check "sum saturates" "^    sleeps +18446744073709551615$" \
	"$("$CTL" stats mr0 2>&1 | sed -n '/^sum of/,$p')"
rm -f "$S2"
kill $HOLD2
wait $HOLD2 2>/dev/null

# Held, but not written for an hour: the datapath is gone.
touch -d "-1 hour" "$S"
expect_err "held but stale" \
	"^metaroce-ctl: device mr0 is not in use: open by pid $HOLD, but its datapath is not running \(counters last written .*, 3[0-9]{3} s ago; --last shows them\)$" \
	"$CTL" stats mr0
mv "$S" "$D/keep"
expect_err "held, no counters yet" \
	"^metaroce-ctl: device mr0 is open by pid $HOLD but has no counters yet: its datapath has not started$" \
	"$CTL" stats mr0
mv "$D/keep" "$S"

# (A \u escape is valid JSON: json-c reads it.)
for bad in '{"device":"mr0",' '{"a":1}x' '[1,2]' '{"a":1,,}' \
	'{"a":tru e}' ''; do
	printf '%s' "$bad" >"$S"
	expect_err "malformed file: '$bad'" \
		"^metaroce-ctl: .*/mr0/stats/metaroce.stats.$HOLD is malformed: .* at byte [0-9]+$" \
		"$CTL" stats mr0 --last
done
# One byte over the reader's limit (read from its header, not restated).
max=$(sed -n 's/^#define MRCTL_STATS_MAX (\(.*\))$/\1/p' \
	"$(dirname "$0")/../../utils/metaroce-ctl/mr_ctl_stats.h")
[ -n "$max" ] || fail "MRCTL_STATS_MAX not found in mr_ctl_stats.h"
truncate -s $((max + 1)) "$S"
expect_err "oversized file" "metaroce.stats.$HOLD: File too large" \
	"$CTL" stats mr0 --last
rm -f "$S"
ln -s /etc/passwd "$S"
expect_err "a symlink is not a counters file" \
	"device mr0 is open by pid $HOLD but has no counters yet" \
	"$CTL" stats mr0 --last
counters $HOLD 1 >"$S"
chown 65534 "$S"
kill $HOLD
wait $HOLD 2>/dev/null
expect_ok "del mr0 (with a user's counters file)" "$CTL" link del mr0
[ ! -e "$dir" ] && pass "del: the view is gone" || fail "del: $dir left"
expect_err "gone with its device" "no MetaRoCE device mr0" "$CTL" stats mr0

# --- Real traffic between two hosts.
prov=$(dirname "$RUN")/../providers/metaroce/libmetaroce-rdmav34.so
if ! command -v ibv_rc_pingpong >/dev/null || ! command -v ss >/dev/null ||
	[ ! -f "$prov" ]; then
	fail "real traffic: ibv_rc_pingpong, ss or the provider missing"
	cli_done
fi
cli_two_hosts

# A pingpong server in A; while its client in B runs, A's counters are
# live. Both programs run long enough to be seen on a fast machine too:
# counters are written once a second, and 3,000 round trips took less
# than that here when idle (CLI_STATS_ITERS overrides).
N=${CLI_STATS_ITERS:-20000}
inA timeout -k 5 "$CLI_T" "$RUN" ibv_rc_pingpong -d $DEV_A -g 0 -n $N \
	-p 18520 >"$TMP/live.srv" 2>&1 &
spid=$!
PIDS+=("$spid")
for _ in $(seq 200); do
	inA ss -Hltn "sport = :18520" 2>/dev/null | grep -q . && break
	sleep 0.1
done
inB timeout -k 5 "$CLI_T" "$RUN" ibv_rc_pingpong -d $DEV_B -g 0 -n $N \
	-p 18520 $TCP_A >"$TMP/live.cli" 2>&1 &
cpid=$!
PIDS+=("$cpid")
live=
for _ in $(seq 150); do
	out=$(inA "$CTL" stats $DEV_A --json 2>/dev/null) &&
		grep -q '"rx_data_pkts": *[1-9]' <<<"$out" && { live=$out; break; }
	sleep 0.1
done
if [ -n "$live" ]; then
	python3 - <<PY && pass "live: engine and path counters of the server" || fail "live: $live"
import json
j = json.loads('''$live''')
assert j["in_use"] is True and len(j["processes"]) == 1, j
c = j["counters"]
e = c["engine"]
for k in ("retx_pkts", "sack_holes", "timeouts", "duplicates", "ecn_ce_rcvd",
          "nak_sent_rnr", "nak_rcvd_seq_err", "drop_unknown_qp",
          "drop_parse_icrc", "drop_access"):
    assert k in e, k
assert e["tx_pkts"] > 0 and e["rx_pkts"] > 0 and e["rx_data_pkts"] > 0, e
p = c["paths"]
assert len(p) >= 1 and p[0]["path"] == 0 and p[0]["plane"] == 0, p
assert sum(x["tx_pkts"] for x in p) > 0 and sum(x["rx_pkts"] for x in p) > 0, p
assert c["planes"][0]["rx_pkts"] > 0 and c["planes"][0]["tx_pkts"] > 0
PY
else
	fail "live: no counters with traffic seen: $out"
fi
wait $cpid
CRC=$?
wait $spid
SRC=$?
[ $SRC = 0 ] && [ $CRC = 0 ] && pass "pingpong: both ended well" ||
	{ fail "pingpong: server $SRC client $CRC"; cat "$TMP"/live.*; }
# After the end: --last shows what the server counted, path use included
# (QPs destroyed before the last write keep their share).
out=$(inA "$CTL" stats $DEV_A --last --json 2>&1)
python3 - $N <<PY && pass "--last: counts of $N round trips" || fail "--last: $out"
import json, sys
n = int(sys.argv[1])
j = json.loads('''$out''')
assert j["in_use"] is False and j["processes"][0]["live"] is False, j
assert j["processes"][0]["running"] is False, j
assert j["processes"][0]["comm"] == "", j
c = j["counters"]
e = c["engine"]
assert e["msgs_sent"] >= n and e["msgs_rcvd"] >= n, e
assert e["cqe_ok"] >= 2 * n and e["cqe_err"] == 0, e
assert sum(x["tx_pkts"] for x in c["paths"]) >= n, c["paths"]
assert sum(x["rx_pkts"] for x in c["paths"]) >= n, c["paths"]
assert c["planes"][0]["rx_pkts"] >= n, c["planes"]
PY

# The same programs again, shorter, right after: --last is this run's
# server alone (the first run's ended before it started), then two at
# once: both of that run, and their sum.
lastrun() { # DESC PROCESSES MIN_MSGS MAX_MSGS
	out=$(inA "$CTL" stats $DEV_A --last --json 2>&1)
	python3 - "$2" "$3" "$4" <<PY && pass "$1" || fail "$1: $out"
import json, sys
k, lo, hi = (int(a) for a in sys.argv[1:4])
j = json.loads('''$out''')
ps = j["processes"]
assert len(ps) == k, [(p["pid"], p["started"], p["written"]) for p in ps]
assert all(p["started"] <= p["written"] for p in ps), ps
assert lo <= j["counters"]["engine"]["msgs_sent"] <= hi, j["counters"]["engine"]
PY
}
cli_pair again 18522 ibv_rc_pingpong -d $DEV_A -g 0 -n 300 -p 18522 -- \
	ibv_rc_pingpong -d $DEV_B -g 0 -n 300 -p 18522 $TCP_A
[ $SRC = 0 ] && [ $CRC = 0 ] || fail "second run: server $SRC client $CRC"
lastrun "--last after a second run: that run's alone" 1 300 $((N - 1))
two=()
for p in 18523 18524; do
	inA timeout -k 5 "$CLI_T" "$RUN" ibv_rc_pingpong -d $DEV_A -g 0 \
		-n $(((p - 18522) * 300)) -p $p >"$TMP/two.$p.srv" 2>&1 &
	two+=("$!")
done
for p in 18523 18524; do
	for _ in $(seq 200); do
		inA ss -Hltn "sport = :$p" 2>/dev/null | grep -q . && break
		sleep 0.1
	done
done
for p in 18523 18524; do
	inB timeout -k 5 "$CLI_T" "$RUN" ibv_rc_pingpong -d $DEV_B -g 0 \
		-n $(((p - 18522) * 300)) -p $p $TCP_A >"$TMP/two.$p.cli" 2>&1 &
	two+=("$!")
done
PIDS+=("${two[@]}")
rc=0
for p in "${two[@]}"; do wait "$p" || rc=1; done
[ $rc = 0 ] && pass "two at once: all ended well" ||
	{ fail "two at once"; cat "$TMP"/two.*; }
lastrun "--last after two at once: both, summed" 2 900 1199

# An unprivileged user's program (uid 65534; only the capabilities an
# af_packet port needs) writes its counters too: the client in B.
if command -v setpriv >/dev/null; then
	cli_pair nr 18521 ibv_rc_pingpong -d $DEV_A -g 0 -n 200 -p 18521 -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		--inh-caps +net_raw,+net_admin,+ipc_lock \
		--ambient-caps +net_raw,+net_admin,+ipc_lock \
		ibv_rc_pingpong -d $DEV_B -g 0 -n 200 -p 18521 $TCP_A
	if [ $SRC = 0 ] && [ $CRC = 0 ]; then
		pass "pingpong with an unprivileged client"
		f=$(ls -n "$METAROCE_RUNDIR"/net-*/sysfs/class/infiniband/$DEV_B/stats/)
		check "client's file: owned by uid 65534" \
			"^-rw-r--r-- 1 65534 65534 .* metaroce\.stats\.[0-9]+$" "$f"
		out=$(inB "$CTL" stats $DEV_B --last --json 2>&1)
		python3 - <<PY && pass "unprivileged client: counters" || fail "unprivileged: $out"
import json
j = json.loads('''$out''')
e = j["counters"]["engine"]
assert e["msgs_sent"] >= 200 and e["cqe_err"] == 0, e
PY
	else
		fail "unprivileged client: server $SRC client $CRC"
		cat "$TMP"/nr.*
	fi
else
	echo "note: no setpriv: the unprivileged writer is not tested"
fi
cli_done
