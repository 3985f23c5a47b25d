#!/usr/bin/env bash
# bench/eth_cpu.sh: packets per second through libdoca_eth's CPU data path (REGULAR receive
# tasks, one engine thread per device), each case next to its peer in the same invocation:
#
#   bash bench/eth_cpu.sh [--build DIR] [--record] [-t secs]
#
#   loop     64 and 1514 B: send tasks on one loop device, receive tasks on its peer (one PE,
#            one thread), against a two-thread memcpy ring pump of the same frames (the ceiling
#            of a CPU copy path between two threads); also the loop wire alone (its port ops
#            driven by two threads in bursts of 32) as a second reference
#   gen      64 and 1514 B: a gen device flat out into a receive queue, against the gen
#            provider's own rx_burst called directly (the backend alone)
#   afpacket 64 and 1514 B: eth_blast floods UDP frames over a veth pair between two network
#            namespaces made for this run; in the receiving namespace, with the same sender
#            running, an afpacket device + receive queue, then afpacket_peer (a plain
#            TPACKET_V3 receiver of the same ring geometry). Needs root: SKIP otherwise.
#
# Each figure is counted over secs seconds (default 2) after a 0.3 s warm-up. Prints every
# program's key=value lines, then a table (case, size, packets, seconds, pps, peer pps, ratio)
# and one summary line. --record inserts a dated row into bench/RESULTS.md (before the
# "eth_cpu rows" marker). A failed check in a program (wrong frame length, gen sequence gap,
# task errors) fails the script (exit 1) after the table.
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
build=build
record=0
secs=2
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--record) record=1; shift ;;
	-t) secs=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--record] [-t secs]" >&2; exit 2 ;;
	esac
done
case $build in /*) ;; *) build=$ROOT/$build ;; esac

bench=$build/bench/eth_cpu
peer=$build/bench/afpacket_peer
blast=$build/bench/eth_blast
for f in "$bench" "$peer" "$blast"; do
	if [ ! -x "$f" ]; then
		echo "eth_cpu.sh: missing $f (build with: ninja -C $build)" >&2
		exit 2
	fi
done
prov=$build/src/providers
export SOFTDPU_PROVIDER_PATH=$prov/loop:$prov/gen:$prov/afpacket
export SOFTDPU_DEVICE_CONFIG=

tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-eth-cpu.XXXXXX") || exit 1
nsa=
nsb=
blast_pid=
cleanup() {
	[ -n "$blast_pid" ] && kill "$blast_pid" 2>/dev/null
	[ -n "$nsa" ] && ip netns del "$nsa" 2>/dev/null
	[ -n "$nsb" ] && ip netns del "$nsb" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

failed=0
rows=()	   # "case size packets seconds pps peer_pps ratio note"
summary=() # "case size: pps / peer (ratio)"
val() { sed -n "s/^$2=//p" "$1" | head -n 1; }
fmt_m() { awk -v v="$1" 'BEGIN {printf "%.3f", v / 1e6}'; }
# ns of CPU per frame: ns_pf <cpu percent> <pps>
ns_pf() { awk -v c="${1:-0}" -v p="${2:-0}" 'BEGIN {if (p > 0) printf "%.0f", c / 100 / p * 1e9; else print "-"}'; }

# run_case <case> <size>: eth_cpu measures softdpu and its peer in one invocation
run_case() {
	local out=$tmp/$1-$2.out note
	echo "== eth_cpu $1 -s $2 -t $secs"
	if ! "$bench" "$1" -s "$2" -t "$secs" >"$out" 2>"$tmp/err"; then
		cat "$tmp/err" >&2
		failed=1
	fi
	cat "$out"
	local cpu=$(($(val "$out" cpu_main_pct) + $(val "$out" cpu_other_pct)))
	local pcpu=$(($(val "$out" peer_cpu_main_pct) + $(val "$out" peer_cpu_other_pct)))
	note="CPU: PE thread $(val "$out" cpu_main_pct)% + engine $(val "$out" cpu_other_pct)% = $(ns_pf "$cpu" "$(val "$out" pps)") ns/frame; peer ($(val "$out" peer)) $pcpu% = $(ns_pf "$pcpu" "$(val "$out" peer_pps)") ns/frame"
	if [ -n "$(val "$out" port_pps)" ]; then
		note="$note; loop wire alone (port ops, bursts of 32) $(fmt_m "$(val "$out" port_pps)") Mpps, softdpu/wire $(val "$out" port_ratio)"
	fi
	rows+=("$1|$2|$(val "$out" packets)|$(val "$out" seconds)|$(val "$out" pps)|$(val "$out" peer_pps)|$(val "$out" ratio)|$note")
	summary+=("$1 $2 B $(fmt_m "$(val "$out" pps)") Mpps / $(fmt_m "$(val "$out" peer_pps)") ($(val "$out" ratio))")
}

run_case loop 64
run_case loop 1514
run_case gen 64
run_case gen 1514

# ---- afpacket over a veth pair between two namespaces made for this run ----
afp_skip=
if [ "$(id -u)" -ne 0 ]; then
	afp_skip="creating network namespaces needs root"
elif ! command -v ip >/dev/null 2>&1; then
	afp_skip="ip (iproute2) not found"
else
	tag=sdb$$
	x=$((($$ >> 8) & 255))
	y=$(($$ & 255))
	ifa=${tag}a
	ifb=${tag}b
	maca=$(printf '02:53:46:%02x:%02x:01' "$x" "$y")
	macb=$(printf '02:53:46:%02x:%02x:02' "$x" "$y")
	# frames go to a third MAC: the receiving kernel hands them to the packet sockets, then its
	# IP stack drops them at once (PACKET_OTHERHOST), so nothing answers and nothing is queued
	macc=$(printf '02:53:46:%02x:%02x:03' "$x" "$y")
	if ! err=$(ip netns add "${tag}a" 2>&1); then
		afp_skip="cannot create a network namespace: $err"
	else
		nsa=${tag}a
		if ip netns add "${tag}b" && nsb=${tag}b &&
			ip netns exec "$nsa" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
				net.ipv6.conf.default.disable_ipv6=1 &&
			ip netns exec "$nsb" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
				net.ipv6.conf.default.disable_ipv6=1 &&
			ip -n "$nsa" link add "$ifa" address "$maca" type veth peer name "$ifb" \
				address "$macb" netns "$nsb" &&
			ip -n "$nsa" link set "$ifa" up && ip -n "$nsb" link set "$ifb" up; then
			for _ in $(seq 100); do
				[ "$(ip netns exec "$nsb" cat "/sys/class/net/$ifb/operstate")" = up ] &&
					[ "$(ip netns exec "$nsa" cat "/sys/class/net/$ifa/operstate")" = up ] &&
					break
				sleep 0.05
			done
		else
			afp_skip="cannot set up the veth pair"
		fi
	fi
fi

if [ -n "$afp_skip" ]; then
	echo "SKIP afpacket: $afp_skip"
	rows+=("afpacket|-|-|-|-|-|-|SKIP: $afp_skip")
	summary+=("afpacket SKIP")
else
	for size in 64 1514; do
		sd=$tmp/afpacket-$size.out
		pd=$tmp/afpacket-peer-$size.out
		echo "== afpacket -s $size: eth_blast in $nsa, eth_cpu then afpacket_peer in $nsb"
		ip netns exec "$nsa" "$blast" -i "$ifa" -s "$size" -t 30 -S "$maca" -D "$macc" \
			-a "10.$x.$y.1" -b "10.$x.$y.3" >"$tmp/blast.out" 2>&1 &
		blast_pid=$!
		sleep 0.2
		if ! ip netns exec "$nsb" "$bench" afpacket -i "$ifb" -s "$size" -t "$secs" \
			>"$sd" 2>"$tmp/err"; then
			cat "$tmp/err" >&2
			failed=1
		fi
		if ! ip netns exec "$nsb" "$peer" -i "$ifb" -s "$size" -t "$secs" -f 4096 \
			>"$pd" 2>"$tmp/err"; then
			cat "$tmp/err" >&2
			failed=1
		fi
		kill -TERM "$blast_pid" 2>/dev/null
		wait "$blast_pid" 2>/dev/null
		blast_pid=
		cat "$sd"
		sed 's/^/peer_/' "$pd"
		echo "sender: $(tr '\n' ' ' <"$tmp/blast.out")"
		pps=$(val "$sd" pps)
		ppps=$(val "$pd" pps)
		ratio=$(awk -v a="${pps:-0}" -v b="${ppps:-0}" 'BEGIN {if (b > 0) printf "%.3f", a / b; else print "-"}')
		cpu=$(($(val "$sd" cpu_main_pct) + $(val "$sd" cpu_other_pct)))
		note="offered $(fmt_m "$(val "$sd" offered_pps)") / $(fmt_m "$(val "$pd" offered_pps)") Mpps, kernel drops $(val "$sd" port_drops) / $(val "$pd" drops); CPU: PE $(val "$sd" cpu_main_pct)% + engine $(val "$sd" cpu_other_pct)% = $(ns_pf "$cpu" "$pps") ns/frame, peer $(val "$pd" cpu_pct)% = $(ns_pf "$(val "$pd" cpu_pct)" "$ppps") ns/frame"
		rows+=("afpacket|$size|$(val "$sd" packets)|$(val "$sd" seconds)|$pps|$ppps|$ratio|$note")
		summary+=("afpacket $size B $(fmt_m "$pps") Mpps / $(fmt_m "$ppps") ($ratio)")
	done
fi

echo
printf '%-9s %5s %10s %7s %11s %11s %7s  %s\n' case size packets seconds pps "peer pps" ratio notes
for r in "${rows[@]}"; do
	IFS='|' read -r c s p sec pps ppps ratio note <<<"$r"
	printf '%-9s %5s %10s %7s %11s %11s %7s  %s\n' "$c" "$s" "$p" "$sec" "$pps" "$ppps" "$ratio" "$note"
done
line="eth_cpu: $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g') (softdpu Mpps / peer Mpps (ratio))"
echo "$line"

if [ "$record" = 1 ]; then
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	machine="$(nproc) CPUs ($cpu), $(uname -sr), load $(cut -d' ' -f1 /proc/loadavg)"
	cell() { # the summary entry of a case and size, without its label
		local e
		for e in "${summary[@]}"; do
			case $e in "$1 $2 B "*) echo "${e#"$1 $2 B "}"; return ;; esac
		done
		echo SKIP
	}
	row="| $(date -u '+%Y-%m-%d %H:%M') | $machine | $(cell loop 64) | $(cell loop 1514) | $(cell gen 64) | $(cell gen 1514) | $(cell afpacket 64) | $(cell afpacket 1514) |"
	awk -v row="$row" '/<!-- eth_cpu rows/ {print row} {print}' bench/RESULTS.md >"$tmp/RESULTS.md" &&
		cp "$tmp/RESULTS.md" bench/RESULTS.md && echo "recorded in bench/RESULTS.md"
fi
exit "$failed"
