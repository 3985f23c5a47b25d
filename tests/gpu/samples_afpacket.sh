#!/usr/bin/env bash
# The GPUNetIO samples on a veth pair between two network namespaces (afpacket): the kernel of
# gpunetio_simple_send sends UDP frames on one end, the kernel of gpunetio_simple_receive counts
# and checks them on the other; the receiver must have counted packets and 0 bad ones, both
# samples must end cleanly. Run by tests/gpu/run.sh on the GPU machine.
#   bash tests/gpu/samples_afpacket.sh <build dir>
# Exit 77 only without /dev/nvidiactl or where namespaces cannot be made (not root, no ip).
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
build=${1:-build}
case $build in /*) ;; *) build=$PWD/$build ;; esac

if [ ! -e /dev/nvidiactl ]; then
	echo "SKIP: no NVIDIA driver (/dev/nvidiactl is missing)"
	exit 77
fi
# shellcheck source=tests/integration/netns_lib.sh
. tests/integration/netns_lib.sh
netns_veth_setup "gs$$" 02:53:47
netns_wait_carrier

rx=$build/samples/gpunetio_simple_receive/doca_gpunetio_simple_receive
tx=$build/samples/gpunetio_simple_send/doca_gpunetio_simple_send
log=$(mktemp "${TMPDIR:-/tmp}/softdpu-gs.XXXXXX") || exit 1
trap 'rm -f "$log"; netns_cleanup' EXIT

# the receiver first (CUDA and the queue take about a second), for 6 s; the sender for 2 s
ip netns exec "$nsb" env SOFTDPU_DEVICE_CONFIG= SOFTDPU_DEVICES="afpacket:iface=$ifb" \
	timeout 60 "$rx" -d "$ifb" --duration 6 >"$log" 2>&1 &
rxpid=$!
sleep 2
ip netns exec "$nsa" env SOFTDPU_DEVICE_CONFIG= SOFTDPU_DEVICES="afpacket:iface=$ifa" \
	timeout 60 "$tx" -d "$ifa" --duration 2 || fail "gpunetio_simple_send on $ifa failed"
if ! wait "$rxpid"; then
	cat "$log"
	fail "gpunetio_simple_receive on $ifb failed"
fi
cat "$log"
n=$(sed -n 's/^received \([0-9]*\) packets.*/\1/p' "$log")
[ "${n:-0}" -gt 0 ] || fail "gpunetio_simple_receive counted no packets"
grep -q '; 0 bad$' "$log" || fail "gpunetio_simple_receive saw bad packets"
echo "PASS: $n packets from the GPU sender through $ifa/$ifb to the GPU receiver"
