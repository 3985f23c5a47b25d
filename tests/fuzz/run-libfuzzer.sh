#!/usr/bin/env bash
# libFuzzer runs of softdpu's fuzz targets (tests/fuzz/, issue 15): a short run of every target in
# CI (scripts/run-tests, step "fuzz"), and the long runs recorded in bench/RESULTS.md.
#
#   bash tests/fuzz/run-libfuzzer.sh [--seconds S] [--jobs N] [--build DIR] [--no-build]
#                                    [--record] [TARGET...]
#
# Configures and builds DIR (default build-fuzz in the repository) with clang, ASan + UBSan and
# -fsanitize=fuzzer-no-link (coverage inside the libraries the targets link too), then runs each
# target named (default: all) for S seconds (default 15), one at a time, on its committed corpus
# (tests/fuzz/corpus/<target>/, only read) with new inputs written to a scratch directory that is
# removed afterwards. One line per target:
#   PASS fuzz:<target>: N executions in S s (R/s), P coverage points, 0 crashes
#   FAIL fuzz:<target>: <the sanitizer's or libFuzzer's first error line>; reproducer <file>
# A crash's reproducer is kept under DIR/fuzz-artifacts/ (it replays with the libFuzzer binary or
# any build's <target>_replay). --record appends each PASS/FAIL as a row of the "Reliability"
# table in bench/RESULTS.md (date, machine, target, figures). The last line is
# "N passed, N failed". Exit status: 0 when every run passed, 1 when one failed, 77 when clang or
# its libFuzzer runtime is missing (nothing was run).
# --jobs N runs N instances of each target at once (each its own scratch directory, all on the
# committed corpus; the executions are summed, a crash in any fails the target): the long runs
# on a machine with many cores. --no-build runs DIR's binaries as they are, without clang (a
# tree built here and carried to a machine that has no compiler: scripts/fuzz-carry).
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
ROOT=$(pwd)
seconds=15
build=$ROOT/build-fuzz
record=0
jobs=1
nobuild=0
targets=()
all_targets=(fuzz_urom_proto fuzz_urom_frame fuzz_urom_oob fuzz_urom_memh fuzz_urom_rdmo
	fuzz_urom_rma_am fuzz_urom_coll_wire fuzz_dev_decl fuzz_service_file fuzz_argp_json
	fuzz_flow_classify fuzz_plugin_cmd fuzz_small_parsers fuzz_host_notif fuzz_urom_handshake
	fuzz_pcap_rx fuzz_flow_rules fuzz_uromd_conn fuzz_gpp_proto fuzz_urom_xrma)

usage() {
	echo "usage: bash tests/fuzz/run-libfuzzer.sh [--seconds S] [--jobs N] [--build DIR] [--no-build] [--record] [TARGET...]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds)
		[ $# -ge 2 ] || usage
		case "$2" in '' | *[!0-9]*) usage ;; esac
		[ "$2" -ge 1 ] || usage
		seconds=$2
		shift 2
		;;
	--build)
		[ $# -ge 2 ] && [ -n "$2" ] || usage
		case "$2" in /*) build=$2 ;; *) build=$ROOT/$2 ;; esac
		shift 2
		;;
	--jobs)
		[ $# -ge 2 ] || usage
		case "$2" in '' | *[!0-9]*) usage ;; esac
		[ "$2" -ge 1 ] && [ "$2" -le 256 ] || usage
		jobs=$2
		shift 2
		;;
	--no-build)
		nobuild=1
		shift
		;;
	--record)
		record=1
		shift
		;;
	-h | --help)
		sed -n '2,/^# SPDX/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	-*) usage ;;
	*)
		case " ${all_targets[*]} " in
		*" $1 "*) targets+=("$1") ;;
		*)
			echo "run-libfuzzer: unknown target $1 (known: ${all_targets[*]})" >&2
			exit 2
			;;
		esac
		shift
		;;
	esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

log=$build-logs
mkdir -p "$log"
if [ "$nobuild" = 0 ]; then
	if ! command -v clang >/dev/null 2>&1; then
		echo "SKIP fuzz: clang is not installed (Debian: clang, libclang-rt-14-dev)"
		exit 77
	fi
	probe=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-fuzz-probe.XXXXXX") || exit 1
	printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe/p.c"
	if ! clang -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
		rm -rf "$probe"
		echo "SKIP fuzz: clang cannot link -fsanitize=fuzzer,address,undefined (Debian: libclang-rt-14-dev)"
		exit 77
	fi
	rm -rf "$probe"

	# -fno-sanitize=null,object-size: UCX's ucs_offsetof() (in ucs_container_of and every ucs_list walk)
	# takes a member's address through a null pointer, which clang's UBSan reports on every empty
	# list (at -O2 through the object-size check); a real null dereference still faults and ASan
	# reports it, and ASan sees out-of-bounds accesses.
	opts=(-Dcuda=disabled -Db_sanitize=address,undefined -Db_lundef=false
		"-Dc_args=-fsanitize=fuzzer-no-link -fno-sanitize=null,object-size" -Dwerror=false)
	# meson --reconfigure does not replace c_args: a tree configured with other options is wiped
	# (the options are kept in a stamp file of ours inside the tree).
	stamp=$build/.sdp-fuzz-options
	if [ -f "$build/meson-private/coredata.dat" ] && [ "$(cat "$stamp" 2>/dev/null)" != "${opts[*]}" ]; then
		CC=clang meson setup --wipe "$build" "${opts[@]}" >"$log/configure.log" 2>&1
	elif [ -f "$build/meson-private/coredata.dat" ]; then
		CC=clang meson setup --reconfigure "$build" "${opts[@]}" >"$log/configure.log" 2>&1 ||
			CC=clang meson setup --wipe "$build" "${opts[@]}" >"$log/configure.log" 2>&1
	elif [ -e "$build" ] && [ -n "$(ls -A "$build" 2>/dev/null)" ]; then
		echo "FAIL fuzz:configure: $build exists and is not a meson build tree (left as it is)" |
			tee "$log/configure.log"
		false
	else
		CC=clang meson setup "$build" "${opts[@]}" >"$log/configure.log" 2>&1
	fi || {
		echo "FAIL fuzz:configure (log: $log/configure.log)"
		tail -n 20 "$log/configure.log" | sed 's/^/    /'
		echo "0 passed, 1 failed"
		exit 1
	}
fi
# fuzz_flow_classify opens a device of the host provider (a module loaded at run time).
# fuzz_plugin_cmd dlopen()s every plugin's worker half (SDP_FUZZ_PLUGINS).
plugin_sos=()
for p in graph sandbox rdmo rma coll; do
	plugin_sos+=("plugins/worker_$p/worker_$p.so")
done
ninja_targets=(src/providers/host/sdp_provider_host.so src/providers/pcap/sdp_provider_pcap.so
	"${plugin_sos[@]}")
fuzz_plugins=$(printf "$build/%s:" "${plugin_sos[@]}")
fuzz_plugins=${fuzz_plugins%:}
[ "$nobuild" = 1 ] || printf '%s\n' "${opts[*]}" >"$stamp"
for t in "${targets[@]}"; do
	ninja_targets+=("tests/fuzz/$t")
done
if [ "$nobuild" = 1 ]; then
	: # carried binaries, run as they are
elif ! ninja -C "$build" "${ninja_targets[@]}" >"$log/build.log" 2>&1; then
	echo "FAIL fuzz:build (log: $log/build.log)"
	sed -n '/^FAILED: /,$p' "$log/build.log" | head -n 20 | sed 's/^/    /'
	echo "0 passed, 1 failed"
	exit 1
fi

machine() {
	local cpu
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	printf '%s CPUs (%s), %s, load %s, clang %s, libFuzzer + ASan + UBSan' "$(nproc)" \
		"${cpu:-unknown CPU}" "$(uname -sr)" "$(cut -d' ' -f1 /proc/loadavg)" \
		"$(clang -dumpversion 2>/dev/null || echo '(carried build)')"
}
# record_row <target> <result text>
record_row() {
	local f=$ROOT/bench/RESULTS.md row
	row="| $(date -u '+%Y-%m-%d %H:%M') | $(machine) | libFuzzer \`tests/fuzz/$1\`, \`bash tests/fuzz/run-libfuzzer.sh --seconds $seconds$([ "$jobs" = 1 ] || echo " --jobs $jobs")\` (committed corpus, scratch output) | $2 |"
	# After the last row of the Reliability table (the first table row after its heading).
	awk -v row="$row" '
		/^## Reliability/ { inrel = 1 }
		inrel && /^\|/ { last = NR }
		{ lines[NR] = $0 }
		END {
			for (i = 1; i <= NR; i++) {
				print lines[i]
				if (i == last) print row
			}
			if (!last) print row
		}' "$f" >"$f.tmp.$$" && mv "$f.tmp.$$" "$f"
}

npass=0
nfail=0
art=$build/fuzz-artifacts
mkdir -p "$art"
# run_one <target> <instance>: one libFuzzer process, its log $log/<target>[.<instance>].log
run_one() {
	local t=$1 i=$2 scratch leaks prov out=$log/$1.log
	[ "$jobs" = 1 ] || out=$log/$1.$2.log
	scratch=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-fuzz-$t.XXXXXX") || return 1
	# fuzz_plugin_cmd runs UCX's threads, under which LeakSanitizer's stop-the-world faults
	# ("Tracer caught signal 11"); its leaks are checked by the ASan build's replay instead.
	leaks=1
	[ "$t" != fuzz_plugin_cmd ] || leaks=0
	# The providers the flow classifier's pipeline needs; the rest ignore it.
	# The plugins fuzz_plugin_cmd opens, quiet logs (refusals are logged once each, by design).
	prov=$build/src/providers/host
	[ "$t" != fuzz_pcap_rx ] || prov=$build/src/providers/pcap
	env SOFTDPU_PROVIDER_PATH="$prov" SDP_FUZZ_PLUGINS="$fuzz_plugins" \
		UCX_NET_DEVICES=lo DOCA_LOG_LEVEL=crit \
		ASAN_OPTIONS=detect_leaks=$leaks:abort_on_error=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		"$build/tests/fuzz/$t" -max_total_time="$seconds" -print_final_stats=1 \
		-artifact_prefix="$art/$t-$i-" -timeout=25 -detect_leaks="$leaks" -seed=$((i + 1)) \
		"$scratch" "$ROOT/tests/fuzz/corpus/$t" \
		>"$out" 2>&1
	local rc=$?
	rm -rf "$scratch"
	return $rc
}

for t in "${targets[@]}"; do
	start=$(date +%s)
	rm -f "$log/$t".[0-9]*.log
	pids=()
	for ((i = 0; i < jobs; i++)); do
		run_one "$t" "$i" &
		pids+=($!)
	done
	rc=0
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	out=$log/$t.log
	[ "$jobs" = 1 ] || cat "$log/$t".[0-9]*.log >"$out"
	took=$(($(date +%s) - start))
	# the executions of every instance, summed (each prints its own final stats)
	execs=$(awk -v jobs="$jobs" '/^stat::number_of_executed_units:/ { n += $NF; k++ }
		END { if (k == jobs) print n }' "$out")
	cov=$(grep -oE 'cov: [0-9]+' "$out" | tail -1 | cut -d' ' -f2)
	if [ "$rc" -eq 0 ] && [ -n "$execs" ]; then
		[ "$took" -ge 1 ] || took=1
		msg="$execs executions in $took s ($((execs / took))/s), ${cov:-?} coverage points, 0 crashes"
		[ "$jobs" = 1 ] || msg="$msg ($jobs processes)"
		echo "PASS fuzz:$t: $msg"
		npass=$((npass + 1))
		[ "$record" = 0 ] || record_row "$t" "$msg"
	else
		first=$(grep -m1 -E 'ERROR: |runtime error: |==ERROR|deadly signal|Timeout|out-of-memory' "$out")
		repro=$(ls -t "$art/$t-"* 2>/dev/null | head -1)
		echo "FAIL fuzz:$t: ${first:-exit status $rc}; reproducer ${repro:-none} (log: $out)"
		tail -n 15 "$out" | sed 's/^/    /'
		nfail=$((nfail + 1))
		[ "$record" = 0 ] || record_row "$t" "**FAIL**: ${first:-exit status $rc}; reproducer \`${repro:-none}\`"
	fi
done
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
