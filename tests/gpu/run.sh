#!/usr/bin/env bash
# Build what a GPU machine needs and run the GPU tests there, in one call (the device tool's
# machine: Ubuntu with CUDA, gcc, meson and ninja, nothing else): the unit suite, the gpu suite
# (per GPU with --all-gpus), the GPUNetIO samples on loop and gen devices, the GPU packet
# processing application against ping/curl/UDP peers, and the GPU benchmarks
# (bench/gpunetio.sh, when present), then checks that no process holds a GPU and that each
# card's used memory is back where it started. Writes its logs to $OUT (or ./build-gpu-logs) so they come
# back, and ends with the count line "N passed, N failed, N skipped". Exit status: nonzero if
# anything failed.
#   bash tests/gpu/run.sh [--all-gpus] [--no-bench] [--cli <softdpu>]
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

out=${OUT:-$PWD/build-gpu-logs}
mkdir -p "$out"
builddir=build-gpu-run

all_gpus=0
bench=1
cli=
while [ $# -gt 0 ]; do
	case $1 in
	--all-gpus) all_gpus=1 ;;
	--no-bench) bench=0 ;;
	--cli) cli=${2:-}; shift ;;
	*) echo "usage: bash tests/gpu/run.sh [--all-gpus] [--no-bench] [--cli <softdpu>]" >&2; exit 2 ;;
	esac
	shift
done
passed=0
failed=0
skipped=0
# Add the Ok/Fail/Timeout/Skipped lines of a meson test log to the counts.
count_log() {
	local ok fail to skip
	ok=$(awk '/^Ok:/ {print $2}' "$1")
	fail=$(awk '/^Fail:/ {print $2}' "$1")
	to=$(awk '/^Timeout:/ {print $2}' "$1")
	skip=$(awk '/^Skipped:/ {print $2}' "$1")
	passed=$((passed + ${ok:-0}))
	failed=$((failed + ${fail:-0} + ${to:-0}))
	skipped=$((skipped + ${skip:-0}))
	# a log without a summary (meson itself failed) is one failure
	[ -z "$ok$fail$to$skip" ] && failed=$((failed + 1))
}
# One step outside meson: PASS/SKIP (exit 77)/FAIL line, counted.
step() {
	local name=$1 log=$2 rc
	shift 2
	"$@" >"$log" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "PASS $name"
		passed=$((passed + 1))
	elif [ "$rc" = 77 ]; then
		echo "SKIP $name ($(tail -1 "$log"))"
		skipped=$((skipped + 1))
	else
		echo "FAIL $name (log: $log)"
		tail -5 "$log"
		failed=$((failed + 1))
		status=1
	fi
}

# nvcc: PATH, then $CUDA_HOME/bin, then /usr/local/cuda/bin (meson takes it from PATH only).
. scripts/find-nvcc.sh
sdp_nvcc_on_path
MESON=${MESON:-meson}
command -v "$MESON" >/dev/null 2>&1 || MESON="python3 -m mesonbuild.mesonmain"

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -n) $(uname -r)"
	echo "gcc: $(gcc --version | head -1)"
	echo "nvcc: $(nvcc --version | tail -1)"
	command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,memory.used --format=csv
} | tee "$out/gpu-env.txt"
# What each GPU holds before anything runs (compared at the end: nothing may be left behind).
command -v nvidia-smi >/dev/null &&
	nvidia-smi --query-gpu=index,memory.used --format=csv,noheader >"$out/gpu-mem-before.txt"

rm -rf "$builddir"
if ! $MESON setup "$builddir" -Dgpu_only=true -Dwerror=true >"$out/gpu-setup.log" 2>&1; then
	tail -30 "$out/gpu-setup.log"
	exit 1
fi
if ! ninja -C "$builddir" >"$out/gpu-build.log" 2>&1; then
	tail -40 "$out/gpu-build.log"
	exit 1
fi

status=0
# The CPU unit tests also run here (a second compiler and OS), then the GPU suite.
$MESON test -C "$builddir" --no-rebuild --print-errorlogs --suite unit >"$out/gpu-unit.log" 2>&1 || status=1
tail -8 "$out/gpu-unit.log"
count_log "$out/gpu-unit.log"

gpus=1
if [ "$all_gpus" = 1 ] && command -v nvidia-smi >/dev/null; then
	gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
fi
for ((g = 0; g < gpus; g++)); do
	echo "== GPU suite on CUDA device $g"
	CUDA_VISIBLE_DEVICES=$g $MESON test -C "$builddir" --no-rebuild --print-errorlogs \
		--suite gpu --logbase "gpu-$g" >"$out/gpu-suite-$g.log" 2>&1 || status=1
	grep -E '^ *[0-9]+/[0-9]+ |^(Ok|Fail|Skipped|Timeout):' "$out/gpu-suite-$g.log"
	cp "$builddir/meson-logs/gpu-$g.txt" "$out/" 2>/dev/null
	count_log "$out/gpu-suite-$g.log"
done

# The GPUNetIO ladder and rollback through the softdpu CLI (docs/ladders.md, docs/gpunetio.md):
# green on the GPU data path (not the CPU stand-in). gpu_only builds leave the CLI out (it needs
# json-c, UCX and libsodium); --cli names one built elsewhere with CUDA.
[ -n "$cli" ] || cli=$builddir/tools/softdpu
prov="$PWD/$builddir/src/providers"
# shellcheck disable=SC2317 # called through step
cli_gpu() {
	local what=$1 json=$2
	shift 2
	env SOFTDPU_DEVICE_CONFIG= SOFTDPU_PROVIDER_PATH="$prov/host:$prov/loop:$prov/gen" \
		timeout 120 "$cli" "$@" --json >"$json" || return 1
	grep -q '"data_path":"gpu"' "$json" || { echo "$what: not on the GPU data path"; return 1; }
}
if [ -x "$cli" ]; then
	echo "== softdpu ladder / rollback gpunetio ($cli)"
	step cli:ladder:gpunetio "$out/cli-ladder-gpunetio.log" \
		cli_gpu ladder "$out/ladder-gpunetio.json" ladder gpunetio
	step cli:rollback:gpunetio "$out/cli-rollback-gpunetio.log" \
		cli_gpu rollback "$out/rollback-gpunetio.json" rollback gpunetio --deadline-ms 2000
else
	echo "SKIP cli:ladder:gpunetio cli:rollback:gpunetio (no softdpu CLI: gpu_only builds" \
		"leave it out; --cli names one)"
	skipped=$((skipped + 2))
fi

# The GPUNetIO samples (samples/gpunetio_*/README.md), each on devices of its own process.
samples=$builddir/samples
if [ -x "$samples/gpunetio_simple_receive/doca_gpunetio_simple_receive" ]; then
	echo "== GPUNetIO samples"
	wire='loop:name=gw0,peer=gw1;loop:name=gw1,peer=gw0'
	step sample:simple_receive:gen "$out/sample-simple-receive-gen.log" \
		env SOFTDPU_DEVICE_CONFIG= SOFTDPU_DEVICES='gen:name=gen0,size=1024' timeout 60 \
		"$samples/gpunetio_simple_receive/doca_gpunetio_simple_receive" -d gen0 --duration 3
	grep -E '^received' "$out/sample-simple-receive-gen.log"
	step sample:simple_receive:loop "$out/sample-simple-receive-loop.log" \
		env SOFTDPU_DEVICE_CONFIG= SOFTDPU_DEVICES="$wire" timeout 60 \
		"$samples/gpunetio_simple_receive/doca_gpunetio_simple_receive" -d gw1 --peer gw0 \
		--duration 2 -e 1
	step sample:simple_send:loop "$out/sample-simple-send-loop.log" \
		env SOFTDPU_DEVICE_CONFIG= SOFTDPU_DEVICES="$wire" timeout 60 \
		"$samples/gpunetio_simple_send/doca_gpunetio_simple_send" -d gw0 --peer gw1 --duration 2
	step sample:simple_send:loop:shared "$out/sample-simple-send-loop-q.log" \
		env SOFTDPU_DEVICE_CONFIG= SOFTDPU_DEVICES="$wire" timeout 60 \
		"$samples/gpunetio_simple_send/doca_gpunetio_simple_send" -d gw0 --peer gw1 -q -e 2 \
		--duration 2
	step sample:send_wait_time:loop "$out/sample-send-wait-time-loop.log" \
		env SOFTDPU_DEVICE_CONFIG= SOFTDPU_DEVICES="$wire" timeout 60 \
		"$samples/gpunetio_send_wait_time/doca_gpunetio_send_wait_time" -d gw0 --peer gw1
	# simple_send -> simple_receive over a veth pair between namespaces (afpacket)
	step sample:send-to-receive:afpacket "$out/sample-afpacket.log" \
		bash tests/gpu/samples_afpacket.sh "$builddir"
	grep -E '^received' "$out/sample-afpacket.log"
fi
# The GPU packet processing application in its GPU mode against real peers (ping, curl, a UDP
# sender) over a veth pair (afpacket; gpu_only builds have no afxdp): ip, ping, curl and
# ethtool come from scripts/gpu-carry-ip's .iproute on PATH.
gpp=$samples/gpu_packet_processing/gpu_packet_processing
if [ -x "$gpp" ]; then
	echo "== gpu_packet_processing (GPU mode)"
	step sample:gpu_packet_processing:afpacket "$out/gpp-gpu-afpacket.log" \
		timeout 200 bash tests/integration/test_gpp_cpu.sh --gpu "$gpp" \
		"$PWD/$builddir/src/providers/afpacket"
	grep -E '^(PASS|FAIL|SKIP|gpp totals)' "$out/gpp-gpu-afpacket.log"
fi

# The GPU benchmarks, when their script exists (bench/README.md).
if [ "$bench" = 1 ] && [ -f bench/gpunetio.sh ]; then
	echo "== GPU benchmarks"
	step bench:gpunetio "$out/gpu-bench.log" bash bench/gpunetio.sh --build "$builddir"
	tail -30 "$out/gpu-bench.log"
fi
# Afterwards no process holds a GPU and each card's memory is back where it started (the
# driver may take a moment to reclaim an exited process's memory: 10 s at most).
# shellcheck disable=SC2317 # called through step
gpu_released() {
	local i
	for ((i = 0; i < 20; i++)); do
		nvidia-smi --query-gpu=index,memory.used --format=csv,noheader >"$out/gpu-mem-after.txt"
		if [ -z "$(nvidia-smi --query-compute-apps=pid --format=csv,noheader)" ] &&
			cmp -s "$out/gpu-mem-before.txt" "$out/gpu-mem-after.txt"; then
			cat "$out/gpu-mem-after.txt"
			return 0
		fi
		sleep 0.5
	done
	echo "before:"; cat "$out/gpu-mem-before.txt"
	echo "after:"; cat "$out/gpu-mem-after.txt"
	nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
	return 1
}
if command -v nvidia-smi >/dev/null; then
	step gpu:released "$out/gpu-released.log" gpu_released
	cat "$out/gpu-released.log"
fi
[ "$failed" -gt 0 ] && status=1
echo "$passed passed, $failed failed, $skipped skipped" | tee "$out/gpu-count.txt"
exit $status
