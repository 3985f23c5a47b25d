#!/usr/bin/env bash
# The afxdp software NIC over a veth pair with two queues a side, between two network namespaces
# made for this run (netns_lib.sh):
#
#   test_nic_afxdp.sh <test_nic_afxdp program>
#
# Names carry the pid, so parallel runs do not collide; the namespaces go away on every exit.
# Skips (77) where namespaces cannot be created (not root, no ip) or the kernel refuses AF_XDP
# (the program says why).
# SPDX-License-Identifier: BSD-3-Clause
set -u

prog=${1:?usage: $0 <test_nic_afxdp program>}

# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"

NETNS_VETH_QUEUES=2 netns_veth_setup "sdx$$" 02:53:46
ip -n "$nsa" link set lo up || fail "lo up in $nsa"
netns_wait_carrier

ip netns exec "$nsa" "$prog" "$ifa" "$ifb" "$nsb" "$ipa" "$ipb"
