#!/usr/bin/env bash
# Completion channels (the preload shim's mr_chan_shim.c): unmodified
# programs that sleep on CQ events - ibv_rc_pingpong -e and perftest's
# ib_send_bw -e - run between two emulated hosts through metaroce-run.
# Then metaroce-ctl stats on the counters that real traffic left, and on
# a device in use.
. "$(dirname "$0")/lib.sh"
cli_init "$@"
need_root
for t in ibv_rc_pingpong ib_send_bw ss; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
prov=$(dirname "$RUN")/../providers/metaroce/libmetaroce-rdmav34.so
[ -f "$prov" ] || { echo "FAIL: provider not built: $prov"; exit 1; }
cli_two_hosts

# The channel seen by a program of our own: pipe, close-on-exec, EAGAIN
# when empty, EBUSY with a CQ, an event for a loopback WRITE.
CHAN_VERBS=${3:-}
if [ -x "$CHAN_VERBS" ]; then
	out=$(inA timeout -k 5 "$CLI_T" "$RUN" "$CHAN_VERBS" $DEV_A 2>&1)
	rc=$?
	echo "$out" | sed 's/^/  chan_verbs: /'
	[ $rc = 0 ] && pass "chan_verbs: channel lifecycle and a CQ event" ||
		fail "chan_verbs exit $rc"
else
	fail "no chan_verbs program given"
fi

# pair_ok DESC LOG: both sides exited 0; else show their logs.
pair_ok() {
	if [ "$SRC" = 0 ] && [ "$CRC" = 0 ]; then
		pass "$1"
		return 0
	fi
	fail "$1: server exit $SRC, client exit $CRC (124: timeout)"
	sed 's/^/  server: /' "$TMP/$2.srv"
	sed 's/^/  client: /' "$TMP/$2.cli"
	return 1
}

N=200
cli_pair pp 18515 ibv_rc_pingpong -d $DEV_A -g 0 -e -n $N -- \
	ibv_rc_pingpong -d $DEV_B -g 0 -e -n $N $TCP_A
if pair_ok "ibv_rc_pingpong -g 0 -e" pp; then
	check "pingpong server: $N iterations" "^$N iters in [0-9.]+ seconds" \
		"$(cat "$TMP/pp.srv")"
	check "pingpong client: $N iterations" "^$N iters in [0-9.]+ seconds" \
		"$(cat "$TMP/pp.cli")"
	check_not "no channel error" "[Cc]ouldn't|[Ff]ailed" \
		"$(cat "$TMP/pp.srv" "$TMP/pp.cli")"
fi

cli_pair bw 18516 ib_send_bw -d $DEV_A -x 0 -F -e -n 100 -s 4096 -p 18516 \
	-- ib_send_bw -d $DEV_B -x 0 -F -e -n 100 -s 4096 -p 18516 $TCP_A
if pair_ok "ib_send_bw -e" bw; then
	row=$(awk '/^ *4096 +100 +/' "$TMP/bw.cli")
	check "ib_send_bw -e: a 4096-byte row of 100 iterations" "^ *4096 +100 " \
		"$row"
fi

# The counters ib_send_bw left (the last program on each device): 100
# SENDs of 4096 bytes from B to A, every byte of them counted.
for h in A B; do
	dev=DEV_$h
	out=$(in$h "$CTL" stats ${!dev} --last --json 2>&1)
	python3 - $h <<PY && pass "stats --last $h: traffic counted" ||
import json, sys
j = json.loads('''$out''')
assert j["in_use"] is False and j["pids"] == [], j
p = j["counters"]["planes"][0]
d = "tx" if sys.argv[1] == "B" else "rx"
assert p[d + "_pkts"] >= 100 and p[d + "_bytes"] >= 100 * 4096, p
assert p["arp_req_tx"] + p["arp_reply_tx"] >= 1, p
PY
		fail "stats --last $h: $out"
	expect_err "stats $h: not in use after the program ended" \
		"device ${!dev} is not in use \\(counters last written" \
		in$h "$CTL" stats ${!dev}
done

# A device in use: a pingpong server waits for its client.
inA timeout -k 5 "$CLI_T" "$RUN" ibv_rc_pingpong -d $DEV_A -g 0 -n 10 \
	-p 18517 >"$TMP/use.srv" 2>&1 &
spid=$!
PIDS+=("$spid")
for i in $(seq 100); do
	out=$(inA "$CTL" stats $DEV_A 2>&1) && break
	sleep 0.1
done
check "stats: in use by the server" \
	"^$DEV_A: node metaroce-[0-9]+-0, in use by pid [0-9]+ \(ibv_rc_pingpong\)$" \
	"$out"
check "stats: plane 0 counters" "^    plane 0:$" "$out"
check "stats: drops by reason" "^            not_ipv4 +[0-9]+$" "$out"
inB timeout -k 5 "$CLI_T" "$RUN" ibv_rc_pingpong -d $DEV_B -g 0 -n 10 \
	-p 18517 $TCP_A >"$TMP/use.cli" 2>&1
CRC=$?
wait $spid
SRC=$?
pair_ok "pingpong after stats" use
cli_done
