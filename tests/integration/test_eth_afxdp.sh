#!/usr/bin/env bash
# libdoca_eth and DOCA Flow on an afxdp device over a veth pair between two network namespaces
# made for this run (netns_lib.sh): the rules' summary steers one UDP port to a receive queue,
# everything else (another port, ping) stays with the host's stack.
#
#   test_eth_afxdp.sh <test_eth_afxdp program>
#
# Skips (77) only where namespaces cannot be created (not root, no ip).
# SPDX-License-Identifier: BSD-3-Clause
set -u

prog=${1:?usage: $0 <test_eth_afxdp program>}

# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"

netns_veth_setup "sdy$$" 02:53:47
ip -n "$nsa" link set lo up || fail "lo up in $nsa"
netns_wait_carrier

ip netns exec "$nsa" "$prog" "$ifa" "$nsb" "$ipa" "$ipb"
