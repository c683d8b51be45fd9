#!/usr/bin/env bash
# metaroce-ctl stats on a device whose counters file is written by the
# test (every byte of the output compared), in a network namespace of its
# own: no such device, never used, in use (the test holds the node open),
# stale, --last, --json, a malformed file, usage errors. Live counters of
# real traffic are checked in test_chan.sh.
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
S=$dir/metaroce.stats

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

# What lib/dp/mrdp_stats.c writes, with two planes and distinct numbers.
cat >"$S" <<'J'
{"device":"mr0","loopback_pkts":1,"neigh_entries":2,"neigh_resolved":3,"progress_rounds":4,"inline_rounds":5,"sleeps":6,"planes":[{"plane":0,"rx_pkts":10,"rx_bytes":11,"tx_pkts":12,"tx_bytes":13,"rx_ecn_ce":14,"rx_frames":15,"arp_req_rx":16,"arp_req_tx":17,"arp_reply_rx":18,"arp_reply_tx":19,"rx_drop":{"short":20,"not_ipv4":21},"tx_drop":{"no_buffer":22,"port":18446744073709551615}},{"plane":1,"rx_pkts":30,"rx_bytes":31,"tx_pkts":32,"tx_bytes":33,"rx_ecn_ce":34,"rx_frames":35,"arp_req_rx":36,"arp_req_tx":37,"arp_reply_rx":38,"arp_reply_tx":39,"rx_drop":{},"tx_drop":{"no_buffer":42}}]}
J
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
            port                     18446744073709551615
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
            no_buffer                42'

# Nobody holds the node, the file is old.
touch -d "2026-01-02 03:04:05 UTC" "$S"
expect_err "written long ago, nobody holds it" \
	"^metaroce-ctl: device mr0 is not in use \(counters last written 2026-01-02 03:04:05 UTC, [0-9]+ s ago; --last shows them\)$" \
	"$CTL" stats mr0
out=$("$CTL" stats mr0 --last 2>&1)
eq() { [ "$2" = "$3" ] && pass "$1" || { fail "$1:"; diff <(echo "$3") <(echo "$2"); }; }
eq "--last: header" "$(head -2 <<<"$out" | sed 's/([0-9.]* s ago)/(N s ago)/')" \
	"mr0: node $node, NOT in use
    counters written 2026-01-02 03:04:05 UTC (N s ago)"
eq "--last: every counter" "$(tail -n +3 <<<"$out")" "$BODY"

# Fresh, but nobody holds the node: the program has ended.
touch "$S"
expect_err "fresh file, nobody holds the node" \
	"^metaroce-ctl: device mr0 is not in use \(counters last written .* UTC, [0-9]+ s ago" \
	"$CTL" stats mr0

# Another process holds the node open, as a verbs program does.
sleep 300 <"/dev/infiniband/$node" &
HOLD=$!
cli_on_exit "kill $HOLD"
touch "$S"
out=$("$CTL" stats mr0 2>&1)
eq "in use: header" "$(head -2 <<<"$out" | sed 's/written .* UTC (.* s ago)/written T/')" \
	"mr0: node $node, in use by pid $HOLD (sleep)
    counters written T"
eq "in use: every counter" "$(tail -n +3 <<<"$out")" "$BODY"
out=$("$CTL" stats mr0 --json 2>&1)
python3 - "$HOLD" "$node" <<PY && pass "--json: wrapper and every counter" || fail "--json: $out"
import json, sys
j = json.loads('''$out''')
f = json.load(open("$S"))
assert j["device"] == "mr0" and j["node"] == sys.argv[2], j
assert j["in_use"] is True and j["pids"] == [int(sys.argv[1])], j
assert 0 <= j["age_s"] < 5 and j["written"].endswith("Z"), j
assert j["counters"] == f, j["counters"]
assert j["counters"]["planes"][0]["tx_drop"]["port"] == 2**64 - 1
PY

# Held, but not written for an hour: the datapath is gone.
touch -d "-1 hour" "$S"
expect_err "held but stale" \
	"^metaroce-ctl: device mr0 is not in use: open by pid $HOLD, but its datapath is not running \(counters last written .*, 3[0-9]{3} s ago; --last shows them\)$" \
	"$CTL" stats mr0
mv "$S" "$S.keep"
expect_err "held, no counters yet" \
	"^metaroce-ctl: device mr0 is open by pid $HOLD but has no counters yet: its datapath has not started, or the program cannot write .*/mr0/metaroce.stats \(programs of users other than root cannot\)$" \
	"$CTL" stats mr0
mv "$S.keep" "$S"
kill $HOLD
wait $HOLD 2>/dev/null

for bad in '{"device":"mr0",' '{"a":1}x' '[1,2]' '{"a":1,,}' '{"a":"\u0041"}' \
	'{"a":tru e}' ''; do
	printf '%s' "$bad" >"$S"
	expect_err "malformed file: '$bad'" \
		"^metaroce-ctl: .*/mr0/metaroce.stats is malformed: .* at byte [0-9]+$" \
		"$CTL" stats mr0 --last
done
head -c 70000 /dev/zero | tr '\0' ' ' >"$S"
expect_err "oversized file" "metaroce.stats: File too large" \
	"$CTL" stats mr0 --last
rm -f "$S"
expect_ok "del mr0" "$CTL" link del mr0
expect_err "gone with its device" "no MetaRoCE device mr0" "$CTL" stats mr0
cli_done
