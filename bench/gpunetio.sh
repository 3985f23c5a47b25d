#!/usr/bin/env bash
# bench/gpunetio.sh: libdoca_eth's GPU data path (issue 5) with gen devices, each figure next to
# its peers measured in the same invocation (bench/README.md, "gpunetio"):
#
#   bash bench/gpunetio.sh [--build DIR] [--record | --profile] [-t secs] [-w warmup] [-B batch]
#
#   gpunetio_rx  RX at 64, 512, 1024, 1514, 8192 B with 1, 2, 4, 8 gen devices (engine threads),
#                packet buffer in device memory, and in mapped host memory at 64 and 1514 B;
#                peers: bare mapped ring fed by as many CPU threads (frames built like gen's,
#                and copied from a template), the PCIe H2D copy ceiling, the engine's copy
#                pattern alone, kernel-per-batch (B frames, default 256); latency p50/p99,
#                and latency at 1 Mpps offered (paced gen) next to kernel-per-batch at B 256/32
#   gpunetio_tx  TX at the same sizes with 1 and 4 gen devices from device memory (mapped host
#                memory at 64 and 1514 B); peers: the PCIe D2H ceiling, one copy per frame,
#                one copy per 64 neighbouring frames
#   gpunetio_multi every GPU alone, then all together (64 and 1514 B, 2 queues per GPU):
#                per-GPU and aggregate RX, scaling = together / sum of alone
#
# Each figure is counted over secs seconds (default 1) after a warm-up (0.3 s); about 2.5 min
# in all on the H200 machine. Prints the programs' key=value lines, then markdown tables with
# the ratios and the goals. --record inserts the tables into bench/RESULTS.md (above the
# "gpunetio rows" marker). --profile runs with SOFTDPU_ETH_PROFILE=1 and info logging: each engine
# and GPU receive queue logs where its time went (docs/environment.md); its figures include the
# clock reads, so it does not record. Exit 77 without an NVIDIA GPU, 1 when a program fails a check.
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
build=build
record=0
secs=1
warm=0.3
batch=256
profile=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--record) record=1; shift ;;
	--profile) profile=1; shift ;;
	-t) secs=$2; shift 2 ;;
	-w) warm=$2; shift 2 ;;
	-B) batch=$2; shift 2 ;;
	*) echo "usage: $0 [--build DIR] [--record | --profile] [-t secs] [-w warmup] [-B batch]" >&2; exit 2 ;;
	esac
done
if [ $profile = 1 ]; then
	[ $record = 0 ] || { echo "gpunetio.sh: a --profile run is not recorded" >&2; exit 2; }
	export SOFTDPU_ETH_PROFILE=1 DOCA_LOG_LEVEL=info
fi
case $build in /*) ;; *) build=$ROOT/$build ;; esac
rx=$build/bench/gpunetio_rx
tx=$build/bench/gpunetio_tx
multi=$build/bench/gpunetio_multi
for f in "$rx" "$tx" "$multi"; do
	if [ ! -x "$f" ]; then
		echo "gpunetio.sh: missing $f (a CUDA build: ninja -C $build)" >&2
		exit 2
	fi
done
if [ ! -e /dev/nvidiactl ]; then
	echo "SKIP: no NVIDIA driver (/dev/nvidiactl is missing)"
	exit 77
fi
export SOFTDPU_PROVIDER_PATH=$build/src/providers/gen
export SOFTDPU_DEVICE_CONFIG=

tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-gpunetio.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

failed=0
echo "== gpunetio_rx -t $secs -w $warm -B $batch"
"$rx" -t "$secs" -w "$warm" -B "$batch" | tee "$tmp/rx.out"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
echo "== gpunetio_tx -t $secs -w $warm"
"$tx" -t "$secs" -w "$warm" | tee "$tmp/tx.out"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
echo "== gpunetio_multi -t $secs -w $warm"
"$multi" -t "$secs" -w "$warm" | tee "$tmp/multi.out"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
machine="${gpu:-GPU}, $(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), $(uname -r)"
date=$(date -u '+%Y-%m-%d %H:%M')

awk -v date="$date" -v machine="$machine" -v batch="$batch" '
function kv(line, key,    n, i, a, b) {
	n = split(line, a, " ")
	for (i = 1; i <= n; i++) {
		split(a[i], b, "=")
		if (b[1] == key)
			return b[2]
	}
	return ""
}
function r(a, b) { return (b > 0) ? sprintf("%.2f", a / b) : "-" }
FILENAME ~ /rx.out$/ && /^case=pcie/ { pcie = kv($0, "h2d_gbs") }
FILENAME ~ /rx.out$/ && /^case=config/ { overflow = kv($0, "overflow") }
FILENAME ~ /rx.out$/ && /^clock / { clk = sprintf("offset error <= %s ns, globaltimer tick %s ns", kv($0, "err_ns"), kv($0, "globaltimer_tick_ns")) }
FILENAME ~ /rx.out$/ && /^clock_end/ { drift = kv($0, "drift_ns") }
FILENAME ~ /rx.out$/ && /^case=burst_copy/ { bcp[kv($0, "size")] = kv($0, "mpps") }
FILENAME ~ /rx.out$/ && /^case=(softdpu|bare_gen|bare_copy|kpb) / {
	k = kv($0, "case") SUBSEP kv($0, "size") SUBSEP kv($0, "threads") SUBSEP kv($0, "mem")
	mpps[k] = kv($0, "mpps"); gbps[k] = kv($0, "gbps"); p50[k] = kv($0, "p50_us"); p99[k] = kv($0, "p99_us")
	ow[k] = kv($0, "overwrites"); pub[k] = kv($0, "published"); port[k] = kv($0, "port_rx"); cores[k] = kv($0, "cpu_cores"); secs[k] = kv($0, "secs")
	bad[k] = kv($0, "bad") + kv($0, "ooo")
	sz[kv($0, "size")] = 1; th[kv($0, "threads")] = 1
}
FILENAME ~ /rx.out$/ && /^lat / {
	lrate = kv($0, "rate")
	lrow[++nl] = kv($0, "case") (kv($0, "batch") > 0 ? ", B = " kv($0, "batch") : "")
	lp50[nl] = kv($0, "p50_us"); lp99[nl] = kv($0, "p99_us"); lmpps[nl] = kv($0, "mpps")
	if (kv($0, "case") == "lat_softdpu") lsdp = nl
	if (kv($0, "bad") + kv($0, "ooo") > 0) damaged = 1
}
FILENAME ~ /tx.out$/ && /^case=pcie/ { d2h = kv($0, "d2h_gbs") }
FILENAME ~ /multi.out$/ && /^case=multi_(alone|all) / {
	k = kv($0, "size") SUBSEP kv($0, "gpu")
	if (kv($0, "case") == "multi_alone") { malone[k] = kv($0, "mpps"); mbus[kv($0, "gpu")] = kv($0, "bus") }
	else { mall[k] = kv($0, "mpps"); mallg[k] = kv($0, "gbps") }
	mq = kv($0, "queues")
	if (kv($0, "bad") + kv($0, "ooo") > 0) damaged = 1
}
FILENAME ~ /multi.out$/ && /^case=multi_total / {
	msz[++nm] = kv($0, "size"); mgpus = kv($0, "gpus")
	mtot[nm] = kv($0, "mpps"); mtotg[nm] = kv($0, "gbps"); mscal[nm] = kv($0, "scaling")
}
FILENAME ~ /tx.out$/ && /^case=frame_copy/ { fcp[kv($0, "size")] = kv($0, "mpps"); fsp[kv($0, "size")] = kv($0, "span64_mpps") }
FILENAME ~ /tx.out$/ && /^case=softdpu_tx/ {
	t = kv($0, "size") " B, " kv($0, "threads") " thr, " kv($0, "mem")
	txrows[++ntx] = sprintf("| %s | %s | %s | %.3f | %s | %s | %s | %s |", t, kv($0, "mpps"), kv($0, "gbps"),
		d2h * 1e9 / kv($0, "size") / 1e6, r(kv($0, "mpps"), d2h * 1e9 / kv($0, "size") / 1e6),
		fcp[kv($0, "size")], fsp[kv($0, "size")], kv($0, "cpu_cores"))
}
END {
	printf "\n### gpunetio_rx %s UTC, %s; window from the run, B = %d, softdpu queues %s\n\n", date, machine, batch, (overflow == "cyclic" ? "CYCLIC (overrun)" : "flow-controlled (BACKPRESSURE) like the bare ring")
	printf "PCIe H2D ceiling %s GB/s; clock: %s, drift over the run %s ns\n\n", pcie, clk, drift
	print "| size | thr | softdpu dev mem Mpps / Gbit/s | overwrites | engine took Mpps | host mem Mpps | bare-gen Mpps | bare-copy Mpps | /bare-gen | /bare-copy | PCIe ceil Mpps | /PCIe | burst-copy Mpps | p50/p99 us | kpb Mpps | kpb p50/p99 us | kpb p50 / softdpu p50 | CPU cores |"
	print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	ns = split("64 512 1024 1514 8192", S, " ")
	nt = split("1 2 4 8", T, " ")
	for (i = 1; i <= ns; i++) for (j = 1; j <= nt; j++) {
		s = S[i]; t = T[j]
		k = "softdpu" SUBSEP s SUBSEP t SUBSEP "gpu"
		if (!(k in mpps)) continue
		h = "softdpu" SUBSEP s SUBSEP t SUBSEP "host"
		bg = "bare_gen" SUBSEP s SUBSEP t SUBSEP "host"
		bc = "bare_copy" SUBSEP s SUBSEP t SUBSEP "host"
		kp = "kpb" SUBSEP s SUBSEP 1 SUBSEP "gpu"
		ceil = pcie * 1e9 / s / 1e6
		best = mpps[k]; if ((h in mpps) && mpps[h] > best) best = mpps[h]
		printf "| %s | %s | %s / %s | %s | %.3f | %s | %s | %s | %s | %s | %.2f | %s | %s | %s / %s | %s | %s / %s | %s | %s |\n",
			s, t, mpps[k], gbps[k], ow[k], (secs[k] > 0) ? port[k] / secs[k] / 1e6 : 0, (h in mpps) ? mpps[h] : "-",
			mpps[bg], mpps[bc], r(best, mpps[bg]), r(best, mpps[bc]), ceil, r(mpps[k], ceil),
			bcp[s], p50[k], p99[k], mpps[kp], p50[kp], p99[kp], r(p50[kp], p50[k]), cores[k]
		if (bad[k] + bad[h] + bad[bg] + bad[bc] + bad[kp] > 0) damaged = 1
	}
	if (nl > 0) {
		printf "\n### gpunetio_rx latency %s UTC, 64 B offered at %s pps (generator stamp to kernel observation)\n\n", date, lrate
		print "| receiver | Mpps seen | p50 us | p99 us | p50 / softdpu p50 |"
		print "|---|---|---|---|---|"
		for (i = 1; i <= nl; i++)
			printf "| %s | %s | %s | %s | %s |\n", lrow[i], lmpps[i], lp50[i], lp99[i], r(lp50[i], lp50[lsdp])
	}
	printf "\n### gpunetio_tx %s UTC, %s\n\nPCIe D2H ceiling %s GB/s\n\n", date, machine, d2h
	print "| case | softdpu Mpps | Gbit/s | PCIe ceil Mpps | /PCIe | per-frame copy Mpps | 64-frame copy Mpps | CPU cores |"
	print "|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= ntx; i++) print txrows[i]
	if (nm > 0) {
		printf "\n### gpunetio_rx per GPU %s UTC, %s GPU(s), %s gen devices (engine threads) and queues per GPU\n\n", date, mgpus, mq
		print "| size | GPU | alone Mpps | together Mpps / Gbit/s | all GPUs together Mpps / Gbit/s | together / sum of alone |"
		print "|---|---|---|---|---|---|"
		for (i = 1; i <= nm; i++) for (g = 0; g < mgpus; g++) {
			k = msz[i] SUBSEP g
			printf "| %s | %d (%s) | %s | %s / %s | %s | %s |\n", msz[i], g, mbus[g], malone[k], mall[k], mallg[k],
				(g == 0) ? mtot[i] " / " mtotg[i] : "", (g == 0) ? mscal[i] : ""
		}
	}
	if (damaged) print "\nDAMAGED: a kernel saw a wrong magic or an out-of-order sequence"
	exit damaged
}' "$tmp/rx.out" "$tmp/tx.out" "$tmp/multi.out" | tee "$tmp/tables.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1

if [ "$record" = 1 ]; then
	awk -v f="$tmp/tables.md" '/<!-- gpunetio rows/ {while ((getline l < f) > 0) print l; print ""} {print}' \
		bench/RESULTS.md >"$tmp/RESULTS.md" && cp "$tmp/RESULTS.md" bench/RESULTS.md &&
		echo "recorded in bench/RESULTS.md"
fi
exit "$failed"
