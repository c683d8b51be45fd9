#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/fabric_soak.sh: a soak through a routed fabric, not in CI.
# Two hosts, two planes of two leaves and two spines, 5% of packets lost
# end to end (2.5% on each host link direction), plane 2 down for 10 s of
# every 30 s; mri-verbs (WRITE, READ, SEND, atomics, every byte checked)
# runs again and again for DURATION seconds, with the provider and
# mri-verbs built with AddressSanitizer + LeakSanitizer in ASAN_BUILD.
# Pass: every run passes, no sanitizer report, no leak, the counters
# consistent (no error completion on a data run; retransmissions fewer
# than packets sent; every path's packets counted by the engine).
# Writes OUT (default bench/wire/fabric_soak.md).
# Root. Usage: bench/wire/fabric_soak.sh [DURATION_S] (default 600)
#   ASAN_BUILD=dir   the sanitizer build (default build-asan; made with
#                    meson setup -Db_sanitize=address,undefined if absent)
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
DUR=${1:-600}
AB=${ASAN_BUILD:-build-asan}
OUT=${OUT:-$TOP/bench/wire/fabric_soak.md}
[ "$(id -u)" -eq 0 ] || { echo "fabric_soak.sh: needs root" >&2; exit 1; }
if [ ! -f "$AB/build.ninja" ]; then
	meson setup "$AB" -Db_sanitize=address,undefined -Db_lundef=false \
		>/dev/null || exit 1
fi
ninja -C "$AB" >/dev/null || exit 1
AB=$(cd "$AB" && pwd)
CTL=$AB/utils/metaroce-ctl
RUN=$AB/utils/metaroce-run
FAB=$AB/utils/metaroce-fabric/metaroce-fabric
VERBS=$AB/tests/integration/mri-verbs
ASAN_LIB=$(gcc -print-file-name=libasan.so)
W=$(mktemp -d /tmp/fabsoak.XXXXXX)
chmod 755 "$W"
export METAROCE_FABRIC_DIR=$W/fabric METAROCE_RUNDIR=$W/run
NAME=fs$$
NAME=${NAME:0:8}
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 -- "-$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	ip netns exec "$NAME-a" "$CTL" link del mrsa >/dev/null 2>&1
	ip netns exec "$NAME-b" "$CTL" link del mrsb >/dev/null 2>&1
	"$FAB" -f "$NAME" down >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

cat >"$W/f.conf" <<EOF
name $NAME
planes 2
leaves 2
spines 2
host a leaf=1
host b leaf=2
link * rate=2gbit queue=512k ecn=128k
link p*/a-l1 loss=2.5%
link p*/b-l2 loss=2.5%
EOF
"$FAB" up "$W/f.conf" || exit 1
ports="--port net_af_packet0,iface=p1 --port net_af_packet1,iface=p2"
# shellcheck disable=SC2086
ip netns exec "$NAME-a" "$CTL" link add mrsa $ports --ip 10.200.0.1/32 || exit 1
# shellcheck disable=SC2086
ip netns exec "$NAME-b" "$CTL" link add mrsb $ports --ip 10.200.0.2/32 || exit 1

# The flapping plane: down for 10 s at the start of every 30 s.
(
	while :; do
		"$FAB" -f "$NAME" set 'p2/*' down up_at=10 >/dev/null
		sleep 30
	done
) &
PIDS+=($!)

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
t0=$(date +%s)
runs=0
failed=0
reports=0
steps=0
while [ $(($(date +%s) - t0)) -lt "$DUR" ]; do
	runs=$((runs + 1))
	seed=$((0x5eed + runs)) # both sides model the same data
	setsid ip netns exec "$NAME-a" env LD_PRELOAD="$ASAN_LIB" \
		timeout -k 5 300 "$RUN" "$VERBS" server -d mrsa -s $seed \
		>"$W/srv.$runs" 2>&1 &
	spid=$!
	PIDS+=($spid)
	for _ in $(seq 300); do
		ip netns exec "$NAME-a" ss -Hltn "sport = :18600" | grep -q . && break
		sleep 0.1
	done
	ip netns exec "$NAME-b" env LD_PRELOAD="$ASAN_LIB" \
		timeout -k 5 300 "$RUN" "$VERBS" client -d mrsb -n 60 \
		-s $seed 10.254.1.1 >"$W/cli.$runs" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	n=$(grep -c "memory ok" "$W/srv.$runs")
	steps=$((steps + n))
	r=$(grep -lE "AddressSanitizer|LeakSanitizer|runtime error" \
		"$W/srv.$runs" "$W/cli.$runs" | wc -l)
	reports=$((reports + r))
	if [ $crc -ne 0 ] || [ $src -ne 0 ] || [ "$r" -ne 0 ] ||
		grep -q FAIL "$W/cli.$runs" "$W/srv.$runs"; then
		failed=$((failed + 1))
		cp "$W/cli.$runs" "/tmp/fabsoak-fail-cli.$runs"
		cp "$W/srv.$runs" "/tmp/fabsoak-fail-srv.$runs"
		echo "run $runs: client $crc, server $src, $r sanitizer reports (logs in /tmp/fabsoak-fail-*.$runs)"
	fi
done
elapsed=$(($(date +%s) - t0))
ip netns exec "$NAME-b" "$CTL" stats mrsb --last --json >"$W/cli.json"
consistent=$(python3 - "$W/cli.json" <<'EOP'
import json, sys
c = [p["counters"] for p in json.load(open(sys.argv[1]))["processes"]][0]
e = c["engine"]
bad = []
if e["cqe_err"]:
    bad.append("cqe_err %d" % e["cqe_err"])
if e["retx_pkts"] >= e["tx_pkts"]:
    bad.append("retx %d >= tx %d" % (e["retx_pkts"], e["tx_pkts"]))
if sum(p["tx_pkts"] for p in c["paths"]) > e["tx_pkts"]:
    bad.append("paths sum above the engine's tx_pkts")
print("yes (last run: tx_pkts %d, retx_pkts %d, sack_holes %d, timeouts %d)"
      % (e["tx_pkts"], e["retx_pkts"], e["sack_holes"], e["timeouts"])
      if not bad else "NO: " + ", ".join(bad))
EOP
)
"$FAB" -f "$NAME" stats >"$W/fab.txt"
{
	echo "# bench/wire/fabric_soak: mri-verbs through a flapping lossy fabric"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$TOP" rev-parse --short HEAD), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Command: \`bench/wire/fabric_soak.sh $DUR\` (root; ASan+UBSan build in $(basename "$AB"))."
	echo
	echo "Two planes of 2 leaves + 2 spines, 2.5% loss on every host link direction"
	echo "(5% end to end), plane 2 down 10 s of every 30 s; mri-verbs client -n 60"
	echo "(WRITE, READ, SEND, atomics; every byte checked) again and again."
	echo
	echo "| | |"
	echo "| --- | --- |"
	echo "| time | $elapsed s |"
	echo "| runs | $runs ($failed failed) |"
	echo "| steps verified by the server | $steps |"
	echo "| sanitizer reports (errors, leaks) | $reports |"
	echo "| counters consistent | $consistent |"
	echo
	echo "The fabric at the end (host links):"
	echo
	echo '```'
	grep -E '^(link|p[12]/(a>l1|l1>a|b>l2|l2>b))' "$W/fab.txt"
	echo '```'
} >"$OUT"
cat "$OUT"
[ "$failed" -eq 0 ] && [ "$reports" -eq 0 ]
