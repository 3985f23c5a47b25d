#!/usr/bin/env bash
# bench/urom_cmd.sh: the urom_cmd benchmark and its peer, ucx_perftest, in one invocation on the
# same machine with the same UCX_TLS and UCX_NET_DEVICES=lo.
#
#   bash bench/urom_cmd.sh [--build DIR] [--record] [urom_cmd options: -n -w -m -q]
#
# Starts a private softdpu-uromd (port picked by the kernel, temporary run dir and secret), runs
# bench/urom_cmd against it (graph loopback round trip with 1 in flight, command rate with up to
# 128 in flight), stops it, then runs ucx_perftest -t ucp_am_lat and -t ucp_am_bw with 64-byte
# messages (server in the background on a free port), once plain (shared memory, as softdpu's
# host<->worker endpoints since 2026-12-02) and once with -e (endpoints with error handling,
# which ride TCP on lo in UCX 1.13; the first recorded row compares with it). Prints every
# figure and ratios:
#   round trip / ucx_perftest one-way AM latency   (goal <= 2.5)
#   command rate / ucx_perftest 64-byte AM rate      (goal >= 0.8, issue 18; 0.5 before)
#   the same for commands submitted without DOCA_TASK_SUBMIT_FLAG_FLUSH, one flush per window
#   (one active message each way for many commands; docs/architecture.md, "UROM")
# --record appends a dated row to bench/RESULTS.md (before the "urom_cmd rows" marker).
# Environment: UCX_TLS is passed to both sides unchanged (unset = UCX's default on both).
# SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
build=build
record=0
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--record) record=1; shift ;;
	*) args+=("$1"); shift ;;
	esac
done
case $build in /*) ;; *) build=$ROOT/$build ;; esac

uromd=$build/src/urom/service/softdpu-uromd
worker=$build/src/urom/worker/softdpu-urom-worker
bench=$build/bench/urom_cmd
graph_so=$(find "$build/plugins" -name worker_graph.so -print -quit 2>/dev/null || true)
for f in "$uromd" "$worker" "$bench" "$graph_so"; do
	if [ ! -x "$f" ] && [ ! -f "$f" ] || [ -z "$f" ]; then
		echo "urom_cmd.sh: missing $f (build with: ninja -C $build)" >&2
		exit 1
	fi
done
command -v ucx_perftest >/dev/null || { echo "urom_cmd.sh: ucx_perftest not found (ucx-utils)" >&2; exit 1; }

export UCX_NET_DEVICES=lo
tls_desc=${UCX_TLS:-default}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-bench.XXXXXX")
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

# ---- softdpu: a private daemon and urom_cmd ----
SOFTDPU_UROM_WORKER_BIN=$worker UROM_PLUGIN_PATH=$(dirname "$graph_so") \
	"$uromd" --foreground --listen 127.0.0.1:0 --run-dir "$tmp/run" \
	--secret-file "$tmp/secret" >"$tmp/uromd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/run/uromd.port" ] && break
	kill -0 "$daemon_pid" 2>/dev/null || { cat "$tmp/uromd.log" >&2; exit 1; }
	sleep 0.1
done
port=$(cat "$tmp/run/uromd.port")
export SOFTDPU_UROM_SERVICE_ADDR=127.0.0.1:$port SOFTDPU_UROM_SECRET_FILE=$tmp/secret \
	SOFTDPU_UROM_RUN_DIR=$tmp/run
"$bench" "${args[@]}" | tee "$tmp/urom_cmd.out"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=
unset SOFTDPU_UROM_SERVICE_ADDR SOFTDPU_UROM_SECRET_FILE SOFTDPU_UROM_RUN_DIR
val() { sed -n "s/^$1=//p" "$tmp/urom_cmd.out"; }
rt_med=$(val roundtrip_median_us)
rt_mean=$(val roundtrip_mean_us)
rate=$(val rate_cps)
brate=$(val rate_batched_cps)

# ---- the peer: ucx_perftest, server in the background on a free port ----
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# perftest <test> <iterations> [-e]: prints the "Final:" line's fields
perftest() {
	local p out
	p=$(free_port)
	ucx_perftest -p "$p" ${3:-} >"$tmp/perf-server.log" 2>&1 &
	perf_pid=$!
	for _ in $(seq 50); do
		if out=$(timeout 120 ucx_perftest 127.0.0.1 -p "$p" ${3:-} -t "$1" -s 64 -n "$2" 2>&1); then
			break
		fi
		out=
		sleep 0.1
	done
	wait "$perf_pid" 2>/dev/null || true
	perf_pid=
	echo "$out" | awk '/^Final:/ {print $3, $4, $9}'
}
# Plain endpoints (shared memory on one host: what softdpu's host<->worker endpoints use, the
# worker's death being reported by the service), then endpoints with error handling (-e), which
# softdpu used before 2026-12-02: in UCX 1.13 the shared-memory transports lack peer-failure
# support, so those endpoints ride TCP over lo. Kept as a second reference.
read -r lat_med lat_avg _ < <(perftest ucp_am_lat 100000)
read -r _ _ bw_rate < <(perftest ucp_am_bw 1000000)
read -r elat_med elat_avg _ < <(perftest ucp_am_lat 20000 -e)
read -r _ _ ebw_rate < <(perftest ucp_am_bw 200000 -e)
if [ -z "${lat_avg:-}" ] || [ -z "${bw_rate:-}" ] || [ -z "${elat_avg:-}" ] || [ -z "${ebw_rate:-}" ]; then
	echo "urom_cmd.sh: ucx_perftest gave no result" >&2
	exit 1
fi

div() { awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN {printf f, a / b}'; }
ratio_lat=$(div "$rt_mean" "$lat_avg" %.1f)
ratio_lat_med=$(div "$rt_med" "$lat_med" %.1f)
ratio_rate=$(div "$rate" "$bw_rate" %.3f)
ratio_brate=$(div "$brate" "$bw_rate" %.3f)
eratio_lat=$(div "$rt_mean" "$elat_avg" %.2f)
eratio_lat_med=$(div "$rt_med" "$elat_med" %.2f)
eratio_rate=$(div "$rate" "$ebw_rate" %.2f)
echo "ucx_perftest_am_lat_oneway_median_us=$lat_med"
echo "ucx_perftest_am_lat_oneway_mean_us=$lat_avg"
echo "ucx_perftest_am_bw_64B_msg_per_s=$bw_rate"
echo "ucx_perftest_e_am_lat_oneway_median_us=$elat_med"
echo "ucx_perftest_e_am_lat_oneway_mean_us=$elat_avg"
echo "ucx_perftest_e_am_bw_64B_msg_per_s=$ebw_rate"
echo "ratio_roundtrip_mean_vs_oneway_mean=$ratio_lat (goal <= 2.5)"
echo "ratio_roundtrip_median_vs_oneway_median=$ratio_lat_med"
echo "ratio_rate_vs_am_bw=$ratio_rate (goal >= 0.8)"
echo "ratio_rate_batched_vs_am_bw=$ratio_brate (goal >= 0.8)"
echo "ratio_roundtrip_mean_vs_e_oneway_mean=$eratio_lat"
echo "ratio_roundtrip_median_vs_e_oneway_median=$eratio_lat_med"
echo "ratio_rate_vs_e_am_bw=$eratio_rate"

if [ "$record" = 1 ]; then
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	ucxv=$(ucx_info -v 2>/dev/null | sed -n 's/^# Version \([0-9.]*\).*/\1/p' | head -n 1)
	machine="$(nproc) CPUs ($cpu), $(uname -sr), UCX ${ucxv:-?}"
	load=$(cut -d' ' -f1 /proc/loadavg)
	row="| $(date -u '+%Y-%m-%d %H:%M') | $machine, load $load | UCX_TLS=$tls_desc, lo | $rt_med / $rt_mean | $lat_med / $lat_avg | $ratio_lat_med / $ratio_lat | $elat_med / $elat_avg | $eratio_lat_med / $eratio_lat | $(printf '%.0f' "$rate") | $bw_rate | $ratio_rate | $ebw_rate | $eratio_rate | $(printf '%.0f' "$brate") | $ratio_brate |"
	awk -v row="$row" '/<!-- urom_cmd rows/ {print row} {print}' bench/RESULTS.md >"$tmp/RESULTS.md"
	cp "$tmp/RESULTS.md" bench/RESULTS.md
	echo "recorded in bench/RESULTS.md"
fi
