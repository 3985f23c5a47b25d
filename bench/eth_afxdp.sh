#!/usr/bin/env bash
# bench/eth_afxdp.sh (issue 17): frames per second into a libdoca_eth receive queue (REGULAR
# tasks, one engine thread) from an afxdp device, against a plain AF_XDP receiver written with
# libxdp (bench/afxdp_peer) and against the afpacket backend, all three with the same sender in
# the same run:
#
#   bash bench/eth_afxdp.sh [--build DIR] [--record] [-t secs]
#
# A veth pair between two network namespaces made for this run (tests/integration/netns_lib.sh);
# eth_blast floods 64 B and 1514 B UDP frames from one end to a MAC nobody has (the receiving
# kernel drops them at once, so nothing answers); on the other end, with the sender running,
# eth_cpu afxdp, then afxdp_peer, then eth_cpu afpacket, each counting secs seconds (default 2)
# after a 0.3 s warm-up. Prints every program's key=value lines, a table with both ratios
# (softdpu afxdp / plain AF_XDP, softdpu afxdp / softdpu afpacket) and one summary line.
# --record inserts a dated row into bench/RESULTS.md (before the "eth_afxdp rows" marker).
# Needs root (namespaces, AF_XDP): exit 77 otherwise; a failed program fails the script.
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
peer=$build/bench/afxdp_peer
blast=$build/bench/eth_blast
for f in "$bench" "$peer" "$blast"; do
	if [ ! -x "$f" ]; then
		echo "eth_afxdp.sh: missing $f (build with libxdp-dev and libbpf-dev: ninja -C $build)" >&2
		exit 2
	fi
done
prov=$build/src/providers
export SOFTDPU_PROVIDER_PATH=$prov/afxdp:$prov/afpacket
export SOFTDPU_DEVICE_CONFIG=

# shellcheck source-path=SCRIPTDIR source=../tests/integration/netns_lib.sh
. tests/integration/netns_lib.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-eth-afxdp.XXXXXX") || exit 1
blast_pid=
cleanup() {
	[ -n "$blast_pid" ] && kill "$blast_pid" 2>/dev/null
	netns_cleanup
	rm -rf "$tmp"
}
netns_veth_setup "sdz$$" 02:53:48
trap cleanup EXIT
netns_wait_carrier
# the frames go to a third MAC: the receiving kernel drops them at once (PACKET_OTHERHOST)
macc=${maca%:01}:03

failed=0
rows=()
summary=()
val() { sed -n "s/^$2=//p" "$1" | head -n 1; }
fmt_m() { awk -v v="$1" 'BEGIN {printf "%.3f", v / 1e6}'; }
ratio() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN {if (b > 0) printf "%.3f", a / b; else print "-"}'; }
ns_pf() { awk -v c="${1:-0}" -v p="${2:-0}" 'BEGIN {if (p > 0) printf "%.0f", c / 100 / p * 1e9; else print "-"}'; }
run() { # run <out> <program and args...>: in the receiving namespace
	local out=$1
	shift
	if ! ip netns exec "$nsb" "$@" >"$out" 2>"$tmp/err"; then
		cat "$tmp/err" >&2
		failed=1
	fi
}
for size in 64 1514; do
	xd=$tmp/afxdp-$size.out
	pd=$tmp/peer-$size.out
	ad=$tmp/afpacket-$size.out
	echo "== $size B: eth_blast in $nsa; eth_cpu afxdp, afxdp_peer, eth_cpu afpacket in $nsb"
	ip netns exec "$nsa" "$blast" -i "$ifa" -s "$size" -t 60 -S "$maca" -D "$macc" \
		-a "$ipa" -b "${ipa%.1}.3" >"$tmp/blast.out" 2>&1 &
	blast_pid=$!
	run "$xd" "$bench" afxdp -i "$ifb" -s "$size" -t "$secs" -f 4096
	run "$pd" "$peer" -i "$ifb" -s "$size" -t "$secs" -f 4096
	# the peer's libxdp program stays attached if the peer died: the veth is this run's own
	ip -n "$nsb" link set dev "$ifb" xdp off 2>/dev/null
	run "$ad" "$bench" afpacket -i "$ifb" -s "$size" -t "$secs" -f 4096
	kill -TERM "$blast_pid" 2>/dev/null
	wait "$blast_pid" 2>/dev/null
	blast_pid=
	cat "$xd"
	sed 's/^/peer_/' "$pd"
	sed 's/^/afpacket_/' "$ad"
	echo "sender: $(tr '\n' ' ' <"$tmp/blast.out")"
	x=$(val "$xd" pps)
	p=$(val "$pd" pps)
	a=$(val "$ad" pps)
	cm=$(val "$xd" cpu_main_pct)
	co=$(val "$xd" cpu_other_pct)
	cpu=$((${cm:-0} + ${co:-0}))
	note="offered $(fmt_m "$(val "$xd" offered_pps)") / $(fmt_m "$(val "$pd" offered_pps)") / $(fmt_m "$(val "$ad" offered_pps)") Mpps; drops $(val "$xd" port_drops) / $(val "$pd" drops) / $(val "$ad" port_drops); CPU softdpu afxdp: PE $(val "$xd" cpu_main_pct)% + engine $(val "$xd" cpu_other_pct)% = $(ns_pf "$cpu" "$x") ns/frame, plain AF_XDP $(val "$pd" cpu_pct)% = $(ns_pf "$(val "$pd" cpu_pct)" "$p") ns/frame"
	rows+=("$size|$x|$p|$(ratio "$x" "$p")|$a|$(ratio "$x" "$a")|$note")
	summary+=("$size B $(fmt_m "$x") Mpps / AF_XDP $(fmt_m "$p") ($(ratio "$x" "$p")) / afpacket $(fmt_m "$a") ($(ratio "$x" "$a"))")
done

echo
printf '%5s %11s %11s %8s %11s %8s  %s\n' size "afxdp pps" "xdp pps" "/ xdp" "afp pps" "/ afp" notes
for r in "${rows[@]}"; do
	IFS='|' read -r s x p rp a ra note <<<"$r"
	printf '%5s %11s %11s %8s %11s %8s  %s\n' "$s" "$x" "$p" "$rp" "$a" "$ra" "$note"
done
line="eth_afxdp: $(IFS=';'; echo "${summary[*]}" | sed 's/;/; /g') (softdpu afxdp Mpps / peer Mpps (ratio))"
echo "$line"

if [ "$record" = 1 ] && [ "$failed" = 0 ]; then
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	machine="$(nproc) CPUs ($cpu), $(uname -sr), load $(cut -d' ' -f1 /proc/loadavg)"
	row="| $(date -u '+%Y-%m-%d %H:%M') | $machine | ${summary[0]} | ${summary[1]} |"
	awk -v row="$row" '/<!-- eth_afxdp rows/ {print row} {print}' bench/RESULTS.md >"$tmp/RESULTS.md" &&
		cp "$tmp/RESULTS.md" bench/RESULTS.md && echo "recorded in bench/RESULTS.md"
fi
exit "$failed"
