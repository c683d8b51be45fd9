#!/usr/bin/env bash
# Install the Debian 12 packages MetaRoCE builds, tests and demos with.
set -euo pipefail
pkgs=(
	meson ninja-build pkg-config gcc clang llvm libclang-rt-14-dev
	libibverbs-dev ibverbs-utils ibverbs-providers perftest
	dpdk dpdk-dev libdpdk-dev libnl-3-dev libnl-route-3-dev
	iproute2 iperf3 python3 procps psmisc kmod
	libbpf-dev
	qperf ucx-utils libucx0
	gnuplot-nox
	tshark lintian rpm debhelper libjson-c-dev bash-completion
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps.sh: need root to install: ${missing[*]}" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
