#!/usr/bin/env bash
# The afpacket software NIC over a veth pair between two network namespaces made for this run
# (netns_lib.sh):
#
#   test_nic_afpacket.sh <test_nic_afpacket program>
#
# Names carry the pid (sdp<pid>a/b for the namespaces and the veth ends) so parallel runs do not
# collide; IPv6 is off on both ends before they come up (no neighbour discovery frames), the
# addresses 10.x.y.1/2 exist only inside the namespaces, and static neighbour entries spare ARP,
# so the only frames on the wire are the test's. The namespaces go away on every exit (trap).
# Skips (77) only when namespaces cannot be created here (not root, no ip).
# SPDX-License-Identifier: BSD-3-Clause
set -u

prog=${1:?usage: $0 <test_nic_afpacket program>}

# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"

netns_veth_setup "sdp$$" 02:53:44
ip -n "$nsa" link set lo up || fail "lo up in $nsa"
netns_wait_carrier

ip netns exec "$nsa" "$prog" "$ifa" "$ifb" "$nsb" "$ipa"
