#!/usr/bin/env bash
# The soak (issue 15; docs/testing.md, "The soak"): tests/soak/soak.c from a build tree, with
# the environment it needs, for a given duration; the verdict is the program's.
#
#   bash tests/soak/run.sh [--build DIR] [--minutes N | --seconds S] [--csv FILE] [--record]
#
#   --build DIR   the build tree (default: build-ci, else build, under the repository)
#   --minutes N   how long the load runs (default 5; decimals allowed); --seconds S the same
#   --csv FILE    every sample as a CSV row (totals and rates per kind, RSS kB and fds per
#                 process)
#   --record      append a row to bench/RESULTS.md, "Reliability" (date, machine, duration,
#                 operations per kind, rate ratios, RSS / fd drift, errors, verdict)
#
# Sampling: 10 s intervals, 60 s of warm-up and windows of a fifth of the rest from 10 minutes
# on (30 minutes: 348 s); 5 s, 90 s and 60 s windows from 3.5 minutes; below that (quick
# checks) 2 s, 10 s and windows of half the rest. Exit status: the soak's (0 pass, 1 fail,
# 2 setup or usage).
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=
seconds=300
csv=
record=0
usage() {
	echo "usage: $0 [--build DIR] [--minutes N | --seconds S] [--csv FILE] [--record]" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	--build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	--minutes)
		[ $# -ge 2 ] || usage
		seconds=$(awk -v m="$2" 'BEGIN { if (m !~ /^[0-9]+(\.[0-9]+)?$/ || m <= 0) exit 1;
			printf "%d", m * 60 }') || usage
		shift 2
		;;
	--seconds)
		[ $# -ge 2 ] || usage
		case "$2" in '' | *[!0-9]*) usage ;; esac
		seconds=$2
		shift 2
		;;
	--csv) [ $# -ge 2 ] || usage; csv=$2; shift 2 ;;
	--record) record=1; shift ;;
	-h | --help) sed -n '2,/^# SPDX/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) usage ;;
	esac
done
if [ -z "$build" ]; then
	for b in "$root/build-ci" "$root/build"; do
		[ -x "$b/tests/soak/soak" ] && build=$b && break
	done
fi
[ -n "$build" ] || { echo "run.sh: no build tree with tests/soak/soak (use --build)" >&2; exit 2; }
build=$(cd "$build" && pwd) || exit 2
soak="$build/tests/soak/soak"
for f in "$soak" "$build/src/urom/service/softdpu-uromd" \
	"$build/src/urom/worker/softdpu-urom-worker" "$build/plugins/worker_rma/worker_rma.so" \
	"$build/plugins/worker_coll/worker_coll.so" \
	"$build/plugins/worker_graph/worker_graph.so"; do
	[ -e "$f" ] || { echo "run.sh: $f is missing (ninja -C $build)" >&2; exit 2; }
done

if [ "$seconds" -ge 600 ]; then
	# windows of a fifth of what follows the warm-up: on a shared machine the per-minute rate
	# swings by +-20 % with no trend, so 60 s windows would judge the noise (docs/testing.md)
	interval=10 warmup=60 window=$(((seconds - 60) / 5))
elif [ "$seconds" -ge 210 ]; then
	# 90 s of warm-up: the rate of the first minute ran above the later steady one
	interval=5 warmup=90 window=60
else
	interval=2 warmup=10 window=$(((seconds - 10) / 2))
	[ "$window" -ge 6 ] || { echo "run.sh: at least 22 seconds" >&2; exit 2; }
fi

export SDP_TEST_UROMD="$build/src/urom/service/softdpu-uromd"
export SOFTDPU_UROM_WORKER_BIN="$build/src/urom/worker/softdpu-urom-worker"
export SOFTDPU_PROVIDER_PATH="$build/src/providers/host:$build/src/providers/gen"
export UCX_NET_DEVICES=lo
unset SOFTDPU_DEVICES
plugins="$build/plugins/worker_rma;$build/plugins/worker_coll;$build/plugins/worker_graph"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/softdpu-soak.XXXXXX") || exit 2
soak_pid=
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
# The soak stops everything it started on SIGINT / SIGTERM; pass them on and wait for it.
forward() {
	[ -n "$soak_pid" ] && kill -TERM "$soak_pid" 2>/dev/null
}
trap forward INT TERM HUP

echo "run.sh: $soak, ${seconds} s (interval $interval s, warm-up $warmup s, window $window s)"
"$soak" "$plugins" --seconds "$seconds" --interval "$interval" --warmup "$warmup" \
	--window "$window" ${csv:+--csv "$csv"} > >(tee "$tmp/out") 2>&1 &
soak_pid=$!
rc=0
while :; do
	wait "$soak_pid"
	rc=$?
	# wait returns early (above 128) when a trapped signal arrived; the soak is still stopping
	kill -0 "$soak_pid" 2>/dev/null || break
done
soak_pid=
sleep 0.2 # the tee's last lines

if [ "$record" = 1 ]; then
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	machine="$(nproc) CPUs ($cpu), $(uname -sr), load $(cut -d' ' -f1 /proc/loadavg) at the end"
	python3 - "$tmp/out" "$root/bench/RESULTS.md" "$machine" "$seconds" "$rc" <<'PY'
import datetime, re, sys
out, results, machine, seconds, rc = sys.argv[1:6]
lines = open(out).read().splitlines()
ops, ratios, rss, fds = [], [], [], []
duration = errors = verdict = None
for l in lines:
    m = re.match(r"soak: rate (\S+) total=(\d+) first=([\d.]+)/s last=([\d.]+)/s ratio=([\d.]+)", l)
    if m:
        ops.append("%s %s" % (m.group(1), format(int(m.group(2)), ",").replace(",", " ")))
        ratios.append("%s %s" % (m.group(1), m.group(5)))
    m = re.match(r"soak: resources (\S+) rss_kb first=(-?\d+) last=(-?\d+) drift=([+-]\d+).*"
                 r"fds first=(-?\d+) last=(-?\d+) drift=([+-]\d+)", l)
    if m:
        rss.append((int(m.group(4)), m.group(1), int(m.group(2))))
        fds.append((int(m.group(7)), m.group(1), int(m.group(5))))
    m = re.match(r"soak: duration=(\d+) s .*errors=(\d+)", l)
    if m:
        duration, errors = int(m.group(1)), m.group(2)
    if l in ("soak: PASS", "soak: FAIL"):
        verdict = l[6:]
verdict = verdict or ("FAIL (no verdict; exit %s)" % rc)
dur = "%.1f min" % (duration / 60.0) if duration is not None else "?"
what = ("soak, `bash tests/soak/run.sh --minutes %g`: %s of 4 ranks (worker_graph loopbacks, "
        "worker_rma put/get/fetch-add to the next rank, worker_coll allreduce + alltoall on all 4) "
        "and a gen device at its rate into a CPU `doca_eth_rxq`" % (int(seconds) / 60.0, dur))
res = ["**%s**" % verdict, "errors %s" % errors]
if ops:
    res.append("operations: " + ", ".join(ops))
    res.append("rate last/first window (medians of the intervals): " + ", ".join(ratios))
if rss:
    w = max(rss)
    res.append("RSS drift (last-window max minus first-window max, after warm-up): largest %+d kB "
               "(%s, of %d kB); all: %s" % (w[0], w[1], w[2],
                                            ", ".join("%s %+d" % (n, d) for d, n, _ in rss)))
    w = max(fds)
    res.append("fd drift: largest %+d (%s, %d fds)" % w)
row = "| %s | %s | %s | %s |" % (datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), machine,
                                 what, "; ".join(res))
text = open(results).read().splitlines()
try:
    i = text.index("## Reliability")
except ValueError:
    sys.exit("run.sh: bench/RESULTS.md has no \"## Reliability\" section")
j = i + 1
while j < len(text) and not text[j].startswith("|"):
    j += 1
while j < len(text) and text[j].startswith("|"):
    j += 1
text.insert(j, row)
open(results, "w").write("\n".join(text) + "\n")
print("run.sh: recorded in bench/RESULTS.md")
PY
fi
exit "$rc"
