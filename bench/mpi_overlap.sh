#!/usr/bin/env bash
# bench/mpi_overlap (issue 16): the OSU overlap measurement of a plain MPI program, run twice in
# one invocation with the same launcher and pinning: as it is (the MPI library's own
# collectives) and with libsoftdpu_mpi preloaded (softdpu workers progress them). Starts its own
# softdpu-uromd (private port, run dir and secret) with worker_coll, pins ranks to the first N
# cores and the workers to the next N when the machine has 2N + 1 CPUs, and prints one table:
# per collective and size, pure communication and overlap for both, and the ratio of softdpu's
# pure time to the MPI library's. A third run (unless --no-staged) preloads the library with
# SOFTDPU_MPI_ZCOPY_MIN=0, every collective staged through the pool as before zero copy: its
# pure time and the ratio of the zero-copy time to it. --record appends it to bench/RESULTS.md.
#   bash bench/mpi_overlap.sh [--build DIR] [--mpi openmpi|mpich] [-n N] [--mpirun PATH]
#                             [--record] [--no-staged] [-- mpi_overlap options]
# SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
build=build
mpi=openmpi
n=4
record=0
staged=1
mpirun=
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--mpi) mpi=$2; shift 2 ;;
	-n) n=$2; shift 2 ;;
	--mpirun) mpirun=$2; shift 2 ;;
	--record) record=1; shift ;;
	--no-staged) staged=0; shift ;;
	--) shift; args=("$@"); break ;;
	*) echo "mpi_overlap.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
case $build in /*) ;; *) build=$ROOT/$build ;; esac
case $mpi in
openmpi) mpirun=${mpirun:-$(command -v mpirun.openmpi || true)} ;;
mpich) mpirun=${mpirun:-$(command -v mpirun.mpich || true)} ;;
*) echo "mpi_overlap.sh: --mpi openmpi or mpich" >&2; exit 2 ;;
esac
[ -n "$mpirun" ] || { echo "mpi_overlap.sh: no launcher for $mpi" >&2; exit 1; }
uromd=$build/src/urom/service/softdpu-uromd
worker=$build/src/urom/worker/softdpu-urom-worker
plugin=$build/plugins/worker_coll/worker_coll.so
lib=$build/src/mpi/libsoftdpu_mpi_$mpi.so
bench=$build/bench/mpi_overlap_$mpi
for f in "$uromd" "$worker" "$plugin" "$lib" "$bench"; do
	[ -e "$f" ] || { echo "mpi_overlap.sh: missing $f (ninja -C $build)" >&2; exit 1; }
done
export UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}

ncpu=$(nproc)
rcpus= wcpus= binding="unpinned: $n ranks + $n workers on $ncpu CPUs (meaningless for overlap)"
if [ "$ncpu" -ge $((2 * n + 1)) ]; then
	rcpus=$(seq -s, 0 $((n - 1)))
	wcpus=$(seq -s, "$n" $((2 * n - 1)))
	binding="ranks on CPUs $rcpus, workers on CPUs $wcpus"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-mpi-overlap.XXXXXX")
. scripts/lib-uromd.sh
cleanup() {
	sdp_uromd_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
dargs=()
[ -z "$wcpus" ] || dargs+=(--cpuset "$wcpus")
sdp_uromd_start "$build" "$tmp" "$plugin" -- "${dargs[@]}" || exit 1
port=$sdp_uromd_port

# run <out> <preload: 0 plain | 1 softdpu | 2 softdpu staged>
run() {
	local out=$1 preload=$2 envs=(UCX_NET_DEVICES="$UCX_NET_DEVICES") a=()
	[ -z "$rcpus" ] || envs+=(SDP_BENCH_RANK_CPUS="$rcpus")
	if [ "$preload" != 0 ]; then
		envs+=(LD_PRELOAD="$lib" SOFTDPU_UROM_SERVICE_ADDR="127.0.0.1:$port"
			SOFTDPU_UROM_SECRET_FILE="$tmp/secret" SOFTDPU_MPI_STATS=1)
		[ -z "$wcpus" ] || envs+=(SOFTDPU_MPI_WORKER_CPUS="$wcpus")
		[ "$preload" != 2 ] || envs+=(SOFTDPU_MPI_ZCOPY_MIN=0)
	fi
	if [ "$mpi" = openmpi ]; then
		a=(--allow-run-as-root --oversubscribe --bind-to none -np "$n")
		for e in "${envs[@]}"; do a+=(-x "$e"); done
	else
		a=(-n "$n")
		for e in "${envs[@]}"; do a+=(-genv "${e%%=*}" "${e#*=}"); done
	fi
	timeout 1800 "$mpirun" "${a[@]}" "$bench" "${args[@]}" >"$out" 2>&1
}
echo "mpi_overlap.sh: $mpi, $n ranks; $binding; UCX_NET_DEVICES=$UCX_NET_DEVICES"
run "$tmp/plain" 0 || { cat "$tmp/plain" >&2; exit 1; }
run "$tmp/sd" 1 || { cat "$tmp/sd" >&2; tail -20 "$tmp/uromd.log" >&2; exit 1; }
if [ "$staged" = 1 ]; then
	run "$tmp/st" 2 || { cat "$tmp/st" >&2; tail -20 "$tmp/uromd.log" >&2; exit 1; }
fi
if ! grep -qE '^softdpu_mpi_stats rank=0 .*offloaded=[1-9]' "$tmp/sd"; then
	echo "mpi_overlap.sh: libsoftdpu_mpi offloaded nothing:" >&2
	grep -v '^row ' "$tmp/sd" >&2
	exit 1
fi

printf '%-10s %8s | %10s %7s | %10s %7s | %6s | %10s %6s\n' coll size mpi_pure mpi_ovl% \
	sd_pure sd_ovl% sd/mpi staged zc/st
rows=()
while read -r _ coll size mp _ _ mo; do
	read -r _ _ _ sp _ _ so < <(grep "^row $coll $size " "$tmp/sd")
	ratio=$(awk -v a="$sp" -v b="$mp" 'BEGIN { printf "%.2f", a / b }')
	tp=- zr=-
	if [ "$staged" = 1 ]; then
		read -r _ _ _ tp _ _ _ < <(grep "^row $coll $size " "$tmp/st")
		zr=$(awk -v a="$sp" -v b="$tp" 'BEGIN { printf "%.2f", a / b }')
	fi
	printf '%-10s %8s | %10s %7s | %10s %7s | %6s | %10s %6s\n' "$coll" "$size" "$mp" "$mo" \
		"$sp" "$so" "$ratio" "$tp" "$zr"
	rows+=("| $coll | $size | $mp | $mo | $sp | $so | $ratio | $tp | $zr |")
done < <(grep '^row ' "$tmp/plain")
grep -E '^softdpu_mpi_(stats|rcache) rank=0 ' "$tmp/sd" || true

if [ "$record" = 1 ]; then
	machine="$ncpu CPUs ($(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -sr)"
	{
		echo "### mpi_overlap, $mpi, $n ranks ($(date -u '+%Y-%m-%d %H:%M'), $machine)"
		echo
		echo "$binding. Times in microseconds (max over ranks); overlap per the OSU formula;"
		echo "sd/mpi = softdpu's pure communication time over the MPI library's; staged = softdpu"
		echo "with SOFTDPU_MPI_ZCOPY_MIN=0 (every collective through the pool), zc/st = softdpu's"
		echo "pure time (zero copy from 64 KiB) over the staged one."
		echo
		echo "| coll | size | $mpi pure | $mpi overlap % | softdpu pure | softdpu overlap % | sd/mpi | staged pure | zc/st |"
		echo "|---|---|---|---|---|---|---|---|---|"
		printf '%s\n' "${rows[@]}"
	} >"$tmp/table"
	# before the Reliability section (the file's last, whose table other scripts extend)
	awk -v f="$tmp/table" '
		/^## Reliability/ && !done { while ((getline l < f) > 0) print l; print ""; done = 1 }
		{ print }
		END { if (!done) while ((getline l < f) > 0) print l }' "$ROOT/bench/RESULTS.md" \
		>"$tmp/results" && cp "$tmp/results" "$ROOT/bench/RESULTS.md"
fi
