#!/usr/bin/env bash
# bench/gpp.sh (issue 17): the GPU packet processing application's per-protocol rates, against
# a plain AF_PACKET receiver (bench/afpacket_peer) counting the same flood on the same
# interface in the same run:
#
#   bash bench/gpp.sh [--build DIR] [--record] [-t secs] [--gpu] [--provider afpacket|afxdp]
#
# A veth pair between two network namespaces made for this run (tests/integration/netns_lib.sh).
# The application (-c, or the GPU mode with --gpu) answers for an address of its own on one end
# through the provider's device; eth_blast floods it from the other end, flat out for secs
# seconds (default 3), one kind at a time: DNS-like queries (counted), ICMP echo requests
# (answered), TCP SYNs to port 80 (answered with SYN-ACKs); 98-byte frames. The application's
# totals give what it handled and answered; then afpacket_peer counts the same flood on the
# same end for secs seconds. Prints a table (Mpps offered by the sender, handled and answered
# by the application, counted by the peer, application / peer) and one summary line.
# --record inserts a dated row into bench/RESULTS.md (before the "gpp rows" marker).
# Needs root (namespaces): exit 77 otherwise; --gpu exits 77 without /dev/nvidiactl.
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
build=build
record=0
secs=3
mode=-c
mode_name=CPU
kind_prov=afpacket
usage() { echo "usage: $0 [--build DIR] [--record] [-t secs] [--gpu] [--provider afpacket|afxdp]" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--record) record=1; shift ;;
	-t) secs=$2; shift 2 ;;
	--gpu) mode=; mode_name=GPU; shift ;;
	--provider) kind_prov=$2; shift 2 ;;
	*) usage ;;
	esac
done
case $kind_prov in afpacket | afxdp) ;; *) usage ;; esac
if [ -z "$mode" ] && [ ! -e /dev/nvidiactl ]; then
	echo "SKIP: --gpu and no GPU (/dev/nvidiactl)"
	exit 77
fi
case $build in /*) ;; *) build=$ROOT/$build ;; esac
app=$build/samples/gpu_packet_processing/gpu_packet_processing
peer=$build/bench/afpacket_peer
blast=$build/bench/eth_blast
for f in "$app" "$peer" "$blast"; do
	if [ ! -x "$f" ]; then
		echo "gpp.sh: missing $f (ninja -C $build)" >&2
		exit 2
	fi
done
[ -e "$build/src/providers/$kind_prov" ] || { echo "gpp.sh: no $kind_prov provider in $build" >&2; exit 2; }

# shellcheck source-path=SCRIPTDIR source=../tests/integration/netns_lib.sh
. tests/integration/netns_lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-gpp-bench.XXXXXX") || exit 1
app_pid=
cleanup() {
	[ -n "$app_pid" ] && kill -KILL "$app_pid" 2>/dev/null
	netns_cleanup
	rm -rf "$tmp"
}
netns_veth_setup "sdq$$" 02:53:47
trap cleanup EXIT
netns_wait_carrier
ipg=${ipa%.1}.5

failed=0
rows=()
summary=()
val() { sed -n "s/.*[ ^]$2=\([0-9.]*\).*/\1/p; s/^$2=\([0-9.]*\)$/\1/p" "$1" | head -n 1; }
mpps() { awk -v c="${1:-0}" -v s="$2" 'BEGIN {if (s > 0) printf "%.3f", c / s / 1e6; else print "-"}'; }
ratio() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}'; }
flood() { # flood <kind> <out>: eth_blast from namespace b at the application's address
	ip netns exec "$nsb" "$blast" -i "$ifb" -s 98 -t "$secs" -S "$macb" -D "$maca" -a "$ipb" \
		-b "$ipg" -k "$1" >"$2" 2>&1 || { cat "$2" >&2; failed=1; }
}
for kind in dns icmp syn; do
	out=$tmp/app-$kind.out
	echo "== $kind: gpu_packet_processing ($mode_name mode, $kind_prov) in $nsa, eth_blast in $nsb"
	ip netns exec "$nsa" env SOFTDPU_PROVIDER_PATH="$build/src/providers/$kind_prov" \
		SOFTDPU_DEVICE_CONFIG= SOFTDPU_DEVICES="$kind_prov:iface=$ifa,name=gppb" \
		"$app" -d gppb -a "$ipg" ${mode:+"$mode"} -t 600 >"$out" 2>&1 &
	app_pid=$!
	for _ in $(seq 400); do
		grep -q '^gpp: answering' "$out" && break
		kill -0 "$app_pid" 2>/dev/null || break
		sleep 0.05
	done
	if ! grep -q '^gpp: answering' "$out"; then
		cat "$out" >&2
		echo "gpp.sh: the application did not start" >&2
		exit 1
	fi
	flood "$kind" "$tmp/blast-$kind.out"
	kill -INT "$app_pid"
	for _ in $(seq 200); do kill -0 "$app_pid" 2>/dev/null || break; sleep 0.05; done
	wait "$app_pid" || { cat "$out" >&2; failed=1; }
	app_pid=
	grep -E '^gpp( totals|: [a-z]+ kernel)' "$out"
	# the same flood into a plain AF_PACKET receiver on the same end
	ip netns exec "$nsb" "$blast" -i "$ifb" -s 98 -t $((secs + 2)) -S "$macb" -D "$maca" \
		-a "$ipb" -b "$ipg" -k "$kind" >"$tmp/blast2-$kind.out" 2>&1 &
	bpid=$!
	ip netns exec "$nsa" "$peer" -i "$ifa" -t "$secs" >"$tmp/peer-$kind.out" 2>&1 ||
		{ cat "$tmp/peer-$kind.out" >&2; failed=1; }
	kill -TERM "$bpid" 2>/dev/null
	wait "$bpid" 2>/dev/null
	sent=$(val "$tmp/blast-$kind.out" sent)
	case $kind in
	dns) handled=$(val "$out" udp_packets); answered=$(val "$out" udp_queries) ;;
	icmp) handled=$(val "$out" icmp_packets); answered=$(val "$out" icmp_replies) ;;
	syn) handled=$(val "$out" tcp_segments); answered=$(val "$out" sent) ;;
	esac
	p=$(val "$tmp/peer-$kind.out" pps)
	h=$(mpps "$handled" "$secs")
	rows+=("$kind|$(mpps "$sent" "$secs")|$h|$(mpps "$answered" "$secs")|$(mpps "${p:-0}" 1)|$(ratio "$h" "$(mpps "${p:-0}" 1)")|$(val "$out" send_errors)")
	summary+=("$kind $h Mpps (${answered:-0} of ${sent:-0} $([ "$kind" = dns ] && echo counted || echo answered)) / peer $(mpps "${p:-0}" 1) ($(ratio "$h" "$(mpps "${p:-0}" 1)"))")
done

echo
printf '%5s %10s %10s %10s %10s %8s %8s\n' kind offered handled answered peer "/ peer" errors
for r in "${rows[@]}"; do
	IFS='|' read -r k o h a p rp e <<<"$r"
	printf '%5s %10s %10s %10s %10s %8s %8s\n' "$k" "$o" "$h" "$a" "$p" "$rp" "$e"
done
line="gpp ($mode_name mode, $kind_prov): $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g')"
echo "$line"

if [ "$record" = 1 ] && [ "$failed" = 0 ]; then
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	machine="$(nproc) CPUs ($cpu), $(uname -sr)"
	if [ -z "$mode" ] && command -v nvidia-smi >/dev/null; then
		machine="$machine, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
	fi
	row="| $(date -u '+%Y-%m-%d %H:%M') | $machine | $mode_name, $kind_prov, ${secs} s floods of 98 B | ${summary[0]} | ${summary[1]} | ${summary[2]} |"
	awk -v row="$row" '/<!-- gpp rows/ {print row} {print}' bench/RESULTS.md >"$tmp/RESULTS.md" &&
		cp "$tmp/RESULTS.md" bench/RESULTS.md && echo "recorded in bench/RESULTS.md"
fi
exit "$failed"
