#!/usr/bin/env bash
# libdoca_eth on afpacket devices over a veth pair between two network namespaces made for this
# run (netns_lib.sh):
#
#   test_eth_afpacket.sh <test_eth_afpacket program>
#
# Names carry the pid (sde<pid>a/b for the namespaces and the veth ends) so parallel runs do not
# collide; IPv6 is off on both ends before they come up (no neighbour discovery frames), the
# addresses exist only inside the namespaces and static neighbour entries spare ARP, so the wire
# is quiet; the program still tells its own frames by a magic. The namespaces go away on every
# exit (trap). Skips (77) only when namespaces cannot be created here (not root, no ip).
# SPDX-License-Identifier: BSD-3-Clause
set -u

prog=${1:?usage: $0 <test_eth_afpacket program>}

# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"

netns_veth_setup "sde$$" 02:53:45
netns_wait_carrier

ip netns exec "$nsa" "$prog" "$ifa" "$ifb" "$nsb" "$maca" "$macb"
