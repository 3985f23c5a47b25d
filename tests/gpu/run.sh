#!/usr/bin/env bash
# Build what a GPU machine needs and run the GPU tests there, in one call (the device tool's
# machine: Ubuntu with CUDA, gcc, meson and ninja, nothing else). Writes its logs to $OUT (or
# ./build-gpu-logs) so they come back. Exit status: nonzero if any test failed.
#   bash tests/gpu/run.sh [--all-gpus]
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail
cd "$(dirname "$0")/../.."

out=${OUT:-$PWD/build-gpu-logs}
mkdir -p "$out"
builddir=build-gpu-run

all_gpus=0
[ "${1:-}" = "--all-gpus" ] && all_gpus=1

MESON=${MESON:-meson}
command -v "$MESON" >/dev/null 2>&1 || MESON="python3 -m mesonbuild.mesonmain"

{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -n) $(uname -r)"
	echo "gcc: $(gcc --version | head -1)"
	echo "nvcc: $(/usr/local/cuda/bin/nvcc --version | tail -1)"
	command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total,memory.used --format=csv
} | tee "$out/gpu-env.txt"

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

gpus=1
if [ "$all_gpus" = 1 ] && command -v nvidia-smi >/dev/null; then
	gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
fi
for ((g = 0; g < gpus; g++)); do
	echo "== GPU suite on CUDA device $g"
	CUDA_VISIBLE_DEVICES=$g $MESON test -C "$builddir" --no-rebuild --print-errorlogs \
		--suite gpu --logbase "gpu-$g" >"$out/gpu-suite-$g.log" 2>&1 || status=1
	grep -E '^[0-9]+/[0-9]+ |^(Ok|Fail|Skipped):' "$out/gpu-suite-$g.log"
	cp "$builddir/meson-logs/gpu-$g.txt" "$out/" 2>/dev/null
done
command -v nvidia-smi >/dev/null &&
	nvidia-smi --query-gpu=index,memory.used --format=csv | tee "$out/gpu-after.txt"
exit $status
