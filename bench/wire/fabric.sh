#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/fabric.sh: unmodified ib_write_bw (64 KiB WRITEs, -D SECONDS)
# through routed fabrics made by metaroce-fabric, one run of each, written
# to OUT_DIR/fabric_results.md with data sets OUT_DIR/data/fabric_*.csv
# and plots OUT_DIR/fabric_*.svg:
#   1. loss: 4 planes of 2 leaves + 2 spines, 2 Gb/s links; random loss L
#      on each host's uplinks (data and ACK directions, so L end to end
#      each way), L = 0, 0.1, 1, 5, 10%; MetaRoCE and the go-back-N
#      baseline (--opt mode=gbn: RoCEv2's go-back-N on one path);
#   2. planes: 1, 2 and 4 planes of host - leaf - host, each 500 Mb/s,
#      against k x the one-plane figure;
#   3. incast: three senders into one receiver port of 1 Gb/s (queue 128
#      KiB, CE above 32 KiB): per-sender goodput, queue depth (sampled
#      every 50 ms), drops and ECN marks at the bottleneck;
#   4. recovery: 4 planes of 1 Gb/s, the busiest plane down for 7 s of a
#      24 s transfer, what the receiver's four ports received (delivered
#      bytes: the kernel's rx_bytes of each port) sampled every 50 ms:
#      time until the surviving planes carry 90% of their share again,
#      and until the returned plane carries half its share; both modes.
# Root. Usage: bench/wire/fabric.sh [BUILD_DIR] [SECONDS]  (default 8)
# OUT_DIR=dir (default bench/wire) for a trial run elsewhere.
# PARTS="loss planes incast recovery" (default all) measures only some;
# the tables of the others come from their data sets already in OUT_DIR.
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "fabric.sh: no build directory ${1:-build}" >&2; exit 1; }
SECS=${2:-8}
OUT_DIR=${OUT_DIR:-$TOP/bench/wire}
mkdir -p "$OUT_DIR/data" && OUT_DIR=$(cd "$OUT_DIR" && pwd) || exit 1
OUT=$OUT_DIR/fabric_results.md
DATA=$OUT_DIR/data
CTL=$B/utils/metaroce-ctl
RUN=$B/utils/metaroce-run
FAB=$B/utils/metaroce-fabric/metaroce-fabric
MOD=$TOP/utils/metaroce-fabric
SAMPLE=$TOP/bench/wire/fabric_sample.py
[ "$(id -u)" -eq 0 ] || { echo "fabric.sh: needs root" >&2; exit 1; }
[ -x "$FAB" ] || { echo "fabric.sh: no $FAB (build with clang)" >&2; exit 1; }
W=$(mktemp -d /tmp/fabbench.XXXXXX)
chmod 755 "$W"
export METAROCE_FABRIC_DIR=$W/fabric METAROCE_RUNDIR=$W/run
PIDS=()
DEVNS=()

log() { echo "fabric.sh: $*" >&2; }

undevs() {
	local ns
	for ns in "${DEVNS[@]}"; do
		ip netns exec "$ns" "$CTL" link del mr0 >/dev/null 2>&1
	done
	DEVNS=()
}

cleanup() {
	local p n
	for p in "${PIDS[@]}"; do
		kill -9 -- "-$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	undevs
	for n in "$METAROCE_FABRIC_DIR"/*.json; do
		[ -e "$n" ] || continue
		n=${n##*/}
		"$FAB" -f "${n%.json}" down >/dev/null 2>&1
	done
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

# up NAME: the fabric of $W/NAME.conf (written by the caller).
up() { "$FAB" up "$W/$1.conf" >&2 || exit 1; }
down() { undevs; "$FAB" -f "$1" down >/dev/null; }

# devs FABRIC NPORTS MODE HOST...: a device mr0 on each host (i-th host:
# 10.200.0.i), NPORTS ports p1..pN.
devs() {
	local f=$1 k=$2 mode=$3 i=0 h p ports
	shift 3
	ports=""
	for p in $(seq "$k"); do
		ports="$ports --port net_af_packet$((p - 1)),iface=p$p"
	done
	for h in "$@"; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		ip netns exec "$f-$h" "$CTL" link add mr0 $ports \
			--ip "10.200.0.$i/32" --opt "mode=$mode" >&2 || exit 1
		DEVNS+=("$f-$h")
	done
}

# serve NS PORT: an ib_write_bw server in NS on TCP PORT, in PIDS.
serve() {
	setsid ip netns exec "$1" timeout -k 5 $((SECS + 60)) "$RUN" \
		ib_write_bw -d mr0 -x 1 -F -s 65536 -D "$SECS" -p "$2" \
		--report_gbits >"$W/srv.$2" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 300); do
		ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q . && return
		sleep 0.1
	done
	log "no server on port $2: $(cat "$W/srv.$2")"
}

# client NS SERVER_IP PORT LOG: the client; its average Gb/s on stdout
# (empty if it failed).
client() {
	ip netns exec "$1" timeout -k 5 $((SECS + 60)) "$RUN" ib_write_bw \
		-d mr0 -x 1 -F -s 65536 -D "$SECS" -p "$3" --report_gbits "$2" \
		>"$4" 2>&1
	awk '$1 == 65536 && NF >= 4 {print $4}' "$4" | tail -1
}

# bw FABRIC: one ib_write_bw from host b to host a; Gb/s (or "fail").
bw() {
	local g
	serve "$1-a" 18515
	g=$(client "$1-b" 10.254.1.1 18515 "$W/cli.log")
	wait "${PIDS[-1]}" 2>/dev/null
	[ -n "$g" ] && echo "$g" || { log "run failed: $(tail -3 "$W/cli.log")"; echo fail; }
}

commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo ?)
[ -n "${PARTS:-}" ] && commit="$commit (parts: $PARTS; the others from an earlier run)"
machine="$(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date -u +%Y-%m-%dT%H:%MZ)

PARTS=${PARTS:-loss planes incast recovery}
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

# 1. loss ---------------------------------------------------------------
if part loss; then
cat >"$W/fbl.conf" <<EOF
name fbl
planes 4
leaves 2
spines 2
host a leaf=1
host b leaf=2
link * rate=2gbit queue=512k ecn=128k
EOF
up fbl
echo "loss_pct,metaroce_gbps,gbn_gbps" >"$DATA/fabric_loss.csv"
declare -A LOSS
for mode in metaroce gbn; do
	devs fbl 4 $mode a b
	for l in 0 0.1 1 5 10; do
		"$FAB" -f fbl set 'p*/a>l1' loss="$l%" >/dev/null
		"$FAB" -f fbl set 'p*/b>l2' loss="$l%" >/dev/null
		LOSS[$mode,$l]=$(bw fbl)
		log "loss $l% $mode: ${LOSS[$mode,$l]} Gb/s"
	done
	undevs
done
for l in 0 0.1 1 5 10; do
	echo "$l,${LOSS[metaroce,$l]},${LOSS[gbn,$l]}" >>"$DATA/fabric_loss.csv"
done
down fbl
fi

# 2. planes -------------------------------------------------------------
if part planes; then
cat >"$W/fbp.conf" <<EOF
name fbp
planes 4
leaves 1
host a leaf=1
host b leaf=1
link * rate=500mbit queue=256k ecn=64k
EOF
up fbp
echo "planes,gbps,k_times_one_gbps" >"$DATA/fabric_planes.csv"
one=
for k in 1 2 4; do
	devs fbp $k metaroce a b
	g=$(bw fbp)
	undevs
	[ -z "$one" ] && one=$g
	kx=$(awk -v o="$one" -v k="$k" 'BEGIN {printf "%.2f", o * k}')
	echo "$k,$g,$kx" >>"$DATA/fabric_planes.csv"
	log "planes $k: $g Gb/s (k x one: $kx)"
done
down fbp
fi

# 3. incast -------------------------------------------------------------
if part incast; then
sed 's/^name incast/name fbi/' utils/metaroce-fabric/configs/incast.conf >"$W/fbi.conf"
up fbi
devs fbi 1 metaroce tx1 tx2 tx3 rx
for i in 1 2 3; do serve fbi-rx $((18515 + i)); done
setsid python3 "$SAMPLE" qdepth fbi-p1l2 rx $((SECS + 8)) 0.05 \
	>"$DATA/fabric_incast_qdepth.csv" 2>/dev/null &
PIDS+=($!)
qpid=$!
cpids=()
for i in 1 2 3; do
	(client "fbi-tx$i" 10.254.4.1 $((18515 + i)) "$W/inc.$i" >"$W/inc.$i.g") &
	cpids+=($!)
done
wait "${cpids[@]}"
kill -- "-$qpid" 2>/dev/null
echo "sender,gbps" >"$DATA/fabric_incast.csv"
for i in 1 2 3; do
	echo "tx$i,$(cat "$W/inc.$i.g")" >>"$DATA/fabric_incast.csv"
done
"$FAB" -f fbi stats --json >"$W/inc.json"
python3 - "$W/inc.json" >"$W/inc.link" <<'EOP'
import json, sys
d = {r["link"]: r for r in json.load(open(sys.argv[1]))["links"]}["p1/l2>rx"]
print("%d,%d,%d,%d" % (d["pkts"], d["ecn_marked"], d["drops"]["queue"],
                       d["pkts_in"]))
EOP
{
	echo "pkts,ecn_marked,queue_drops,pkts_in"
	cat "$W/inc.link"
} >"$DATA/fabric_incast_link.csv"
down fbi
fi
IFS=, read -r inc_pkts inc_ecn inc_drop inc_in < <(tail -1 "$DATA/fabric_incast_link.csv")
inc_qmax=$(awk -F, 'NR > 1 && $2 > m {m = $2} END {print m + 0}' "$DATA/fabric_incast_qdepth.csv")
inc_qavg=$(awk -F, 'NR > 1 && $2 > 0 {s += $2; n++} END {printf "%d", n ? s / n : 0}' "$DATA/fabric_incast_qdepth.csv")

# 4. recovery -----------------------------------------------------------
RSECS=24
if part recovery; then
cat >"$W/fbr.conf" <<EOF
name fbr
planes 4
leaves 2
spines 2
host a leaf=1
host b leaf=2
link * rate=1gbit queue=256k ecn=64k
EOF
up fbr
echo "mode,plane,down_s,up_s,pre_gbps,during_gbps,recover_s,return_s,client" >"$DATA/fabric_recovery.csv"
for mode in metaroce gbn; do
	devs fbr 4 $mode a b
	serve fbr-a 18515
	csv=$DATA/fabric_recovery_$mode.csv
	setsid python3 "$SAMPLE" "$MOD" "$METAROCE_FABRIC_DIR/fbr.json" \
		$((RSECS + 12)) 0.05 p1/l1\>a p2/l1\>a p3/l1\>a p4/l1\>a >"$csv" &
	PIDS+=($!)
	spid=$!
	setsid ip netns exec fbr-b timeout -k 5 $((RSECS + 60)) "$RUN" \
		ib_write_bw -d mr0 -x 1 -F -s 65536 -D $RSECS --report_gbits \
		10.254.1.1 >"$W/rec.$mode" 2>&1 &
	PIDS+=($!)
	cpid=$!
	# Fail the plane that carries most traffic once the transfer runs
	# (go-back-N uses one path: failing another plane would show
	# nothing), 3 s from now, for 7 s.
	for _ in $(seq 300); do
		[ "$(wc -l <"$csv")" -gt 20 ] && break
		sleep 0.1
	done
	sleep 2
	k=$(python3 "$SAMPLE" busiest "$csv")
	"$FAB" -f fbr set "p$k/*" down_at=2 up_at=9 >/dev/null
	wait "$cpid"
	crc=$?
	wait "$spid"
	wait "${PIDS[-3]}" 2>/dev/null
	r=$(python3 "$SAMPLE" recovery "$csv" "$METAROCE_FABRIC_DIR/fbr.json" \
		"p$k/l1>a" "$k")
	# How ib_write_bw ended: its average, or its error.
	if [ $crc -eq 0 ]; then
		how="exit 0: $(awk '$1 == 65536 && NF >= 4 {print $4 " Gb/s average"}' "$W/rec.$mode" | tail -1)"
	else
		how="exit $crc: $(grep -m1 -iE 'error|fail' "$W/rec.$mode" | tr -d ',' | cut -c1-80)"
	fi
	echo "$mode,$r,$how" >>"$DATA/fabric_recovery.csv"
	log "recovery $mode: $r"
	undevs
	"$FAB" -f fbr set "p$k/*" up >/dev/null
done
down fbr
fi

# results ---------------------------------------------------------------
{
	echo "# bench/wire/fabric: ib_write_bw through routed fabrics"
	echo
	echo "One run of each, $start, commit $commit, $machine."
	echo "Command: \`bench/wire/fabric.sh ${1:-build} $SECS\` (root). Unmodified"
	echo "\`ib_write_bw -s 65536 -D $SECS --report_gbits\` over MetaRoCE devices, one"
	echo "port per plane, through \`metaroce-fabric\` (docs/fabric.md); the machine"
	echo "is shared, so figures move between runs: compare within one run."
	echo
	echo "## 1. Goodput against random loss (4 planes x 2 leaves + 2 spines, 2 Gb/s links)"
	echo
	echo "Loss L on each host's uplinks of every plane: L on the data direction and"
	echo "on the ACK direction. gbn = \`--opt mode=gbn\` (RoCEv2's go-back-N on one path)."
	echo
	echo "| loss | MetaRoCE Gb/s | go-back-N Gb/s |"
	echo "| --- | --- | --- |"
	tail -n +2 "$DATA/fabric_loss.csv" | awk -F, '{printf "| %s%% | %.3f | %.3f |\n", $1, $2, $3}'
	echo
	echo "## 2. Planes (host - leaf - host, 500 Mb/s per plane)"
	echo
	echo "| planes | Gb/s | k x one plane |"
	echo "| --- | --- | --- |"
	tail -n +2 "$DATA/fabric_planes.csv" | awk -F, '{printf "| %s | %.3f | %.3f |\n", $1, $2, $3}'
	echo
	echo "## 3. Incast: three senders into one 1 Gb/s port (queue 128 KiB, CE above 32 KiB)"
	echo
	echo "| sender | Gb/s |"
	echo "| --- | --- |"
	tail -n +2 "$DATA/fabric_incast.csv" | awk -F, '{printf "| %s | %.3f |\n", $1, $2}'
	echo
	echo "At the bottleneck (p1/l2>rx): $inc_in packets arrived, $inc_pkts sent on,"
	echo "$inc_ecn CE-marked, $inc_drop dropped by the full queue; queue depth"
	echo "sampled every 50 ms: max $inc_qmax bytes, mean when not empty $inc_qavg bytes"
	echo "(data/fabric_incast_qdepth.csv)."
	echo
	echo "## 4. Recovery: one plane of 4 (1 Gb/s each) down for 7 s of a ${RSECS} s transfer"
	echo
	echo "The plane carrying most traffic fails (go-back-N runs on one path, so it"
	echo "is that path's plane). Rates of what the receiver's four ports received"
	echo "(delivered bytes, the ports' rx_bytes: a failed link's drops are not in"
	echo "them), sampled every 50 ms (200 ms windows); times from the first traffic."
	echo "recover: from the failure until the other three planes carry 90% of 3/4"
	echo "of the pre-failure total; return: from the plane's return until it"
	echo "carries half its pre-failure share."
	echo
	echo "| mode | failed plane | down at s | up at s | before Gb/s | during Gb/s | recover s | return s | ib_write_bw |"
	echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
	tail -n +2 "$DATA/fabric_recovery.csv" | awk -F, '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}'
	echo
	echo "Plots: fabric_loss.svg, fabric_planes.svg, fabric_recovery.svg."
} >"$OUT"

if command -v gnuplot >/dev/null; then
	term="svg size 900,540 noenhanced font 'sans,12' background rgb 'white'"
	sub="$start, commit $commit, $machine"
	gnuplot <<EOG
set terminal $term
set datafile separator ","
set key top right
set grid
set output "$OUT_DIR/fabric_loss.svg"
set title "ib_write_bw 64 KiB through 4 routed planes against loss\n$sub"
set xlabel "random loss on each direction (%)"
set ylabel "Gb/s"
set logscale x
set xrange [0.05:20]
plot "$DATA/fabric_loss.csv" every ::2 using 1:2 with linespoints lw 2 title "MetaRoCE", \
     "" every ::2 using 1:3 with linespoints lw 2 title "go-back-N (mode=gbn)"
unset logscale x
set xrange [*:*]
set output "$OUT_DIR/fabric_planes.svg"
set title "ib_write_bw over 1, 2 and 4 planes of 500 Mb/s\n$sub"
set xlabel "planes"
set style data histograms
set style fill solid 0.6
set boxwidth 0.8
plot "$DATA/fabric_planes.csv" using 2:xtic(1) title "measured", \
     "" using 3 title "k x one plane"
EOG
	# The timeline wants rates, not byte counters: derive them first.
	awk -F, 'NR == 1 {print "t_s,p1,p2,p3,p4"; next}
		NR == 2 {t0 = $1}
		{if (NR > 2) {dt = $1 - t; printf "%.3f", $1 - t0;
		  for (i = 2; i <= 5; i++) printf ",%.3f", ($i - v[i]) * 8 / dt / 1e9;
		  printf "\n"}
		 t = $1; for (i = 2; i <= 5; i++) v[i] = $i}' \
		"$DATA/fabric_recovery_metaroce.csv" >"$W/rate.csv"
	gnuplot <<EOG
set terminal $term
set datafile separator ","
set grid
set output "$OUT_DIR/fabric_recovery.svg"
set title "MetaRoCE: received rate per plane, one plane down for 7 s\n$sub"
set xlabel "s"
set ylabel "Gb/s (50 ms samples)"
plot for [i=2:5] "$W/rate.csv" every ::1 using 1:i with lines lw 1.5 title sprintf("plane %d", i - 1)
EOG
fi
cat "$OUT"
