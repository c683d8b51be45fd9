#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The net_mrpkt port (lib/dp/mrdp_pkt.c) between two namespaces over veth:
# dp_rdma.sh's WRITE, READ, SEND and atomics, every byte checked, with
#   1. net_mrpkt on both sides: frames of one path leave as UDP GSO
#      super-frames (tx_gso_segs > tx_gso_frames > 0) and the receiver
#      splits them (rx_gso_segs > rx_gso_frames > 0);
#   2. a peer that cannot take super-frames (the af_packet PMD): the
#      net_mrpkt side with gso=no sends none and both pass;
#   3. net_mrpkt with GSO towards a net_mrpkt gso=no side: the latter
#      splits what it receives and sends singly;
#   4. the mistake: net_mrpkt with GSO towards the af_packet PMD, whose
#      ring slot cuts every super-frame: the PMD side counts the frames as "truncated" and says once why and
#      what to do (a frame cut short is not a silent loss);
#   5. rx=block (a TPACKET_V3 ring, mrdp_pkt_block.c) on both sides, and
#      against the af_packet PMD with gso=no (single frames in blocks):
#      the same bytes, rx_blocks > 0 (0 with rx=frame, case 1);
#   6. bad devargs (rx=, block_ms=) refused at open, saying what to write;
#   7. the receive hold (dp_rx_hold_us, mrdp_pkt_hold.c) on rx=frame: the
#      ping-pong begins none on either side; the client's stream of 64 KiB
#      WRITEs begins one on the server, whose periods each take more than
#      one frame, and arrives byte-exact (the server checks it); with
#      dp_rx_hold_us=0 none begins.
# Usage: dp_pkt.sh PATH/TO/mrdp-rdma
set -u
BIN=${1:?usage: dp_pkt.sh mrdp-rdma}
HERE=$(dirname "$0")

if [ "$(id -u)" != 0 ]; then
	echo "dp_pkt: needs root (network namespaces); skipped"
	exit 77
fi
command -v python3 >/dev/null || { echo "dp_pkt: no python3; skipped"; exit 77; }
LOG=$(mktemp /tmp/dp_pkt.XXXXXX)
# The provider's pacing credit and path runs (mrdp_rdma.c), not a bare
# endpoint's one packet per round.
export MRDP_TEST_PROVIDER_TX=1
trap 'rm -f "$LOG"' EXIT

# counter SIDE NAME: plane 0's counter NAME in SIDE's (client|server)
# datapath record of the last run.
counter() {
	python3 - "$LOG" "$1" "$2" <<'PY'
import json, sys
log, side, name = sys.argv[1:]
for line in open(log):
    line = line.strip()
    if line.startswith(side + ": datapath {"):
        rec = json.loads(line.split(": datapath ", 1)[1])
        print(rec["planes"][0][name])
        sys.exit(0)
print("missing")
PY
}

fail=0
run() { # NAME: dp_rdma.sh with the DP_* variables set by the caller
	echo "== $1"
	if ! bash "$HERE/dp_rdma.sh" "$BIN" >"$LOG" 2>&1; then
		sed 's/^/  /' "$LOG" | tail -40
		echo "dp_pkt: $1: traffic failed"
		fail=1
		return 1
	fi
	grep -E "^ *(client|server): (ok|WRITE|READ|[0-9]+ SENDs)" "$LOG" |
		sed 's/^ */  /'
}
expect() { # WHAT VALUE OP REF
	if python3 -c "import sys; a, b = int(sys.argv[1]), int(sys.argv[3]); sys.exit(0 if {'>': a > b, '==': a == b}[sys.argv[2]] else 1)" "$2" "$3" "$4" 2>/dev/null; then
		echo "  ok: $1 = $2 ($3 $4)"
	else
		echo "  FAIL: $1 = $2, want $3 $4"
		fail=1
	fi
}

DP_DEV_A=net_mrpkt0 DP_DEV_B=net_mrpkt0 DP_ARGS_A= DP_ARGS_B= \
	run "net_mrpkt <-> net_mrpkt" && {
	f=$(counter client tx_gso_frames)
	s=$(counter client tx_gso_segs)
	expect "client tx_gso_frames" "$f" ">" 0
	expect "client tx_gso_segs" "$s" ">" "$f"
	f=$(counter server rx_gso_frames)
	s=$(counter server rx_gso_segs)
	expect "server rx_gso_frames" "$f" ">" 0
	expect "server rx_gso_segs" "$s" ">" "$f"
	expect "client zerocopy" "$(counter client zerocopy)" "==" 1
	expect "server rx_blocks (rx=frame)" "$(counter server rx_blocks)" "==" 0
}

DP_DEV_A=net_mrpkt0 DP_ARGS_A=,gso=no DP_DEV_B=net_af_packet0 DP_ARGS_B= \
	run "net_mrpkt gso=no <-> net_af_packet" && {
	expect "client tx_gso_frames" "$(counter client tx_gso_frames)" "==" 0
	expect "client tx_calls" "$(counter client tx_calls)" ">" 0
	expect "client rx_gso_frames" "$(counter client rx_gso_frames)" "==" 0
}

DP_DEV_A=net_mrpkt0 DP_ARGS_A= DP_DEV_B=net_mrpkt0 DP_ARGS_B=,gso=no \
	run "net_mrpkt -> net_mrpkt gso=no" && {
	expect "server rx_gso_frames" "$(counter server rx_gso_frames)" ">" 0
	expect "server tx_gso_frames" "$(counter server tx_gso_frames)" "==" 0
	expect "client tx_gso_frames" "$(counter client tx_gso_frames)" ">" 0
}

echo "== net_mrpkt (GSO) -> net_af_packet: cut super-frames are reported"
# Whether the transfer still completes (on what the probes and
# single-frame resends carry) or times out varies from run to run; what
# must hold is that the cut frames are counted and explained.
DP_DEV_A=net_mrpkt0 DP_ARGS_A= DP_DEV_B=net_af_packet0 DP_ARGS_B= \
	bash "$HERE/dp_rdma.sh" "$BIN" >"$LOG" 2>&1
{
	expect "client tx_gso_frames" "$(counter client tx_gso_frames)" ">" 0
	t=$(python3 - "$LOG" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("server: datapath {"):
        rec = json.loads(line.split(": datapath ", 1)[1])
        print(rec["planes"][0]["rx_drop"]["truncated"])
        sys.exit(0)
print("missing")
PY
)
	expect "server rx_drop truncated" "$t" ">" 0
	n=$(grep -c 'frames longer than the port takes.*gso=no on the peer' "$LOG")
	expect "server's messages about it" "$n" "==" 1
}

DP_DEV_A=net_mrpkt0 DP_ARGS_A=,rx=block DP_DEV_B=net_mrpkt0 \
	DP_ARGS_B=,rx=block,block_ms=2 \
	run "net_mrpkt rx=block <-> net_mrpkt rx=block,block_ms=2" && {
	for side in client server; do
		b=$(counter $side rx_blocks)
		expect "$side rx_blocks" "$b" ">" 0
		expect "$side rx_frames" "$(counter $side rx_frames)" ">" "$b"
	done
	expect "server rx_gso_frames" "$(counter server rx_gso_frames)" ">" 0
	expect "client rx_ring_drops" "$(counter client rx_ring_drops)" "==" 0
}

DP_DEV_A=net_mrpkt0 DP_ARGS_A=,gso=no,rx=block DP_DEV_B=net_af_packet0 \
	DP_ARGS_B= run "net_mrpkt gso=no,rx=block <-> net_af_packet" && {
	expect "client rx_blocks" "$(counter client rx_blocks)" ">" 0
	expect "client rx_gso_frames" "$(counter client rx_gso_frames)" "==" 0
}

# hold_count SIDE: the receive holds SIDE had begun after the ping-pong.
hold_count() {
	sed -n "s/^ *$1: receive holds after the ping-pong: \([0-9]*\)$/\1/p" "$LOG" | head -1
}

METAROCE_DP_RX_HOLD_US=500 DP_DEV_A=net_mrpkt0 DP_ARGS_A= DP_DEV_B=net_mrpkt0 \
	DP_ARGS_B= run "net_mrpkt <-> net_mrpkt, receive hold 500 us" && {
	expect "client holds in the ping-pong" "$(hold_count client)" "==" 0
	expect "server holds in the ping-pong" "$(hold_count server)" "==" 0
	n=$(grep -c "server: the stream of 64 KiB WRITEs byte-exact" "$LOG")
	expect "server's stream checked" "$n" "==" 1
	h=$(counter server rx_hold_starts)
	p=$(counter server rx_hold_periods)
	expect "server rx_hold_starts" "$h" ">" 0
	expect "server rx_hold_periods" "$p" ">" 0
	expect "server rx_hold_frames" "$(counter server rx_hold_frames)" ">" "$p"
	expect "server rx_ring_drops" "$(counter server rx_ring_drops)" "==" 0
}

METAROCE_DP_RX_HOLD_US=0 DP_DEV_A=net_mrpkt0 DP_ARGS_A= DP_DEV_B=net_mrpkt0 \
	DP_ARGS_B= run "net_mrpkt <-> net_mrpkt, no receive hold" && {
	expect "server rx_hold_starts" "$(counter server rx_hold_starts)" "==" 0
	expect "server rx_hold_frames" "$(counter server rx_hold_frames)" "==" 0
}

echo "== bad devargs are refused at open"
REC=$(mktemp /tmp/dp_pkt_rec.XXXXXX)
trap 'rm -f "$LOG" "$REC"' EXIT
bad() { # DEVARGS WANT: the open fails and says WANT
	printf 'name=mrdpbad\nport=net_mrpkt0,iface=lo%s\nip=10.77.0.1/24\nmac=02:00:0a:4d:00:01\nmtu=1024\nudp_port=4797\n' \
		"$1" >"$REC"
	out=$(timeout 60 "$BIN" client "$REC" 10.77.0.2 2>&1)
	if [ $? != 0 ] && grep -q -- "$2" <<<"$out"; then
		echo "  ok: '$1' refused: $(grep -o -- "$2.*" <<<"$out" | head -1)"
	else
		echo "  FAIL: '$1' not refused with '$2':"
		sed 's/^/    /' <<<"$out" | tail -5
		fail=1
	fi
}
bad ,rx=blok "rx=blok: say frame"
bad ,rx=block,block_ms=0 "block_ms=0: say 1..100"
bad ,rx=block,block_ms=1x "block_ms=1x: say 1..100"
bad ,block_ms=5 "block_ms= goes with rx=block"
bad ,rxx=block "not 'rxx"

echo "dp_pkt: $([ $fail = 0 ] && echo passed || echo FAILED)"
exit $fail
