#!/usr/bin/env bash
# bench/urom_overlap.sh: OSU-style non-blocking collectives (issue 13): worker_coll's
# ialltoall / iallreduce / iallgather / ibcast, run by the ranks' UROM workers, against
# Open MPI's MPI_I* on the same ranks in the same mpirun (bench/urom_overlap.c has the method).
#
#   bash bench/urom_overlap.sh [--build DIR] [-n N] [--record | --record-to FILE]
#                              [--label TEXT] [--mpirun PATH] [--host-threads spare|own]
#                              [-- UROM_OVERLAP_ARGS...]
#
# Starts a private softdpu-uromd (port picked by the kernel, temporary run dir and secret)
# whose plugin path holds worker_coll.so alone, then
#   mpirun --allow-run-as-root --oversubscribe -np N --bind-to none urom_overlap -R ... -C ...
# with UCX_NET_DEVICES=lo (unless set) and UCX_TLS passed unchanged (unset = UCX's default),
# as bench/urom_rma.sh does, for the workers, the ranks' softdpu libraries and Open MPI alike.
# Binding: when the machine has at least 2N + 1 CPUs (counting one CPU per physical core first,
# so that no rank shares a core with a worker through SMT), rank r is pinned to the r-th CPU
# (urom_overlap -R), its worker to the (N + r)-th (urom_overlap -C, doca_urom_worker_set_cpuset;
# the daemon gets the workers' CPUs as --cpuset), and with at least 3N + 1 CPUs the threads the
# rank's softdpu host library starts (the export engine's progress thread, any UCX thread)
# go to the (2N + r)-th (urom_overlap -E; --host-threads own leaves them on the rank's CPU,
# where they take CPU time from the rank). The rest (the daemon, idle in epoll, Open MPI's
# helper threads, the system) are not pinned; with fewer CPUs nothing is pinned and ranks and
# workers share the CPUs (the numbers then say nothing about overlap: a busy host CPU starves
# its worker).
# Prints the per-row table: softdpu and Open MPI pure / overall / compute time (µs, maximum
# over ranks), overlap (%) and the pure ratio softdpu / Open MPI. Goal (issue 13): overlap
# >= 95% from 16 KiB up with pure time <= 1.5 x Open MPI's.
# --record appends a dated table to bench/RESULTS.md (before the "urom_overlap rows" marker);
# --record-to FILE appends it to FILE instead (for runs on another machine). --label adds a
# note to the table's heading (the machine, "meaningless for overlap", ...).
# SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
build=build
n=4
record=0
record_to=
label=
mpirun=${MPIRUN:-mpirun}
host_threads=spare
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	-n) n=$2; shift 2 ;;
	--record) record=1; shift ;;
	--record-to) record=1; record_to=$2; shift 2 ;;
	--label) label=$2; shift 2 ;;
	--mpirun) mpirun=$2; shift 2 ;;
	--host-threads) host_threads=$2; shift 2 ;;
	--) shift; args=("$@"); break ;;
	*) echo "urom_overlap.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
case $build in /*) ;; *) build=$ROOT/$build ;; esac
[ -n "$record_to" ] || record_to=$ROOT/bench/RESULTS.md

uromd=$build/src/urom/service/softdpu-uromd
worker=$build/src/urom/worker/softdpu-urom-worker
bench=$build/bench/urom_overlap
plugin=$build/plugins/worker_coll/worker_coll.so
for f in "$uromd" "$worker" "$bench" "$plugin"; do
	[ -e "$f" ] || { echo "urom_overlap.sh: missing $f (build with: ninja -C $build)" >&2; exit 1; }
done
command -v "$mpirun" >/dev/null || { echo "urom_overlap.sh: $mpirun not found (openmpi-bin)" >&2; exit 1; }

export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
tls_desc=${UCX_TLS:-default}

# CPUs: one per physical core first (lowest sibling), then the remaining SMT siblings
mapfile -t cpus < <(
	for c in /sys/devices/system/cpu/cpu[0-9]*; do
		id=${c##*cpu}
		[ -r "$c/topology/thread_siblings_list" ] || { echo "0 $id"; continue; }
		first=$(sed 's/[-,].*//' "$c/topology/thread_siblings_list")
		if [ "$first" = "$id" ]; then echo "0 $id"; else echo "1 $id"; fi
	done | sort -k1,1n -k2,2n | awk '{print $2}'
)
allowed=$(nproc)
pin=0
if [ "${#cpus[@]}" -ge $((2 * n + 1)) ] && [ "$allowed" -ge $((2 * n + 1)) ]; then
	pin=1
	rcpus=$(IFS=,; echo "${cpus[*]:0:n}")
	wcpus=$(IFS=,; echo "${cpus[*]:n:n}")
	binding="ranks on CPUs $rcpus, workers on CPUs $wcpus"
	if [ "$host_threads" = spare ] && [ "${#cpus[@]}" -ge $((3 * n + 1)) ]; then
		ecpus=$(IFS=,; echo "${cpus[*]:2*n:n}")
		binding="$binding, host library threads on CPUs $ecpus"
	else
		ecpus=
		binding="$binding, host library threads on the ranks' CPUs"
	fi
else
	binding="unpinned: $n ranks + $n workers on $allowed CPUs (meaningless for overlap)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-overlap.XXXXXX")
daemon_pid=
cleanup() {
	if [ -n "$daemon_pid" ]; then
		kill -TERM "$daemon_pid" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$daemon_pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$daemon_pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

mkdir -p "$tmp/plugins"
ln -s "$plugin" "$tmp/plugins/worker_coll.so"
daemon_args=(--foreground --listen 127.0.0.1:0 --run-dir "$tmp/run" --secret-file "$tmp/secret")
[ "$pin" = 1 ] && daemon_args+=(--cpuset "$wcpus")
SOFTDPU_UROM_WORKER_BIN=$worker UROM_PLUGIN_PATH=$tmp/plugins \
	"$uromd" "${daemon_args[@]}" >"$tmp/uromd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do
	[ -s "$tmp/run/uromd.port" ] && break
	kill -0 "$daemon_pid" 2>/dev/null || { cat "$tmp/uromd.log" >&2; exit 1; }
	sleep 0.1
done
[ -s "$tmp/run/uromd.port" ] || { echo "urom_overlap.sh: the daemon wrote no port" >&2; exit 1; }
port=$(cat "$tmp/run/uromd.port")

bench_args=()
[ "$pin" = 1 ] && bench_args+=(-R "$rcpus" -C "$wcpus")
[ "$pin" = 1 ] && [ -n "$ecpus" ] && bench_args+=(-E "$ecpus")
echo "urom_overlap.sh: $n ranks; $binding; UCX_TLS=$tls_desc UCX_NET_DEVICES=$UCX_NET_DEVICES"
rc=0
SOFTDPU_UROM_SERVICE_ADDR=127.0.0.1:$port SOFTDPU_UROM_SECRET_FILE=$tmp/secret \
	SOFTDPU_UROM_RUN_DIR=$tmp/run \
	timeout 1200 "$mpirun" --allow-run-as-root --oversubscribe -np "$n" --bind-to none \
	"$bench" "${bench_args[@]}" "${args[@]}" >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/out"
if [ "$rc" != 0 ]; then
	cat "$tmp/err" >&2
	echo "urom_overlap.sh: mpirun exited $rc; daemon log:" >&2
	tail -40 "$tmp/uromd.log" >&2
	for f in "$tmp"/run/*.log; do [ -e "$f" ] && { echo "== $f" >&2; tail -20 "$f" >&2; }; done
	exit 1
fi
grep -v '^$' "$tmp/err" >&2 || true

# the table
rows=()
printf '%-10s %8s | %9s %9s %9s %7s %7s %7s | %9s %9s %9s %7s | %6s\n' coll size sd_pure \
	sd_all sd_cpu sd_ovl% sd_init sd_wait mpi_pure mpi_all mpi_cpu mpi_ovl% ratio
while read -r _ coll size _ sp so sc _ sov mp mo mc _ mov ratio si sw _; do
	printf '%-10s %8s | %9s %9s %9s %7s %7s %7s | %9s %9s %9s %7s | %6s\n' "$coll" "$size" \
		"$sp" "$so" "$sc" "$sov" "$si" "$sw" "$mp" "$mo" "$mc" "$mov" "$ratio"
	rows+=("| $coll | $size | $sp | $so | $sc | $sov | $si / $sw | $mp | $mo | $mc | $mov | $ratio |")
done < <(grep '^row ' "$tmp/out")
[ "${#rows[@]}" -gt 0 ] || { echo "urom_overlap.sh: no rows" >&2; exit 1; }

if [ "$record" = 1 ]; then
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	head=$(grep '^# urom_overlap:' "$tmp/out" | sed 's/^# urom_overlap: //')
	libs=$(grep '^# lib:' "$tmp/out" | sed 's/^# lib: //')
	date_s=$(date -u '+%Y-%m-%d %H:%M')
	load=$(cut -d' ' -f1 /proc/loadavg)
	{
		echo "#### urom_overlap $date_s UTC${label:+, $label}; $allowed CPUs ($cpu), Linux $(uname -r), load $load; N = $n; $binding; $libs; UCX_TLS=$tls_desc, UCX_NET_DEVICES=$UCX_NET_DEVICES"
		echo
		echo "Run: $head."
		echo
		echo "| collective | size (B) | softdpu pure (µs) | softdpu overall (µs) | softdpu compute (µs) | softdpu overlap (%) | softdpu start / wait (µs) | Open MPI pure (µs) | Open MPI overall (µs) | Open MPI compute (µs) | Open MPI overlap (%) | pure ratio softdpu / Open MPI |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
		printf '%s\n' "${rows[@]}"
		echo
	} >"$tmp/rows.md"
	if [ "$record_to" = "$ROOT/bench/RESULTS.md" ]; then
		python3 - "$record_to" "$tmp/rows.md" <<'PY'
import sys
path, rows = sys.argv[1], open(sys.argv[2]).read()
s = open(path).read()
marker = '<!-- urom_overlap rows: bench/urom_overlap.sh --record inserts new tables above this line -->'
if marker not in s:
    s = s.rstrip('\n') + '\n\n### `urom_overlap` (`bash bench/urom_overlap.sh --record`)\n\n' + marker + '\n'
s = s.replace(marker, rows + marker)
open(path, 'w').write(s)
PY
	else
		cat "$tmp/rows.md" >>"$record_to"
	fi
	echo "urom_overlap.sh: recorded in $record_to"
fi
