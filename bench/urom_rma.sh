#!/usr/bin/env bash
# bench/urom_rma.sh: worker-executed put and get into host memory (bench/urom_rma) and its peer,
# ucx_perftest -t ucp_put_bw / -t ucp_get, in one invocation on the same machine with the same
# UCX_TLS and UCX_NET_DEVICES, for every power-of-two size from 8 B to 4 MiB (-s/-S change it).
#
#   bash bench/urom_rma.sh [--build DIR] [--record] [-s MIN] [-S MAX] [-w WINDOW] [-b BYTES]
#
# Starts a private softdpu-uromd (port picked by the kernel, temporary run dir and secret) whose
# plugin path holds worker_rmabench.so, runs urom_rma (one worker, a 4 MiB host buffer exported
# into a one-member domain; W = 16 transfers in flight; the worker times each run from its first
# issue to the flush), stops the daemon, then runs ucx_perftest for each size with the same
# outstanding count (-O W) and about the same bytes moved, server in the background on a free
# port. Prints per size and operation: softdpu MiB/s, ucx_perftest MiB/s and their ratio
# (goal >= 0.9 from 1 MiB up). Then bench/urom_pingpong (two ranks, 8-byte ping-pong through
# their workers' worker_sandbox) against ucx_perftest -t tag_lat -s 8, and bench/urom_rma_atomic
# (worker_rma, two ranks): the rate of 64-bit fetch-adds by rank 0's worker on the peer's
# exported word (-A 0: its own), W in flight, against ucx_perftest -t ucp_fadd -O W (message
# rate), and the AM ping-pong one-way latency (8 B, host -> worker -> worker -> host, half the
# round trip) against ucx_perftest -t ucp_am_lat -s 8, with their ratios. --record appends a dated table to bench/RESULTS.md (before the
# "urom_rma rows" marker). UCX_TLS is passed to both sides unchanged (unset = UCX's default).
# SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
build=build
record=0
min=8
max=$((4 << 20))
window=16
bytes=$((256 << 20))
atomic_dest=1
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--record) record=1; shift ;;
	-s) min=$2; shift 2 ;;
	-S) max=$2; shift 2 ;;
	-w) window=$2; shift 2 ;;
	-b) bytes=$2; shift 2 ;;
	-A) atomic_dest=$2; shift 2 ;;
	*) echo "urom_rma.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
case $build in /*) ;; *) build=$ROOT/$build ;; esac

uromd=$build/src/urom/service/softdpu-uromd
worker=$build/src/urom/worker/softdpu-urom-worker
bench=$build/bench/urom_rma
plugin=$build/bench/worker_rmabench.so
pingpong=$build/bench/urom_pingpong
sandbox=$build/plugins/worker_sandbox/worker_sandbox.so
atomic=$build/bench/urom_rma_atomic
rma=$build/plugins/worker_rma/worker_rma.so
for f in "$uromd" "$worker" "$bench" "$plugin" "$pingpong" "$sandbox" "$atomic" "$rma"; do
	[ -e "$f" ] || { echo "urom_rma.sh: missing $f (build with: ninja -C $build)" >&2; exit 1; }
done
command -v ucx_perftest >/dev/null || { echo "urom_rma.sh: ucx_perftest not found (ucx-utils)" >&2; exit 1; }

export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
tls_desc=${UCX_TLS:-default}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-rma.XXXXXX")
daemon_pid=
perf_pid=
cleanup() {
	[ -n "$perf_pid" ] && kill "$perf_pid" 2>/dev/null || true
	if [ -n "$daemon_pid" ]; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$daemon_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# ---- softdpu: a private daemon with worker_rmabench.so alone on its plugin path ----
mkdir -p "$tmp/plugins"
ln -s "$plugin" "$tmp/plugins/worker_rmabench.so"
ln -s "$sandbox" "$tmp/plugins/worker_sandbox.so"
ln -s "$rma" "$tmp/plugins/worker_rma.so"
SOFTDPU_UROM_WORKER_BIN=$worker UROM_PLUGIN_PATH=$tmp/plugins \
	"$uromd" --foreground --listen 127.0.0.1:0 --run-dir "$tmp/run" \
	--secret-file "$tmp/secret" >"$tmp/uromd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/run/uromd.port" ] && break
	kill -0 "$daemon_pid" 2>/dev/null || { cat "$tmp/uromd.log" >&2; exit 1; }
	sleep 0.1
done
port=$(cat "$tmp/run/uromd.port")
SOFTDPU_UROM_SERVICE_ADDR=127.0.0.1:$port SOFTDPU_UROM_SECRET_FILE=$tmp/secret \
	SOFTDPU_UROM_RUN_DIR=$tmp/run \
	"$bench" -s "$min" -S "$max" -w "$window" -b "$bytes" | tee "$tmp/urom_rma.out"
SOFTDPU_UROM_SERVICE_ADDR=127.0.0.1:$port SOFTDPU_UROM_SECRET_FILE=$tmp/secret \
	SOFTDPU_UROM_RUN_DIR=$tmp/run "$pingpong" -n 20000 -s 8 | tee "$tmp/pingpong.out"
SOFTDPU_UROM_SERVICE_ADDR=127.0.0.1:$port SOFTDPU_UROM_SECRET_FILE=$tmp/secret \
	SOFTDPU_UROM_RUN_DIR=$tmp/run "$atomic" -n 100000 -a 20000 -W "$window" -d "$atomic_dest" \
	-s 8 | tee "$tmp/atomic.out"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=

# ---- the peer: ucx_perftest, server in the background on a free port ----
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# perftest <test> <size> <iters>: prints the "Final:" line's average bandwidth (MB/s = MiB/s)
perftest() {
	local p out
	p=$(free_port)
	ucx_perftest -p "$p" >"$tmp/perf-server.log" 2>&1 &
	perf_pid=$!
	for _ in $(seq 50); do
		if out=$(timeout 120 ucx_perftest 127.0.0.1 -p "$p" -t "$1" -s "$2" -n "$3" \
			-w $(($3 / 10 + 1)) -O "$window" 2>&1); then
			break
		fi
		out=
		sleep 0.1
	done
	wait "$perf_pid" 2>/dev/null || true
	perf_pid=
	echo "$out" | awk '/^Final:/ {print $6}'
}

# ping-pong latency: one-way (half the round trip) against tag_lat's one-way latency, 8 B
pp_ow=$(sed -n 's/^oneway_mean_us=//p' "$tmp/pingpong.out")
pp_owm=$(sed -n 's/^oneway_median_us=//p' "$tmp/pingpong.out")
p=$(free_port)
ucx_perftest -p "$p" >"$tmp/perf-server.log" 2>&1 &
perf_pid=$!
tag=
for _ in $(seq 50); do
	if tag=$(timeout 120 ucx_perftest 127.0.0.1 -p "$p" -t tag_lat -s 8 -n 100000 2>&1); then
		break
	fi
	tag=
	sleep 0.1
done
wait "$perf_pid" 2>/dev/null || true
perf_pid=
read -r tag_med tag_avg < <(echo "$tag" | awk '/^Final:/ {print $3, $4}')
pp_ratio=$(awk -v a="$pp_ow" -v b="$tag_avg" 'BEGIN {printf "%.1f", a / b}')
echo "ping-pong one-way mean / median (us): $pp_ow / $pp_owm; tag_lat one-way median / mean (us): $tag_med / $tag_avg; ratio (mean) $pp_ratio"

# perftest_final <test> <args...>: the "Final:" line of one ucx_perftest run (server on a free port)
perftest_final() {
	local p t=$1 out=
	shift
	p=$(free_port)
	ucx_perftest -p "$p" >"$tmp/perf-server.log" 2>&1 &
	perf_pid=$!
	for _ in $(seq 50); do
		if out=$(timeout 120 ucx_perftest 127.0.0.1 -p "$p" -t "$t" "$@" 2>&1); then
			break
		fi
		out=
		sleep 0.1
	done
	wait "$perf_pid" 2>/dev/null || true
	perf_pid=
	echo "$out" | awk '/^Final:/'
}

# fetch-add rate: ops/s against ucp_fadd's average message rate, same outstanding count
fa_ours=$(sed -n 's/^fadd_ops_per_s=//p' "$tmp/atomic.out")
fa_peer=$(perftest_final ucp_fadd -n 100000 -O "$window" | awk '{print $8}')
[ -n "$fa_peer" ] || { echo "urom_rma.sh: ucx_perftest -t ucp_fadd gave no result" >&2; exit 1; }
fa_ratio=$(awk -v a="$fa_ours" -v b="$fa_peer" 'BEGIN {printf "%.3f", a / b}')
echo "fetch-add rate (64-bit, $window in flight, dest member $atomic_dest): softdpu $fa_ours ops/s; ucx_perftest -t ucp_fadd -O $window: $fa_peer ops/s; ratio $fa_ratio"

# AM ping-pong latency: one-way (half the round trip) against ucp_am_lat's one-way latency, 8 B
am_ow=$(sed -n 's/^am_oneway_mean_us=//p' "$tmp/atomic.out")
am_owm=$(sed -n 's/^am_oneway_median_us=//p' "$tmp/atomic.out")
read -r am_med am_avg < <(perftest_final ucp_am_lat -s 8 -n 100000 | awk '{print $3, $4}')
[ -n "$am_avg" ] || { echo "urom_rma.sh: ucx_perftest -t ucp_am_lat gave no result" >&2; exit 1; }
am_ratio=$(awk -v a="$am_ow" -v b="$am_avg" 'BEGIN {printf "%.1f", a / b}')
am_ratio_med=$(awk -v a="$am_owm" -v b="$am_med" 'BEGIN {printf "%.1f", a / b}')
echo "AM ping-pong one-way mean / median (us): $am_ow / $am_owm; ucp_am_lat one-way median / mean (us): $am_med / $am_avg; ratio mean $am_ratio, median $am_ratio_med"

host=$(nproc) cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
ucxv=$(ucx_info -v 2>/dev/null | sed -n -e 's/.*version=\([0-9.]*\).*/\1/p' -e 's/^# Library version: \([0-9.]*\).*/\1/p' | head -1)
date_s=$(date -u '+%Y-%m-%d %H:%M')
rows=()
printf '%-6s %10s %12s %14s %8s\n' op size softdpu_MiBps perftest_MiBps ratio
while read -r op kv_size kv_iters kv_bw _; do
	size=${kv_size#size=} iters=${kv_iters#iters=} ours=${kv_bw#MiBps=}
	test=ucp_put_bw
	[ "$op" = get ] && test=ucp_get
	peer=$(perftest "$test" "$size" "$iters")
	if [ -z "$peer" ]; then
		echo "urom_rma.sh: ucx_perftest -t $test -s $size gave no result" >&2
		exit 1
	fi
	ratio=$(awk -v a="$ours" -v b="$peer" 'BEGIN {printf "%.2f", a / b}')
	printf '%-6s %10s %12s %14s %8s\n' "$op" "$size" "$ours" "$peer" "$ratio"
	rows+=("| $op | $size | $ours | $peer | $ratio |")
done < <(grep -E '^(put|get) ' "$tmp/urom_rma.out")

if [ "$record" = 1 ]; then
	load=$(cut -d' ' -f1 /proc/loadavg)
	{
		echo "#### urom_rma $date_s UTC, $host CPUs ($cpu), Linux $(uname -r), UCX ${ucxv:-?}, load $load; UCX_TLS=$tls_desc, UCX_NET_DEVICES=$UCX_NET_DEVICES, window $window, SOFTDPU_UROM_XRMA=${SOFTDPU_UROM_XRMA:-(unset: the xrma path over TCP)}"
		echo
		echo "| op | size (B) | softdpu worker (MiB/s) | ucx_perftest (MiB/s) | ratio (goal ≥ 0.9 from 1 MiB) |"
		echo "|---|---|---|---|---|"
		printf '%s\n' "${rows[@]}"
		echo
		echo "Ping-pong through two workers' worker_sandbox (8 B, host -> worker -> worker -> host each way), one-way = half the round trip: mean $pp_ow µs, median $pp_owm µs; ucx_perftest -t tag_lat -s 8 one-way: median $tag_med µs, mean $tag_avg µs; ratio (mean) $pp_ratio."
		echo
		echo "worker_rma fetch-add rate (64-bit, $window in flight, dest member $atomic_dest): $fa_ours ops/s; ucx_perftest -t ucp_fadd -O $window: $fa_peer ops/s; ratio $fa_ratio. worker_rma AM ping-pong (8 B) one-way mean / median: $am_ow / $am_owm µs; ucx_perftest -t ucp_am_lat -s 8 one-way median / mean: $am_med / $am_avg µs; ratio (mean) $am_ratio."
		echo
	} >"$tmp/rows.md"
	python3 - "$ROOT/bench/RESULTS.md" "$tmp/rows.md" <<'PY'
import sys
path, rows = sys.argv[1], open(sys.argv[2]).read()
s = open(path).read()
marker = '<!-- urom_rma rows: bench/urom_rma.sh --record inserts new tables above this line -->'
if marker not in s:
    s = s.rstrip('\n') + '\n\n### `urom_rma` (`bash bench/urom_rma.sh --record`)\n\n' + marker + '\n'
s = s.replace(marker, rows + marker)
open(path, 'w').write(s)
PY
	echo "urom_rma.sh: recorded in bench/RESULTS.md"
fi
