# shellcheck shell=bash
# Sourced by the afpacket integration tests (test_eth_afpacket.sh, test_nic_afpacket.sh): a veth
# pair between two network namespaces made for this run.
#
#   netns_veth_setup <tag> <mac prefix>
#
# Names carry the tag, which carries the caller's pid (<tag>a/b for the namespaces and the veth
# ends), so parallel runs do not collide. Sets nsa/nsb (namespaces), ifa/ifb (veth ends, one in
# each), ipa/ipb (10.x.y.1/2, x.y from the pid) and maca/macb (<mac prefix>:x:y:01/02). IPv6 is
# off on both ends before they come up (no neighbour discovery frames), the addresses exist only
# inside the namespaces and static neighbour entries spare ARP, so the wire is quiet. The
# namespaces go away on every exit (trap). Skips (77) only when namespaces cannot be created here
# (not root, no ip); any other failure exits 1.
# SPDX-License-Identifier: BSD-3-Clause

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

netns_cleanup() {
	ip netns del "$nsa" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
}

netns_veth_setup() {
	local tag=$1 macp=$2 x y ns err

	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: creating network namespaces needs root"
		exit 77
	fi
	if ! command -v ip >/dev/null 2>&1; then
		echo "SKIP: ip (iproute2) not found"
		exit 77
	fi

	nsa=${tag}a
	nsb=${tag}b
	ifa=${tag}a
	ifb=${tag}b
	x=$((($$ >> 8) & 255))
	y=$(($$ & 255))
	ipa=10.$x.$y.1
	ipb=10.$x.$y.2
	maca=$(printf '%s:%02x:%02x:01' "$macp" "$x" "$y")
	macb=$(printf '%s:%02x:%02x:02' "$macp" "$x" "$y")

	trap netns_cleanup EXIT
	trap 'exit 130' INT TERM

	if ! err=$(ip netns add "$nsa" 2>&1); then
		echo "SKIP: cannot create a network namespace: $err"
		exit 77
	fi

	ip netns add "$nsb" || fail "ip netns add $nsb"
	for ns in "$nsa" "$nsb"; do
		# IPv6 off before the veth exists, so its ends never send neighbour discovery
		if [ -d /proc/sys/net/ipv6 ]; then
			ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
				net.ipv6.conf.default.disable_ipv6=1 || fail "disable IPv6 in $ns"
		fi
	done
	# NETNS_VETH_QUEUES=N: both ends with N RX and N TX queues (the default is one of each)
	local qa=() qb=()
	if [ -n "${NETNS_VETH_QUEUES:-}" ]; then
		qa=(numtxqueues "$NETNS_VETH_QUEUES" numrxqueues "$NETNS_VETH_QUEUES")
		qb=("${qa[@]}")
	fi
	ip -n "$nsa" link add "$ifa" address "$maca" "${qa[@]}" type veth peer name "$ifb" \
		address "$macb" "${qb[@]}" netns "$nsb" || fail "create veth $ifa/$ifb"
	ip -n "$nsa" addr add "$ipa/24" dev "$ifa" || fail "address $ipa"
	ip -n "$nsb" addr add "$ipb/24" dev "$ifb" || fail "address $ipb"
	ip -n "$nsa" neigh add "$ipb" lladdr "$macb" dev "$ifa" nud permanent || fail "neighbour a"
	ip -n "$nsb" neigh add "$ipa" lladdr "$maca" dev "$ifb" nud permanent || fail "neighbour b"
	ip -n "$nsa" link set "$ifa" up || fail "link $ifa up"
	ip -n "$nsb" link set "$ifb" up || fail "link $ifb up"
}

# Carrier: a bounded wait (5 s) for both veth ends to be up.
netns_wait_carrier() {
	for _ in $(seq 100); do
		if [ "$(ip netns exec "$nsa" cat "/sys/class/net/$ifa/operstate")" = up ] &&
			[ "$(ip netns exec "$nsb" cat "/sys/class/net/$ifb/operstate")" = up ]; then
			break
		fi
		sleep 0.05
	done
}
