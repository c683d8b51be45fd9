#!/usr/bin/env bash
# The README's demo: install the Debian dependencies, build in ./build,
# create a MetaRoCE device inside a network namespace (an emulated host),
# and show it with rdma-core's own, unmodified ibv_devices and ibv_devinfo.
# Idempotent (a previous run's leftovers are removed first) and it cleans
# up after itself, on failure too. Needs root (namespaces, /dev node).
# METAROCE_DEMO_BUILD=<dir> builds elsewhere than ./build.
set -euo pipefail
cd "$(dirname "$0")/.."

NS=mr-demo-h1
HOSTIF=mr-demo-v0 # stays in the calling namespace
NSIF=mr-demo-v1   # moved into $NS
BUILD=${METAROCE_DEMO_BUILD:-build}
BIN=$PWD/$BUILD/utils
CTL=$BIN/metaroce-ctl
RUN=$BIN/metaroce-run

if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: needs root (network namespace, /dev/infiniband node)" >&2
	exit 1
fi

cleanup() {
	if ip netns list | grep -qw "$NS"; then
		[ -x "$CTL" ] && ip netns exec "$NS" "$CTL" link del mr0 \
			>/dev/null 2>&1 || true
		ip netns del "$NS" || true
	fi
	ip link del "$HOSTIF" >/dev/null 2>&1 || true
}

# Run a command inside the namespace, showing it as a user would type it.
in_ns() {
	local tool=${1##*/}
	shift
	echo
	echo "[$NS]# $tool $*"
	ip netns exec "$NS" "$BIN/$tool" "$@"
}

scripts/deps.sh
if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD"
fi
ninja -C "$BUILD"

cleanup
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add "$NS"
ip link add "$HOSTIF" type veth peer name "$NSIF" netns "$NS"
ip link set "$HOSTIF" up
ip -n "$NS" link set "$NSIF" up
ip -n "$NS" link set lo up

in_ns metaroce-ctl link add mr0 --port "net_af_packet0,iface=$NSIF" \
	--ip 192.0.2.1/24
in_ns metaroce-run ibv_devices
in_ns metaroce-run ibv_devinfo -v -d mr0
in_ns metaroce-ctl link show --json
in_ns metaroce-ctl link del mr0
echo
echo "demo.sh: done (namespace $NS and its veth are removed on exit)"
