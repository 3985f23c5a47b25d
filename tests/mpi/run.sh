#!/usr/bin/env bash
# libsoftdpu_mpi under a real MPI launcher (docs/mpi.md, docs/testing.md "MPI"): starts a
# softdpu-uromd of this build (private port, run dir and secret), runs the unmodified program
# tests/mpi/mpi_offload_check with N ranks and the library preloaded into the ranks only, and
# checks that it passed and that every offloadable call was offloaded on every rank
# (SOFTDPU_MPI_STATS=1), with the pass-through cases it makes counted as such; the program
# also checks the registration cache through MPI_Pcontrol (SOFTDPU_MPI_ZCOPY_MIN from the
# environment reaches the ranks: the 4-rank tests run every collective zero copy, alltoallv
# included). Then the same
# program with no service answering (a closed loopback port): one message, every call passes
# through, the program still passes.
#   run.sh <openmpi|mpich> <ranks> <build dir> <libsoftdpu_mpi> <mpi_offload_check> [--large N]
# Exit status 0 pass, 1 fail, 77 when that MPI's launcher is missing.
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail
mpi=$1 n=$2
build=$(realpath "$3") lib=$(realpath "$4") prog=$(realpath "$5") || exit 1
shift 5
case $mpi in
openmpi) mpirun=$(command -v mpirun.openmpi) ;;
mpich) mpirun=$(command -v mpirun.mpich) ;;
*) echo "run.sh: unknown MPI $mpi" >&2; exit 2 ;;
esac
[ -n "$mpirun" ] || { echo "SKIP: no launcher for $mpi (Debian: openmpi-bin / mpich)"; exit 77; }
uromd=$build/src/urom/service/softdpu-uromd
worker=$build/src/urom/worker/softdpu-urom-worker
plugin=$build/plugins/worker_coll/worker_coll.so
for f in "$uromd" "$worker" "$plugin" "$lib" "$prog"; do
	[ -e "$f" ] || { echo "run.sh: missing $f" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-mpi-$mpi-$n.XXXXXX") || exit 1
. "$(dirname "$0")/../../scripts/lib-uromd.sh"
cleanup() {
	sdp_uromd_stop
	rm -rf "$tmp"
}
trap cleanup EXIT
export UCX_NET_DEVICES=lo
sdp_uromd_start "$build" "$tmp" "$plugin" || exit 1
port=$sdp_uromd_port

# A sanitizer build's library needs ASan's runtime first in the (uninstrumented) ranks.
preload=$lib
asan=$(ldd "$lib" 2>/dev/null | awk '/libasan\.so/ { print $3; exit }')
[ -z "$asan" ] || preload=$asan:$lib

# launch <service address> <output file> [program args]: the library in the ranks only
launch() {
	local addr=$1 out=$2
	shift 2
	local envs=(SOFTDPU_UROM_SERVICE_ADDR="$addr" SOFTDPU_UROM_SECRET_FILE="$tmp/secret"
		SOFTDPU_UROM_CONNECT_TIMEOUT_MS=3000 SOFTDPU_MPI_STATS=1 UCX_NET_DEVICES=lo
		LD_PRELOAD="$preload")
	# (MPI libraries leak by design at exit: no leak report from ASan there)
	[ -z "$asan" ] || envs+=(ASAN_OPTIONS=detect_leaks=0:abort_on_error=1)
	[ -z "${SDP_TEST_REQUEST_FREE:-}" ] || envs+=(SDP_TEST_REQUEST_FREE=1)
	[ -z "${SDP_TEST_EXPECT_PASSTHROUGH:-}" ] || envs+=(SDP_TEST_EXPECT_PASSTHROUGH=1)
	[ -z "${SOFTDPU_MPI_ZCOPY_MIN:-}" ] || envs+=(SOFTDPU_MPI_ZCOPY_MIN="$SOFTDPU_MPI_ZCOPY_MIN")
	local args=()
	if [ "$mpi" = openmpi ]; then
		# --mca op ^avx: Open MPI 4.1.4's AVX reductions saturate MPI_SUM on 8- and 16-bit
		# unsigned types (255 + 1 = 255), which would make the reference wrong
		args=(--allow-run-as-root --oversubscribe --bind-to none --mca op ^avx -np "$n")
		for e in "${envs[@]}"; do args+=(-x "$e"); done
	else
		args=(-n "$n")
		for e in "${envs[@]}"; do args+=(-genv "${e%%=*}" "${e#*=}"); done
	fi
	timeout 600 "$mpirun" "${args[@]}" "$prog" "$@" >"$out" 2>&1
}

fail=0
SDP_TEST_REQUEST_FREE=1 launch "127.0.0.1:$port" "$tmp/on.out" "$@"
rc=$?
grep -v '^softdpu_mpi_stats ' "$tmp/on.out" | tail -20
if [ "$rc" != 0 ] || ! grep -q '^mpi_offload_check: PASS' "$tmp/on.out"; then
	echo "FAIL: offloaded run (exit $rc); the service's log:"
	tail -20 "$tmp/uromd.log"
	for f in "$tmp"/run/*.log; do [ -e "$f" ] && { echo "== $f"; tail -10 "$f"; }; done
	fail=1
fi
# every call offloaded on every rank; the mixed program's pass-through kinds counted
for call in MPI_Ialltoall MPI_Ialltoallv MPI_Iallgather MPI_Iallreduce MPI_Ibcast MPI_Ireduce \
	MPI_Ibarrier MPI_Ireduce_scatter_block; do
	k=$(grep -cE "^softdpu_mpi_stats rank=[0-9]+ call=$call offloaded=[1-9]" "$tmp/on.out")
	if [ "$k" != "$n" ]; then
		echo "FAIL: $call offloaded on $k of $n ranks"
		fail=1
	fi
done
for why in pass_op pass_dtype; do
	k=$(grep -cE "^softdpu_mpi_stats rank=[0-9]+ call=MPI_Iallreduce .*$why=[1-9]" "$tmp/on.out")
	if [ "$k" != "$n" ]; then
		echo "FAIL: MPI_Iallreduce $why counted on $k of $n ranks"
		fail=1
	fi
done
grep -E '^softdpu_mpi_stats rank=0 ' "$tmp/on.out"
grep -q 'an MPI library bug' "$tmp/on.out" &&
	echo "note: $(grep -c 'an MPI library bug' "$tmp/on.out") answers of the MPI library itself differ from the reference (above)"

# no service: a closed loopback port (bound, never listening)
closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo 1)
SDP_TEST_EXPECT_PASSTHROUGH=1 launch "127.0.0.1:$closed" "$tmp/off.out" "$@"
rc=$?
msgs=$(grep -c 'collectives pass through to the MPI library' "$tmp/off.out")
offl=$(grep -cE '^softdpu_mpi_stats .* offloaded=[1-9]' "$tmp/off.out")
if [ "$rc" != 0 ] || ! grep -q '^mpi_offload_check: PASS' "$tmp/off.out" || [ "$msgs" != 1 ] ||
	[ "$offl" != 0 ]; then
	echo "FAIL: without a service (exit $rc, $msgs pass-through messages, $offl offloading lines)"
	tail -20 "$tmp/off.out"
	fail=1
else
	echo "without a service: $(grep 'collectives pass through' "$tmp/off.out")"
fi
[ "$fail" = 0 ] && echo "PASS: $mpi, $n ranks"
exit "$fail"
