#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# dp_echo.sh over net_memif (shared memory between the two processes)
# instead of af_packet: the socket lives in the shared filesystem, so
# socket-abstract=no (abstract sockets are per network namespace).
set -u
SOCK=/tmp/mrdp-memif-$$.sock
rm -f "$SOCK"
trap 'rm -f "$SOCK"' EXIT
export DP_PORT_B="net_memif0,role=server,socket=$SOCK,socket-abstract=no"
export DP_PORT_A="net_memif0,role=client,socket=$SOCK,socket-abstract=no"
export MRDP_TEST_STREAM=${MRDP_TEST_STREAM:-100000}
bash "$(dirname "$0")/dp_echo.sh" "$1" 3000 0
