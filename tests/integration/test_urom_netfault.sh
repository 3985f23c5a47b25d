#!/usr/bin/env bash
# Network faults between two "hosts" (issue 15): two network namespaces joined by a veth pair
# (netns_lib.sh; names carry this run's pid), a softdpu-uromd in each listening on its own veth
# address, and one rank of test_urom_netfault in each, with a worker running worker_rma and
# worker_coll and a domain over softdpu's TCP OOB. UCX is pinned to the veth (UCX_TLS=tcp,
# UCX_NET_DEVICES=<that namespace's veth end>), so everything between the ranks crosses it.
#
#   test_urom_netfault.sh <softdpu-uromd> <softdpu-urom-worker> <test_urom_netfault>
#                         <plugin path> <softdpu CLI>
#
# The ranks meet this script at named steps (files in a control directory, see the C file):
#   base      puts, gets and an allreduce across the veth, every byte checked;
#   netem     tc netem loss 10% delay 20ms on both veth ends (without sch_netem: nftables
#             dropping 10% of each veth end's egress, no delay): the same operations complete
#             correctly, each within 30 s (NF_NETEM_BOUND_MS); skipped, with the reason, where
#             the kernel has neither (the rest still runs);
#   down_put  the veth (end a) goes down during a stream of 1 MiB puts: every outstanding put
#             completes (success or error) within 45 s of the link going down
#             (NF_DOWN_BOUND_MS); both services still answer `softdpu service status`;
#   mid_up    the link comes back;
#   down_coll the link goes down with 8 allreduces of 2 MiB outstanding, and one more is started
#             after: each completes within 75 s (NF_DOWN_COLL_BOUND_MS: UCX's failure of
#             the transfer, then worker_coll's bounded DONE wait), the late one with an error;
#             status answers;
#   up        the link comes back: the faulted worker, domain and service context are
#             destroyed (bounded) and new ones, over a new OOB, pass the base checks.
# Every wait is bounded: each step 120 s here, the ranks under timeout(1), and everything this
# script started (namespaces, services, ranks, the temporary directory) goes away on every exit.
# Skipped (77) only where network namespaces cannot be created (not root, no ip).
# SPDX-License-Identifier: BSD-3-Clause
set -u

uromd=${1:?usage: $0 <uromd> <worker> <test_urom_netfault> <plugin path> <softdpu cli>}
worker=${2:?}
drv=${3:?}
plugins=${4:?}
cli=${5:?}

# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$(dirname "$0")/netns_lib.sh"

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

netns_veth_setup "sdf$$" 02:53:67
trap all_cleanup EXIT
ip -n "$nsa" link set lo up || fail "lo up in $nsa"
ip -n "$nsb" link set lo up || fail "lo up in $nsb"
netns_wait_carrier

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sdp-netfault.XXXXXX") || fail "mktemp"
ctl=$tmp/ctl
mkdir "$ctl" || fail "mkdir $ctl"

# The services' and workers' logs first, the ranks' last, and last of all each rank's failed
# checks and its last NF line: a log viewer that keeps only the tail still shows which rank
# failed where.
dump_logs() {
	local r
	for n in a b; do
		echo "--- service $n"; tail -20 "$tmp/$n/uromd.log"
		for f in "$tmp/$n"/run/worker-*.log; do
			[ -f "$f" ] && { echo "--- $f"; tail -30 "$f"; }
		done
	done
	for r in 0 1; do echo "--- rank $r"; tail -40 "$tmp/rank$r.log"; done
	echo "--- summary"
	for r in 0 1; do
		echo "rank $r: last NF line: $(grep '^NF ' "$tmp/rank$r.log" | tail -1)"
		grep -E 'check failed|^FAIL' "$tmp/rank$r.log" | head -3 | sed "s/^/rank $r: /"
	done
}

die() {
	dump_logs >&2
	fail "$*"
}

# start_service <name> <namespace> <address> <veth>: the softdpu-uromd of that "host"
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

# Ports nobody uses in namespace a (the namespace is this test's: nothing else binds there).
free_port() {
	ip netns exec "$nsa" python3 -c \
		'import socket; s=socket.socket(); s.bind(("'"$ipa"'",0)); print(s.getsockname()[1])'
}
p1=$(free_port) || fail "no free port in $nsa"
p2=$(free_port) || fail "no free port in $nsa"
[ "$p1" != "$p2" ] || p2=$(free_port)

rank_pids=()
for r in 0 1; do
	ns=$nsa ifc=$ifa addr=$ipa:$porta name=a
	[ $r = 1 ] && ns=$nsb ifc=$ifb addr=$ipb:$portb name=b
	ip netns exec "$ns" env SOFTDPU_UROM_SERVICE_ADDR="$addr" \
		SOFTDPU_UROM_SECRET_FILE="$tmp/$name/secret" UCX_TLS=tcp UCX_NET_DEVICES="$ifc" \
		timeout -k 5 400 "$drv" $r "$ctl" "$ipa:$p1" "$ipa:$p2" >"$tmp/rank$r.log" 2>&1 &
	rank_pids+=($!)
	pids+=($!)
done

# wait_step <step>: both ranks reached it (120 s at most; a rank that exited fails the test)
wait_step() {
	local step=$1 r
	for _ in $(seq 2400); do
		[ -e "$ctl/$step.r0" ] && [ -e "$ctl/$step.r1" ] && return 0
		for r in 0 1; do
			kill -0 "${rank_pids[$r]}" 2>/dev/null ||
				die "rank $r exited before step $step"
		done
		sleep 0.05
	done
	die "the ranks did not reach step $step within 120 s"
}

# go <step> <content>: release the ranks (written whole, then renamed)
go() {
	if ! printf '%s\n' "$2" >"$ctl/$1.go.tmp" || ! mv "$ctl/$1.go.tmp" "$ctl/$1.go"; then
		fail "go $1"
	fi
}

now_ms() { date +%s%3N; }

# Each service still answers a status query while the link is down.
status_check() {
	local n ns
	for n in a b; do
		ns=$nsa
		[ $n = b ] && ns=$nsb
		ip netns exec "$ns" timeout 20 "$cli" service status --run-dir "$tmp/$n/run" \
			--secret-file "$tmp/$n/secret" >"$tmp/status-$n.out" 2>&1 ||
			die "service $n did not answer status with the link down ($1): $(cat "$tmp/status-$n.out")"
	done
	echo "PASS: both services answer status with the link down ($1)"
}

link() { # link up|down
	ip -n "$nsa" link set "$ifa" "$1" || fail "link $ifa $1"
	[ "$1" = up ] && netns_wait_carrier
	return 0
}

# ---- b. loss and delay ----
# tc netem where the kernel has it; else (no sch_netem) the same loss from nftables' random
# numbers, without the delay (no other qdisc delays packets; a tbf rate cap made UCX 1.22's
# rounds outlast the bound); skipped only where neither is there.
# nft_loss <namespace> <veth>: drop 10 % of the packets leaving through that veth end (one
# table of ours), what netem's loss on the veth's egress does: 10 % each way once both ends
# have it. Only the egress and only the veth: a rule on input as well would drop 19 % each
# way, and one on every interface would also drop the namespace's loopback traffic, which
# netem on the veth never touches (under that double loss a 1 MiB get outlasted the bound).
nft_loss() {
	ip netns exec "$1" nft -f - <<-NFT
		table inet sdp_netfault {
			chain out {
				type filter hook output priority 0;
				oifname "$2" numgen random mod 100 < 10 drop;
			}
		}
	NFT
}
wait_step netem
netem=on
faults=
modprobe sch_netem 2>/dev/null
if err=$(ip netns exec "$nsa" tc qdisc add dev "$ifa" root netem loss 10% delay 20ms 2>&1); then
	ip netns exec "$nsb" tc qdisc add dev "$ifb" root netem loss 10% delay 20ms ||
		fail "netem on $ifb"
	faults="tc netem loss 10% delay 20ms on both ends"
elif command -v nft >/dev/null 2>&1 && nft_loss "$nsa" "$ifa" 2>"$tmp/nft.err"; then
	nft_loss "$nsb" "$ifb" || fail "nft loss in $nsb"
	faults="nft loss 10% on both veth ends' egress, no delay (no sch_netem: ${err//$'\n'/ })"
else
	netem="skip: the kernel has no sch_netem ($(uname -r), tc: ${err//$'\n'/ }) and nft cannot drop ($(cat "$tmp/nft.err" 2>/dev/null || echo 'nft not installed'))"
	echo "SKIP (sub-case netem only): $netem"
fi
[ -z "$faults" ] || { echo "faults on: $faults"; t_netem=$(now_ms); }
go netem "$netem"
wait_step netem_off
if [ "$netem" = on ]; then
	for e in "$nsa:$ifa" "$nsb:$ifb"; do
		if ip netns exec "${e%%:*}" nft list table inet sdp_netfault >/dev/null 2>&1; then
			ip netns exec "${e%%:*}" nft delete table inet sdp_netfault ||
				fail "nft loss off in ${e%%:*}"
		else
			ip netns exec "${e%%:*}" tc qdisc del dev "${e##*:}" root ||
				fail "netem off ${e##*:}"
		fi
	done
	echo "faults ($faults) were on for $(($(now_ms) - t_netem)) ms"
fi
go netem_off off

# ---- c. link down during puts, then during allreduces ----
wait_step down_put
link down
go down_put "$(now_ms)"
status_check "puts"
wait_step mid_up
link up
go mid_up up

wait_step down_coll
link down
go down_coll "$(now_ms)"
status_check "allreduces"

# ---- d. recovery ----
wait_step up
link up
go up up

rc=0
for r in 0 1; do
	wait "${rank_pids[$r]}"
	st=$?
	[ $st = 0 ] || { rc=1; echo "rank $r exited with status $st" >&2; }
	grep -q "NF rank $r PASS" "$tmp/rank$r.log" || rc=1
done
for r in 0 1; do
	echo "--- rank $r results"
	grep '^NF ' "$tmp/rank$r.log"
done
[ $rc = 0 ] || die "a rank failed"
echo "PASS: network faults survived (netem: $netem)"
exit 0
