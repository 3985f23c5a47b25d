#!/usr/bin/env bash
# `softdpu ladder urom` end to end against a private softdpu-uromd (daemon mode, temporary run
# directory and secret, a port the kernel picks): bad usage (exit 2); each rung made to fail on
# purpose and the layer it names checked (no service: service; a plugin path without
# worker_rma: plugin; a worker_rma of another version (fixture): version; no worker_coll:
# plugin; a host UCX without a usable transport (UCX_TLS=bogus): rung 1, transport); the eval
# loop (the same failure twice: unchanged, with the escalation text and the failing rung's
# evidence; another failure: shape-changed; fixed: resolved); the green climb (every rung
# passes; the evidence file matches docs/schemas/ladder-evidence.schema.json, rungs 0-5 in
# order, key types checked); the evidence writer's refusal to replace a file it did not write
# and its replacement of its own; the default evidence name; no rank left running.
#   test_cli_ladder_urom.sh <softdpu> <softdpu-uromd> <worker bin> <worker_rma dir>
#       <worker_coll dir> <skewed worker_rma dir> <check_schema.py> <schema>
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail

cli=$(realpath "$1")
uromd=$(realpath "$2")
worker=$(realpath "$3")
rma_dir=$(realpath "$4")
coll_dir=$(realpath "$5")
skew_dir=$(realpath "$6")
check_schema=$(realpath "$7")
schema=$(realpath "$8")
fails=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_cli_ladder_urom.XXXXXX") || exit 1

export SOFTDPU_UROM_RUN_DIR="$tmp/run"
export SOFTDPU_UROM_SECRET_FILE="$tmp/secret"
export SOFTDPU_UROM_WORKER_BIN="$worker"
export UCX_NET_DEVICES=lo
export SOFTDPU_UROM_CONNECT_TIMEOUT_MS=5000
unset SOFTDPU_UROM_SERVICE_ADDR XDG_RUNTIME_DIR UCX_TLS UROM_PLUGIN_PATH
PATH="$(dirname "$uromd"):$PATH"
export PATH
LADDER_TIMEOUT=120 # bound of one ladder run (its rungs are bounded by --timeout 40 each)

# Never leave a daemon or a rank behind: anything whose command line or environment names $tmp.
cleanup() {
	local p
	"$cli" service stop >/dev/null 2>&1
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		if { tr '\0' '\n' <"$p/cmdline" | grep -qF "$tmp" ||
			tr '\0' '\n' <"$p/environ" | grep -qF "$tmp"; } 2>/dev/null; then
			case "$(cat "$p/comm" 2>/dev/null)" in
			softdpu-uromd | softdpu | softdpu-urom-wo*) kill -KILL "${p#/proc/}" 2>/dev/null ;;
			esac
		fi
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# ladder <name> <expected rc> [args...]: run the ladder (bounded) with its evidence in
# $tmp/<name>.json, stdout in $tmp/<name>.out, stderr in $tmp/<name>.err.
ladder() {
	local name=$1 want=$2 rc
	shift 2
	timeout "$LADDER_TIMEOUT" "$cli" ladder urom --timeout 40 --evidence "$tmp/$name.json" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$name: exit status $rc, expected $want"
		tail -n 30 "$tmp/$name.err" >&2
	fi
	no_ranks_left "$name"
}

# No process of a ladder run is left (the ranks are forks of the CLI: same command line).
no_ranks_left() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = softdpu ] || continue
		if { tr '\0' '\n' <"$p/cmdline" | grep -qxF "$tmp/$1.json"; } 2>/dev/null; then
			fail "$1: process ${p#/proc/} of the ladder still runs"
		fi
	done
}

# check <name> <python expression over doc (the evidence file)>
check() {
	python3 - "$tmp/$1.json" "$2" <<'EOF' || fail "$1: evidence check failed: $2"
import json, sys
doc = json.load(open(sys.argv[1]))
rung = {r["n"]: r for r in doc["rungs"]}
ok = eval(sys.argv[2])
if not ok:
    print("evidence: %s" % json.dumps({k: doc[k] for k in ("result", "trigger")}),
          file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

# failed_at <name> <rung> <layer> <trigger prefix>: rung failed there, the later ones not run.
failed_at() {
	check "$1" "doc['result'] == 'fail' and doc['trigger']['rung'] == $2 and \
doc['trigger']['layer'] == '$3' and doc['trigger']['trigger'].startswith('$4') and \
rung[$2]['result'] == 'fail' and rung[$2]['layer'] == '$3' and \
len(rung[$2]['next_check']) > 0 and \
all(rung[n]['result'] == 'pass' for n in range($2)) and \
all(rung[n]['result'] == 'not-run' for n in range($2 + 1, 6)) and \
[r['n'] for r in doc['rungs']] == [0, 1, 2, 3, 4, 5]"
	grep -q "FAIL at rung $2 .*layer $3" "$tmp/$1.out" ||
		fail "$1: stdout does not name rung $2 and layer $3"
}

start_service() {
	if ! timeout 30 "$cli" service start --listen 127.0.0.1:0 --plugin-path "$1" \
		>"$tmp/start.out" 2>"$tmp/start.err"; then
		fail "service start with plugin path $1"
		cat "$tmp/start.err" >&2
	fi
}

stop_service() {
	timeout 30 "$cli" service stop >/dev/null 2>&1 || fail "service stop"
}

# ---- usage -----------------------------------------------------------------------------------
timeout 10 "$cli" ladder urom --help >"$tmp/help.out" 2>&1 || fail "--help: nonzero exit"
grep -q -- '--compare' "$tmp/help.out" || fail "--help does not list --compare"
for bad in "--bogus" "--ranks 3" "--timeout 0" "--size 0" "--size 12Q" \
	"--collective allfoo" "--collective alltoall --size 3" "extra"; do
	# shellcheck disable=SC2086
	timeout 10 "$cli" ladder urom $bad >/dev/null 2>&1
	rc=$?
	[ "$rc" = 2 ] || fail "usage '$bad': exit status $rc, expected 2"
done
echo 'not json at all' >"$tmp/garbage.json"
echo '{"schema": "something-else/1", "ladder": "urom"}' >"$tmp/foreign.json"
for f in garbage foreign missing; do
	timeout 10 "$cli" ladder urom --compare "$tmp/$f.json" >/dev/null 2>"$tmp/cmp.err"
	rc=$?
	[ "$rc" = 2 ] || fail "--compare $f: exit status $rc, expected 2"
done
grep -q 'not a ladder evidence' "$tmp/cmp.err" 2>/dev/null ||
	grep -q 'cannot read evidence' "$tmp/cmp.err" || fail "--compare missing: no reason given"

# ---- rung 0, service layer: nothing runs -------------------------------------------------------
ladder nosvc1 1
failed_at nosvc1 0 service service-not-running
check nosvc1 "doc['snapshot']['material']['service']['answers'] is False"
ladder nosvc2 1 --compare "$tmp/nosvc1.json"
check nosvc2 "doc['compare']['outcome'] == 'unchanged' and doc['compare']['escalate'] is True"
grep -q 'unchanged' "$tmp/nosvc2.out" || fail "nosvc2: the outcome is not printed"
grep -q 'Escalate below the library' "$tmp/nosvc2.out" || fail "nosvc2: no escalation text"
grep -q '"trigger":"service-not-running"' "$tmp/nosvc2.out" ||
	fail "nosvc2: the failing rung's evidence is not printed"

# A file that is not evidence is never replaced; the run says so and fails.
printf 'precious\n' >"$tmp/precious.json"
cp "$tmp/precious.json" "$tmp/precious.orig"
timeout "$LADDER_TIMEOUT" "$cli" ladder urom --evidence "$tmp/precious.json" >/dev/null \
	2>"$tmp/precious.err"
rc=$?
[ "$rc" = 1 ] || fail "evidence over a foreign file: exit status $rc, expected 1"
cmp -s "$tmp/precious.json" "$tmp/precious.orig" || fail "a foreign evidence file was changed"
grep -q 'not a ladder evidence file; left untouched' "$tmp/precious.err" ||
	fail "evidence over a foreign file: no reason given"
compgen -G "$tmp/.precious*" >/dev/null && fail "a temporary evidence file was left behind"
# Our own evidence file is replaced (a new document, atomically: no temporary left).
cp "$tmp/nosvc1.json" "$tmp/again.json"
ino=$(stat -c %i "$tmp/again.json")
ladder again 1
check again "doc['result'] == 'fail'"
[ "$(stat -c %i "$tmp/again.json")" != "$ino" ] || fail "our own evidence file was not replaced"
compgen -G "$tmp/.again*" >/dev/null && fail "a temporary evidence file was left behind"

# ---- rung 0, plugin layer: no worker_rma -------------------------------------------------------
start_service "$coll_dir"
ladder norma 1
failed_at norma 0 plugin plugin-missing
check norma "doc['snapshot']['material']['plugins'] == [{'name': 'worker_coll', 'version': 3}]"
# another trigger than before: shape-changed
ladder norma_vs_nosvc 1 --compare "$tmp/nosvc1.json"
check norma_vs_nosvc "doc['compare']['outcome'] == 'shape-changed'"
stop_service

# ---- rung 0, version layer: worker_rma of another version --------------------------------------
start_service "$skew_dir;$coll_dir"
ladder skew 1
failed_at skew 0 version plugin-version-mismatch
check skew "{p['name']: p['version'] for p in doc['snapshot']['material']['plugins']} == \
{'worker_rma': 0x12, 'worker_coll': 3}"
stop_service

# ---- rung 0, plugin layer: no worker_coll ------------------------------------------------------
start_service "$rma_dir"
ladder nocoll 1
failed_at nocoll 0 plugin plugin-missing
# the same trigger row, but the plugin snapshot differs from norma's: shape-changed
ladder nocoll_vs_norma 1 --compare "$tmp/norma.json"
check nocoll_vs_norma "doc['compare']['outcome'] == 'shape-changed' and \
'snapshot' in doc['compare']['why']"
stop_service

# ---- rung 1, transport layer: the host's UCX has no usable transport ---------------------------
start_service "$rma_dir;$coll_dir"
UCX_TLS=bogus ladder notls 1
failed_at notls 1 transport worker-start
check notls "rung[1]['error'] == 'DOCA_ERROR_NOT_SUPPORTED' and \
all(r['failed_phase'] == 'worker-start' for r in rung[1]['material']['ranks'])"
UCX_TLS=bogus ladder notls2 1 --compare "$tmp/notls.json"
check notls2 "doc['compare']['outcome'] == 'unchanged'"

# ---- the green climb ---------------------------------------------------------------------------
ladder green 0 --json --compare "$tmp/notls.json"
python3 "$check_schema" "$schema" "$tmp/green.json" || fail "green: evidence does not match $schema"
python3 "$check_schema" "$schema" "$tmp/green.out" || fail "green: --json output does not match"
check green "doc['result'] == 'pass' and doc['trigger'] is None and \
[(r['n'], r['name'], r['result']) for r in doc['rungs']] == [(0, 'service', 'pass'), \
(1, 'single-pair', 'pass'), (2, 'multi-op', 'pass'), (3, 'small-collective', 'pass'), \
(4, 'capability-negative', 'pass'), (5, 'full-pattern', 'pass')] and \
doc['compare']['outcome'] == 'resolved' and doc['compare']['escalate'] is False"
check green "rung[1]['material']['ranks'][0]['put'] == {'enqueue': 'DOCA_SUCCESS', \
'completion': 'DOCA_SUCCESS'} and rung[1]['material']['ranks'][1]['put_landed'] == 'ok' and \
rung[1]['material']['ranks'][0]['get_bytes'] == 'ok'"
check green "rung[2]['material']['ranks'][0]['ops'] == {'submitted': 200, 'completed': 200, \
'failed': 0, 'first_error': None} and rung[2]['material']['ranks'][1]['peer_counter'] == 100 and \
rung[2]['material']['ranks'][0]['again_path']['refusal'] == 'DOCA_ERROR_AGAIN'"
check green "sorted(rung[3]['material']) == ['ranks_2', 'ranks_4'] and \
len(rung[3]['material']['ranks_4']) == 4 and all(m[c]['memory'] == 'ok' and \
m[c]['completion'] == 'DOCA_SUCCESS' for k in ('ranks_2', 'ranks_4') \
for m in rung[3]['material'][k] for c in ('allreduce', 'alltoall'))"
check green "rung[4]['material']['ranks'][0]['collective_on_worker_without_coll'] == \
'DOCA_ERROR_NOT_SUPPORTED' and rung[4]['material']['ranks'][0]['matches_discovery'] is True"
check green "rung[5]['material']['collective'] == 'allreduce' and \
rung[5]['material']['size'] == 1048576 and isinstance(rung[5]['detail']['pattern_us'], int) and \
all(m['pattern']['memory'] == 'ok' for m in rung[5]['material']['ranks'])"
# the evidence of every worker: its log tail (the service status names each log)
check green "all(isinstance(rung[n]['detail']['log_tail'], dict) and \
len(rung[n]['detail']['log_tail']) > 0 for n in range(1, 6))"
python3 - "$tmp/green.json" "$tmp/green.out" <<'EOF' || fail "green: --json differs from the file"
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
b.pop("evidence_file", None)
sys.exit(0 if a == b else 1)
EOF

# Two green runs compare as unchanged with nothing to escalate; other options work.
ladder green2 0 --ranks 2 --collective alltoall --size 64K --compare "$tmp/green.json"
check green2 "doc['result'] == 'pass' and doc['snapshot']['material']['options'] == \
{'ranks': 2, 'collective': 'alltoall', 'size': 65536} and \
sorted(doc['rungs'][3]['material']) == ['ranks_2'] and doc['compare']['outcome'] == 'unchanged' \
and doc['compare']['escalate'] is False"
grep -q 'nothing to escalate' "$tmp/green2.out" || fail "green2: two green runs not said so"

# A service that does not answer (stopped with SIGSTOP): the precheck's wait is bounded by
# --timeout and names the service layer.
uromd_pid=$(cat "$tmp/run/uromd.pid" 2>/dev/null)
if [ -n "$uromd_pid" ] && kill -STOP "$uromd_pid"; then
	t0=$(date +%s)
	ladder stopped 1 --timeout 3
	kill -CONT "$uromd_pid"
	[ $(($(date +%s) - t0)) -lt 30 ] || fail "stopped: the precheck was not bounded by --timeout"
	failed_at stopped 0 service service-not-answering
	check stopped "doc['snapshot']['material']['service'] == {'answers': False, 'running': True}"
else
	fail "no daemon pid to stop"
fi

# The default evidence name, in the current directory.
mkdir "$tmp/cwd"
(cd "$tmp/cwd" && timeout "$LADDER_TIMEOUT" "$cli" ladder urom --timeout 40 --ranks 2 \
	--collective barrier >"$tmp/default.out" 2>"$tmp/default.err") ||
	fail "default evidence run failed"
f=$(ls "$tmp/cwd" 2>/dev/null)
[[ "$f" =~ ^softdpu-ladder-urom-[0-9]{8}T[0-9]{6}Z\.json$ ]] ||
	fail "default evidence name '$f' is not softdpu-ladder-urom-<UTC time>.json"
grep -qF "evidence: $f" "$tmp/default.out" || fail "the default evidence path is not printed"
stop_service

if [ "$fails" -ne 0 ]; then
	echo "---- daemon log ----" >&2
	tail -n 30 "$tmp/run/uromd.log" >&2 2>/dev/null
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "all checks passed"
exit 0
