#!/usr/bin/env bash
# The GPU packet processing application in its CPU mode (-c) on a veth pair between two network
# namespaces made for this run (netns_lib.sh), once on an afpacket device and once on an afxdp
# device (when built), answering for an address of its own (.5, not the kernel's) that the
# other namespace reaches through a static neighbour entry. From that namespace, real peers:
# curl fetches /index.html (status 200, the body checked) and /nope (404); 50 DNS-like queries
# go to UDP port 53 (bash's /dev/udp) and must be counted exactly; ping (or, where iputils-ping
# is missing, the same echo requests from python3's raw socket) gets every reply. The
# application stops on SIGINT within 10 s and prints its totals, which are checked. A TCP
# segment with a wrong checksum (python3's raw socket) gets no answer.
#
#   test_gpp_cpu.sh [--gpu] <gpu_packet_processing> <provider dir>...
#
# --gpu runs the GPU mode instead (tests/gpu/run.sh on the GPU machine): the same peers and
# checks against the persistent kernels. Nothing may be logged at error level. Skips (77) only
# where namespaces cannot be created (not root, no ip), and with --gpu where there is no GPU.
# SPDX-License-Identifier: BSD-3-Clause
set -u

mode=-c
mode_name="CPU mode"
if [ "${1:-}" = --gpu ]; then
	mode=
	mode_name="GPU mode"
	shift
	[ -e /dev/nvidiactl ] || { echo "SKIP: no GPU (/dev/nvidiactl)"; exit 77; }
fi
app=${1:?usage: $0 [--gpu] <gpu_packet_processing> <provider dir>...}
shift
provs=$(IFS=:; echo "$*")

# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"

tmp=
app_pid=
all_cleanup() {
	[ -n "$app_pid" ] && kill -KILL "$app_pid" 2>/dev/null
	[ -n "$tmp" ] && rm -rf "$tmp"
	netns_cleanup
}
netns_veth_setup "sdg$$" 02:53:49
trap all_cleanup EXIT
ip -n "$nsa" link set lo up || fail "lo up in $nsa"
netns_wait_carrier
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sdp-gpp.XXXXXX") || fail "mktemp"
ipg=${ipa%.1}.5
ip -n "$nsb" neigh add "$ipg" lladdr "$maca" dev "$ifb" nud permanent || fail "neighbour $ipg"
# The peer sends as onto a wire: full checksums, not left to "offload" (a veth hands such frames
# over half done, which afpacket flags and AF_XDP cannot see; the application verifies every
# TCP checksum the NIC did not). Without ethtool the afxdp case cannot pass: it is skipped.
tx_csum_off=0
if command -v ethtool >/dev/null 2>&1 &&
	ip netns exec "$nsb" ethtool -K "$ifb" tx off >/dev/null 2>&1; then
	tx_csum_off=1
fi

# count the echo replies of n echo requests to $ipg from namespace b
pings() {
	local n=$1 out
	if command -v ping >/dev/null 2>&1; then
		out=$(ip netns exec "$nsb" ping -n -c "$n" -i 0.2 -W 2 "$ipg" 2>&1)
		sed -n 's/.* \([0-9]*\) received.*/\1/p' <<<"$out"
		return
	fi
	ip netns exec "$nsb" python3 - "$ipg" "$n" <<-'PY'
		import socket, struct, sys, time
		dst, n = sys.argv[1], int(sys.argv[2])
		s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
		s.settimeout(0.2)
		def csum(b):
		    if len(b) % 2: b += b'\0'
		    t = sum(struct.unpack('!%dH' % (len(b) // 2), b))
		    t = (t >> 16) + (t & 0xffff); t += t >> 16
		    return ~t & 0xffff
		got = set()
		for i in range(n):
		    body = struct.pack('!BBHHH', 8, 0, 0, 0x5d5a, i) + bytes(range(48))
		    c = csum(body)
		    s.sendto(body[:2] + struct.pack('!H', c) + body[4:], (dst, 0))
		end = time.time() + 3
		while len(got) < n and time.time() < end:
		    try:
		        r = s.recv(1500)
		    except socket.timeout:
		        continue
		    if len(r) >= 28 and r[20] == 0 and struct.unpack('!H', r[24:26])[0] == 0x5d5a:
		        got.add(struct.unpack('!H', r[26:28])[0])
		print(len(got))
	PY
}

# A SYN with a wrong TCP checksum, then a right one, to the HTTP port from namespace b's raw
# socket: prints the source ports that got a SYN-ACK (the answers come in order: once the
# right one's is here, the wrong one's would have been).
syn_pair() {
	ip netns exec "$nsb" python3 - "$ipb" "$ipg" <<-'PY'
		import socket, struct, sys, time
		src, dst = sys.argv[1], sys.argv[2]
		def csum(b):
		    if len(b) % 2: b += b'\0'
		    t = sum(struct.unpack('!%dH' % (len(b) // 2), b))
		    t = (t >> 16) + (t & 0xffff); t += t >> 16
		    return ~t & 0xffff
		def syn(sport, good):
		    tcp = struct.pack('!HHIIBBHHH', sport, 80, 1000, 0, 5 << 4, 0x02, 65535, 0, 0)
		    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack('!BBH', 0, 6, 20)
		    c = csum(pseudo + tcp) ^ (0 if good else 0x5a5a)
		    return tcp[:16] + struct.pack('!H', c) + tcp[18:]
		s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
		s.settimeout(0.2)
		s.sendto(syn(40001, False), (dst, 0))
		s.sendto(syn(40002, True), (dst, 0))
		got = set()
		end = time.time() + 3
		while 40002 not in got and time.time() < end:
		    try:
		        r = s.recv(1500)
		    except socket.timeout:
		        continue
		    ihl = (r[0] & 15) * 4
		    if socket.inet_ntoa(r[12:16]) == dst and len(r) >= ihl + 14:
		        sp, dp = struct.unpack('!HH', r[ihl:ihl + 4])
		        if sp == 80 and r[ihl + 13] & 0x12 == 0x12:
		            got.add(dp)
		print(' '.join(str(p) for p in sorted(got)))
	PY
}

# A failure while the application runs: stop it (SIGINT, 10 s, then SIGKILL) so its totals
# and log lines show, then fail.
cfail() {
	if [ -n "$app_pid" ]; then
		kill -INT "$app_pid" 2>/dev/null
		for _ in $(seq 200); do kill -0 "$app_pid" 2>/dev/null || break; sleep 0.05; done
		kill -KILL "$app_pid" 2>/dev/null
		wait "$app_pid" 2>/dev/null
		app_pid=
	fi
	cat "$tmp"/*.out 2>/dev/null | tail -40
	fail "$@"
}

run_case() {
	local kind=$1 out=$tmp/$1.out code body q
	echo "== $kind"
	ip netns exec "$nsa" env SOFTDPU_PROVIDER_PATH="$provs" SOFTDPU_DEVICE_CONFIG= \
		SOFTDPU_DEVICES="$kind:iface=$ifa,name=gpp$kind" \
		"$app" -d "gpp$kind" -a "$ipg" ${mode:+"$mode"} -t 60 >"$out" 2>&1 &
	app_pid=$!
	for _ in $(seq 200); do
		grep -q '^gpp: answering' "$out" && break
		kill -0 "$app_pid" 2>/dev/null || { cfail "$kind: the application exited"; }
		sleep 0.05
	done
	grep -q '^gpp: answering' "$out" || { cfail "$kind: not answering after 10 s"; }
	# HTTP: the page, byte for byte, and a 404
	body=$(ip netns exec "$nsb" curl -s -m 5 "http://$ipg/hello.txt") ||
		{ cfail "$kind: curl /hello.txt failed"; }
	[ "$body" = "hello from softdpu" ] || cfail "$kind: /hello.txt gave '$body'"
	code=$(ip netns exec "$nsb" curl -s -m 5 -o "$tmp/index.html" -w '%{http_code}' \
		"http://$ipg/index.html") || cfail "$kind: curl /index.html failed"
	[ "$code" = 200 ] && grep -q 'softdpu GPU packet processing' "$tmp/index.html" ||
		cfail "$kind: /index.html gave status $code"
	code=$(ip netns exec "$nsb" curl -s -m 5 -o /dev/null -w '%{http_code}' "http://$ipg/nope")
	[ "$code" = 404 ] || cfail "$kind: /nope gave status $code"
	echo "PASS: $kind: curl got /hello.txt and /index.html (200) and /nope (404)"
	# 50 DNS-like queries, one datagram each
	q='\xab\xcd\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07softdpu\x03org\x00\x00\x01\x00\x01'
	ip netns exec "$nsb" bash -c "for i in \$(seq 50); do printf '$q' >/dev/udp/$ipg/53; done" ||
		cfail "$kind: sending the UDP queries failed"
	# echo requests
	r=$(pings 5)
	[ "$r" = 5 ] || { cfail "$kind: $r of 5 echo replies"; }
	echo "PASS: $kind: 5 of 5 echo replies"
	r=$(syn_pair)
	[ "$r" = 40002 ] || { cfail "$kind: SYN-ACKs to ports '$r' (want 40002 only)"; }
	echo "PASS: $kind: a SYN with a wrong checksum got no answer, a right one did"
	kill -INT "$app_pid"
	for _ in $(seq 200); do kill -0 "$app_pid" 2>/dev/null || break; sleep 0.05; done
	kill -0 "$app_pid" 2>/dev/null && cfail "$kind: still running 10 s after SIGINT"
	wait "$app_pid" || { cfail "$kind: exit status $?"; }
	app_pid=
	cat "$out"
	grep -q 'udp_queries=50 ' "$out" || cfail "$kind: the 50 queries were not counted exactly"
	grep -Eq 'icmp_replies=([5-9]|[1-9][0-9]+) ' "$out" || cfail "$kind: echo replies not counted"
	grep -Eq 'http_replies=([3-9]|[1-9][0-9]+) ' "$out" || cfail "$kind: HTTP replies not counted"
	grep -q 'send_errors=0 ' "$out" || cfail "$kind: send errors"
	! grep -q '\[ERR\]' "$out" || cfail "$kind: errors were logged"
	echo "PASS: $kind: totals"
}

for p in "$@"; do
	case $p in
	*/afpacket) run_case afpacket ;;
	*/afxdp)
		if [ "$tx_csum_off" = 1 ]; then
			run_case afxdp
		else
			echo "SKIP: afxdp: no ethtool to turn the peer's TX checksum offload off"
		fi
		;;
	esac
done
echo "PASS: the GPU packet processing application ($mode_name) answered real peers"
exit 0
