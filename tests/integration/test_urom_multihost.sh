#!/usr/bin/env bash
# UROM across hosts: two network namespaces joined by a veth pair (netns_lib.sh), each playing a
# host with its own softdpu-uromd listening on its own veth address, its own secret and its own
# host name (each rank runs in a UTS namespace of its own, `unshare --uts`), and one
# DOCA_UROM_SERVICE_FILE mapping each host name to its service. UCX is forced onto TCP over the
# veth (UCX_TLS=tcp, UCX_NET_DEVICES=<that namespace's veth end>), so no shared memory can carry
# anything between the "hosts": every byte between them crosses the veth.
#
#   test_urom_multihost.sh <softdpu-uromd> <softdpu-urom-worker> <doca_urom_ping_pong>
#                          <worker_sandbox dir> [<doca_urom_rdmo> <worker_rdmo dir>]
#
# 1. ping-pong: rank 0 in host a, rank 1 in host b, a domain over softdpu's TCP OOB rooted at
#    host a's address; the workers' tag send/recv goes worker to worker over the veth;
# 2. RDMO (when given): the server (target) in host a with its service, the client (initiator)
#    in host b; APPEND / SCATTER / FLUSH go from the client to host a's worker over the veth and
#    the server checks every byte.
# Both programs check every byte themselves and exit 0 only after PASS. The namespaces, the
# services and the temporary directory go away on every exit. Skipped (77) only where network
# namespaces cannot be created (not root, no ip) or unshare is missing.
# SPDX-License-Identifier: BSD-3-Clause
set -u

uromd=${1:?usage: $0 <uromd> <worker> <ping_pong> <sandbox dir> [<rdmo> <rdmo dir>]}
worker=${2:?}
pp=${3:?}
sandbox_dir=${4:?}
rdmo=${5:-}
rdmo_dir=${6:-}

# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"

if ! command -v unshare >/dev/null 2>&1; then
	echo "SKIP: unshare (util-linux) not found"
	exit 77
fi

tmp=
pids=()
all_cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	[ -n "$tmp" ] && rm -rf "$tmp"
	netns_cleanup
}

netns_veth_setup "sdm$$" 02:53:66
trap all_cleanup EXIT
ip -n "$nsa" link set lo up || fail "lo up in $nsa"
ip -n "$nsb" link set lo up || fail "lo up in $nsb"
netns_wait_carrier

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sdp-multihost.XXXXXX") || fail "mktemp"
plugins="$sandbox_dir${rdmo_dir:+;$rdmo_dir}"

# start_service <name> <namespace> <address> <veth>: a softdpu-uromd of that "host"
start_service() {
	local name=$1 ns=$2 addr=$3 ifc=$4
	mkdir -p "$tmp/$name"
	ip netns exec "$ns" env UCX_TLS=tcp UCX_NET_DEVICES="$ifc" \
		SOFTDPU_UROM_WORKER_BIN="$worker" UROM_PLUGIN_PATH="$plugins" \
		"$uromd" --foreground --listen "$addr:0" --run-dir "$tmp/$name/run" \
		--secret-file "$tmp/$name/secret" >"$tmp/$name/uromd.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		[ -s "$tmp/$name/run/uromd.port" ] && return 0
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	cat "$tmp/$name/uromd.log" >&2
	fail "the service of host $name did not start"
}
start_service a "$nsa" "$ipa" "$ifa"
start_service b "$nsb" "$ipb" "$ifb"
porta=$(cat "$tmp/a/run/uromd.port")
portb=$(cat "$tmp/b/run/uromd.port")

# The service file: <app host> dpu <service host:port> <PCI of softdpu0 / mlx5_0> <net,devs>
cat >"$tmp/services" <<EOT
# softdpu multi-host test
hosta dpu $ipa:$porta ffff:00:00.0 $ifa
hostb dpu $ipb:$portb ffff:00:00.0 $ifb
EOT

# A port nobody uses in namespace a (the namespace is this test's: nothing else binds there).
free_port() {
	ip netns exec "$nsa" python3 -c \
		'import socket; s=socket.socket(); s.bind(("'"$ipa"'",0)); print(s.getsockname()[1])'
}

# on_host <name> <namespace> <veth> <command...>: run a rank as host <name>
on_host() {
	local name=$1 ns=$2 ifc=$3
	shift 3
	ip netns exec "$ns" unshare --uts sh -c 'hostname "host$0" && exec "$@"' "$name" \
		env DOCA_UROM_SERVICE_FILE="$tmp/services" \
		SOFTDPU_UROM_SECRET_FILE="$tmp/$name/secret" \
		UCX_TLS=tcp UCX_NET_DEVICES="$ifc" "$@"
}

# ---- 1. ping-pong between the hosts ----
head -c 32 /dev/urandom >"$tmp/oob.secret" && chmod 600 "$tmp/oob.secret"
oob_port=$(free_port) || fail "no free port in $nsa"
msg="multi-host ping $$"
for r in 0 1; do
	name=a ns=$nsa ifc=$ifa
	[ $r = 1 ] && name=b ns=$nsb ifc=$ifb
	on_host "$name" "$ns" "$ifc" SOFTDPU_OOB_ROOT="$ipa:$oob_port" SOFTDPU_OOB_RANK=$r \
		SOFTDPU_OOB_SIZE=2 SOFTDPU_OOB_SECRET_FILE="$tmp/oob.secret" \
		SOFTDPU_OOB_TIMEOUT_MS=30000 \
		timeout 120 "$pp" -d mlx5_0 -m "$msg" >"$tmp/pp$r.log" 2>&1 &
	eval "pp$r=\$!"
done
rc=0
wait "$pp0" || rc=1
wait "$pp1" || rc=1
for r in 0 1; do
	if ! grep -q "urom_ping_pong: rank $r PASSED" "$tmp/pp$r.log"; then
		rc=1
	fi
done
if [ $rc != 0 ]; then
	for r in 0 1; do echo "--- rank $r"; tail -30 "$tmp/pp$r.log"; done
	for n in a b; do echo "--- service $n"; tail -20 "$tmp/$n/uromd.log"; tail -20 "$tmp/$n"/run/worker-*.log 2>/dev/null; done
	fail "ping-pong across hosts failed"
fi
echo "PASS: ping-pong between host a ($ipa) and host b ($ipb), message '$msg'"
# Each host's service spawned the worker of its own rank.
for n in a b; do
	ls "$tmp/$n"/run/worker-*.log >/dev/null 2>&1 || fail "host $n's service spawned no worker"
done

# ---- 2. RDMO: server (target) on host a, client (initiator) on host b ----
if [ -n "$rdmo" ]; then
	rport=$(free_port) || fail "no free port in $nsa"
	on_host a "$nsa" "$ifa" timeout 120 "$rdmo" -m server -d mlx5_0 -s "$ipa" -p "$rport" \
		>"$tmp/rdmo-server.log" 2>&1 &
	srv=$!
	on_host b "$nsb" "$ifb" timeout 120 "$rdmo" -m client -s "$ipa" -p "$rport" \
		>"$tmp/rdmo-client.log" 2>&1
	crc=$?
	wait "$srv"
	src=$?
	if [ $crc != 0 ] || [ $src != 0 ] || ! grep -q 'urom_rdmo server: PASS' "$tmp/rdmo-server.log"; then
		echo "--- server"; tail -30 "$tmp/rdmo-server.log"
		echo "--- client"; tail -30 "$tmp/rdmo-client.log"
		fail "RDMO across hosts failed (client $crc, server $src)"
	fi
	echo "PASS: RDMO client on host b wrote host a's memory through host a's worker"
fi
exit 0
