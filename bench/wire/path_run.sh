#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/wire/path_run.sh [BUILD_DIR [SECS [REPS]]]: the path_run knob
# (docs/spec MR-MP-3: packets a path sends in a row, default 16 in the
# provider) per port kind. One veth link between two namespaces
# (bench/wire/link.sh), a MetaRoCE device of each port kind on each side
# (net_mrpkt: a run leaves as one UDP GSO super-frame; net_af_packet, the
# PMD: one frame at a time), and an unmodified `ib_write_bw -s 65536 -D
# SECS` with METAROCE_PATH_RUN = 1, 4, 16, 64, the points interleaved REPS
# times (default 2) so that the host's load falls on all of them alike.
# Writes OUT_DIR/path_run.md (default bench/wire). Root; about
# 10 x (SECS + 5) x REPS seconds.
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "path_run.sh: no build directory ${1:-build}" >&2; exit 1; }
SECS=${2:-5}
REPS=${3:-2}
RUNS="1 4 16 64"
OUT_DIR=${OUT_DIR:-$TOP/bench/wire}
mkdir -p "$OUT_DIR" && OUT_DIR=$(cd "$OUT_DIR" && pwd) || exit 1
[ "$(id -u)" = 0 ] || { echo "path_run.sh: needs root" >&2; exit 1; }
. bench/wire/link.sh
wire_need path_run.sh ib_write_bw
wire_link path_run.sh mrr
ip -n "$NSA" addr add 10.86.0.1/24 dev "$VA" &&
	ip -n "$NSB" addr add 10.86.0.2/24 dev "$VB" ||
	{ echo "path_run.sh: cannot address the link" >&2; exit 1; }
inA "$B/utils/metaroce-ctl" link add mrra --port "net_mrpkt0,iface=$VA" \
	--ip 10.87.0.1/24 >/dev/null &&
	inB "$B/utils/metaroce-ctl" link add mrrb \
		--port "net_mrpkt0,iface=$VB" --ip 10.87.0.2/24 >/dev/null &&
	inA "$B/utils/metaroce-ctl" link add mrrc \
		--port "net_af_packet0,iface=$VA" --ip 10.87.1.1/24 \
		--mac 02:00:0a:57:01:01 >/dev/null &&
	inB "$B/utils/metaroce-ctl" link add mrrd \
		--port "net_af_packet0,iface=$VB" --ip 10.87.1.2/24 \
		--mac 02:00:0a:57:01:02 >/dev/null ||
	{ echo "path_run.sh: metaroce-ctl link add failed" >&2; exit 1; }
load() { cut -d' ' -f1 /proc/loadavg; }
declare -A GB LD
for rep in $(seq "$REPS"); do
	for run in $RUNS; do
		for kind in net_mrpkt net_af_packet; do
			if [ "$kind" = net_mrpkt ]; then da=mrra db=mrrb; else da=mrrc db=mrrd; fi
			v=$(wire_pairs 1 "$da" "$db" "" METAROCE_PATH_RUN="$run")
			l=$(load)
			echo "rep $rep path_run $run $kind: $v Gb/s (load $l)" >&2
			GB[$kind.$run]="${GB[$kind.$run]:+${GB[$kind.$run]} / }$v"
			LD[$kind.$run]="${LD[$kind.$run]:+${LD[$kind.$run]} / }$l"
		done
	done
done
{
	echo "# bench/wire/path_run: path_run (MR-MP-3) per port kind"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Command: \`bench/wire/path_run.sh ${1:-build} $SECS $REPS\` (root). Unmodified"
	echo "\`ib_write_bw -s 65536 -D $SECS -F\` over one veth link (MTU 9000) between two"
	echo "namespaces, one device of each port kind on each side, \`METAROCE_PATH_RUN\` set"
	echo "for both sides; the points interleaved $REPS times (each cell: the runs in order)."
	echo
	echo "| path_run | net_mrpkt Gb/s | load | net_af_packet Gb/s | load |"
	echo "| --- | --- | --- | --- | --- |"
	for run in $RUNS; do
		echo "| $run | ${GB[net_mrpkt.$run]} | ${LD[net_mrpkt.$run]} | ${GB[net_af_packet.$run]} | ${LD[net_af_packet.$run]} |"
	done
} >"$OUT_DIR/path_run.md"
cat "$OUT_DIR/path_run.md"
