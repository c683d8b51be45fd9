#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/gso_probe.sh: UDP GSO super-frames through AF_PACKET with a
# virtio-net header against one frame per send, over one veth (MTU 9000)
# between two namespaces (gso_probe.c, built here with cc): 4142-byte UDP
# payloads (a MetaRoCE frame at MTU 4096), 32 plain frames per sendmmsg
# against 2 super-frames of 15 segments; the receiver splits every
# super-frame into 4 KiB buffers, as lib/dp's net_mrpkt port does.
# Usage: bench/wire/gso_probe.sh [SECS]   (default 3). Root.
set -u
cd "$(dirname "$0")/../.." || exit 1
SECS=${1:-3}
[ "$(id -u)" = 0 ] || { echo "gso_probe.sh: needs root" >&2; exit 1; }
. bench/wire/link.sh
wire_need gso_probe.sh cc
wire_link gso_probe.sh mrg
cc -O2 -o "$W/gso_probe" bench/wire/gso_probe.c ||
	{ echo "gso_probe.sh: cannot build gso_probe.c" >&2; exit 1; }
run() { # NSEG BATCH
	inB "$W/gso_probe" rxm "$VB" "$SECS" >"$W/rx" &
	local r=$!
	sleep 0.5
	inA "$W/gso_probe" tx "$VA" "$1" 4142 "$SECS" "$2"
	wait $r
	cat "$W/rx"
	echo "load $(cut -d' ' -f1 /proc/loadavg)"
}
echo "$(date -u '+%Y-%m-%d %H:%M UTC'): bench/wire/gso_probe.sh $SECS"
run 1 32
run 15 2
run 1 32
run 15 2
