#!/usr/bin/env bash
# The `softdpu service` CLI end to end with a real softdpu-uromd in daemon mode: start, status
# (text and JSON), a second start refused, stop, stale pid files (dead pid, live unrelated pid,
# daemon killed with SIGKILL; files that are not pid files, which are never removed or
# replaced), a status query with the wrong secret, bad usage (exit 2), and
# "not running" (status exit 3); with --json, each of start, stop and status (running or not,
# failed or not) prints exactly one line holding one JSON object, a failed start carries the
# real cause in "error" and leaves no daemon running; status uses the secret start was given;
# one daemon per run directory (uromd.lock), and a daemon's exit removes only files still its own.
# Everything lives in a private temporary directory and the daemon listens on a port the
# kernel picks, so the test runs in parallel with others.
#   test_service_cli.sh <path to softdpu> <path to softdpu-uromd>
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail

cli=$1
uromd=$2
fails=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_service_cli.XXXXXX") || exit 1
run="$tmp/run"

export SOFTDPU_UROM_RUN_DIR="$run"
export SOFTDPU_UROM_SECRET_FILE="$tmp/secret"
export UCX_NET_DEVICES=lo
export SOFTDPU_UROM_CONNECT_TIMEOUT_MS=5000
unset SOFTDPU_UROM_SERVICE_ADDR XDG_RUNTIME_DIR
# The CLI finds softdpu-uromd next to itself or on PATH; in the build tree it is elsewhere.
export PATH="$(dirname "$uromd"):$PATH"

# Never leave a daemon behind, whatever happens.
# (Any softdpu-uromd whose command line or environment names $tmp is this test's.)
cleanup() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = softdpu-uromd ] || continue
		if tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qF "$tmp" ||
			tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qF "$tmp"; then
			kill -KILL "${p#/proc/}" 2>/dev/null
		fi
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
# expect_rc <want> <what> <command...>: output into $tmp/out and $tmp/err; bounded by timeout.
expect_rc() {
	local want=$1 what=$2 rc
	shift 2
	timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$what: expected exit status $want, got $rc; stdout/stderr:"
		sed 's/^/    /' "$tmp/out" "$tmp/err" >&2
	fi
}
expect_grep() {
	local what=$1 pattern=$2 file=$3
	grep -Eq -- "$pattern" "$file" || fail "$what: expected a line matching '$pattern', got:
$(sed 's/^/    /' "$file")"
}
# expect_json <what> [python expression over doc]: $tmp/out is exactly one line holding one
# JSON object, and the expression (if any) holds for it.
expect_json() {
	local what=$1 check=${2:-True}
	if [ "$(wc -l <"$tmp/out")" -ne 1 ]; then
		fail "$what: expected exactly one line of JSON on stdout, got:
$(sed 's/^/    /' "$tmp/out")"
		return
	fi
	python3 -c 'import json,sys; json.load(sys.stdin)' <"$tmp/out" ||
		{ fail "$what: stdout is not valid JSON: $(cat "$tmp/out")"; return; }
	python3 -c '
import json, sys
doc = json.load(sys.stdin)
ok = isinstance(doc, dict) and bool(eval(sys.argv[1], {}, {"doc": doc}))
sys.exit(0 if ok else 1)' "$check" <"$tmp/out" ||
		fail "$what: JSON check failed ($check): $(cat "$tmp/out")"
}
daemon_pid() {
	cat "$run/uromd.pid" 2>/dev/null
}
# A live (not zombie: a daemon's parent is init, which may be slow to reap) softdpu-uromd.
is_uromd() {
	local stat
	[ -n "$1" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = softdpu-uromd ] || return 1
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}
# Wait (bounded) until pid $1 is gone.
wait_gone() {
	local i
	for i in $(seq 1 100); do
		is_uromd "$1" || return 0
		sleep 0.05
	done
	return 1
}

# ---- nothing running -------------------------------------------------------------------------
expect_rc 3 "status, no service" "$cli" service status
expect_grep "status, no service" 'not running' "$tmp/out"
expect_rc 3 "status --json, no service" "$cli" service status --json
expect_json "status --json, no service" \
	"doc['running'] is False and doc['pid_file'] == '$run/uromd.pid' and doc['stale'] is False"
expect_rc 0 "stop, no service" "$cli" service stop
expect_grep "stop, no service" 'not running' "$tmp/out"
expect_rc 0 "stop --json, no service" "$cli" service stop --json
expect_json "stop --json, no service" \
	"doc['action'] == 'stop' and doc['ok'] is True and doc['was_running'] is False"

# ---- usage -----------------------------------------------------------------------------------
expect_rc 0 "--help" "$cli" --help
expect_grep "--help" '^Usage: softdpu' "$tmp/out"
expect_rc 2 "no command" "$cli"
expect_rc 2 "unknown command" "$cli" frobnicate
expect_rc 2 "service without subcommand" "$cli" service
expect_rc 2 "unknown service subcommand" "$cli" service restartify
expect_rc 2 "status, unknown option" "$cli" service status --bogus
expect_rc 2 "stop, bad timeout" "$cli" service stop --timeout zero
expect_rc 2 "start, unknown option" "$cli" service start --bogus
expect_rc 2 "start, message size too small" "$cli" service start -m 1
expect_rc 2 "start, bad listen address" "$cli" service start --listen nope
expect_rc 2 "start, bad cpuset" "$cli" service start --cpuset 5-2
expect_rc 2 "start, foreground" "$cli" service start -f
expect_rc 2 "start --json, message size too small" "$cli" service start --json -m 1
expect_json "start --json, message size too small" \
	"doc['action'] == 'start' and doc['ok'] is False and doc['exit_status'] == 2"
expect_rc 2 "status --json, unknown option" "$cli" service status --json --bogus
expect_json "status --json, unknown option" "'error' in doc"
expect_rc 0 "start --help" "$cli" service start --help
expect_grep "start --help" 'max-msg-size' "$tmp/out"
expect_rc 3 "status after refused starts" "$cli" service status

# ---- start, status, second start -------------------------------------------------------------
expect_rc 0 "start" "$cli" service start --listen 127.0.0.1:0 --cpuset 0-7,9 --max-workers 4 \
	-m 2048 --plugin-path "$tmp/no-such-dir"
expect_grep "start" '^softdpu-uromd started: pid [0-9]+, listening on 127\.0\.0\.1:[0-9]+' \
	"$tmp/out"
pid=$(daemon_pid)
is_uromd "$pid" || fail "start: pid file names '$pid', not a running softdpu-uromd"
grep -Eq '^[0-9]+$' "$run/uromd.port" 2>/dev/null || fail "start: no port in $run/uromd.port"
port=$(cat "$run/uromd.port" 2>/dev/null)
[ -f "$run/uromd.log" ] || fail "start: no daemon log $run/uromd.log"
[ "$(stat -c %a "$tmp/secret" 2>/dev/null)" = 600 ] || fail "start: secret file not mode 0600"

expect_rc 0 "status" "$cli" service status
expect_grep "status" "running: pid $pid, up [0-9]+ s" "$tmp/out"
expect_grep "status" "listen: +127\.0\.0\.1:$port\$" "$tmp/out"
expect_grep "status" 'max msg size: +2048$' "$tmp/out"
expect_grep "status" 'max workers: +4$' "$tmp/out"
expect_grep "status" 'cpuset: +0-7,9 ' "$tmp/out"
expect_grep "status" 'workers: +0$' "$tmp/out"
expect_grep "status" "no-such-dir: cannot open plugin directory" "$tmp/out"

expect_rc 0 "status --json" "$cli" service status --json
expect_json "status --json" "doc['running'] is True and doc['pid'] == $pid"
cp "$tmp/out" "$tmp/status.json"
python3 - "$tmp/status.json" "$pid" "$port" <<'EOF' || fail "status --json: document check failed"
import json, sys
doc = json.load(open(sys.argv[1]))
want = {"pid": int(sys.argv[2]), "max_msg_size": 2048, "max_workers": 4, "cpuset": "0-7,9",
        "listen": "127.0.0.1:" + sys.argv[3], "workers": [], "plugins": []}
bad = [k for k, v in want.items() if doc.get(k) != v]
for k in ("version", "uptime_s", "skipped"):
    if k not in doc:
        bad.append(k)
if bad:
    print("status --json: wrong or missing keys %s in %s" % (bad, doc), file=sys.stderr)
    sys.exit(1)
EOF

expect_rc 1 "second start" "$cli" service start --listen 127.0.0.1:0
expect_grep "second start" "already running \(pid $pid" "$tmp/err"
expect_rc 1 "second start --json" "$cli" service start --json --listen 127.0.0.1:0
expect_json "second start --json" "doc['action'] == 'start' and doc['ok'] is False and \
'already running (pid $pid' in doc['error']"
expect_grep "second start --json" "already running \(pid $pid" "$tmp/err"
is_uromd "$pid" || fail "second start: the first daemon (pid $pid) is gone"
[ "$(daemon_pid)" = "$pid" ] || fail "second start: pid file changed to $(daemon_pid)"

# A host with another secret is refused, and says so.
head -c 32 /dev/urandom >"$tmp/other-secret" && chmod 600 "$tmp/other-secret"
expect_rc 1 "status, wrong secret" "$cli" service status --secret-file "$tmp/other-secret"
expect_grep "status, wrong secret" 'does not know the secret' "$tmp/err"
is_uromd "$pid" || fail "wrong secret: the daemon died"

# A second daemon (own run dir) on the port the first one holds fails, and says why.
expect_rc 1 "start on a busy port" env SOFTDPU_UROM_RUN_DIR="$tmp/run2" "$cli" service start \
	--listen "127.0.0.1:$port"
expect_grep "start on a busy port" "softdpu-uromd failed to start" "$tmp/err"
[ -e "$tmp/run2/uromd.pid" ] && fail "start on a busy port: pid file left in $tmp/run2"
# With --json the daemon's own reason is the "error" (not a generic "failed to start").
expect_rc 1 "start --json on a busy port" env SOFTDPU_UROM_RUN_DIR="$tmp/run2" "$cli" service \
	start --json --listen "127.0.0.1:$port"
expect_json "start --json on a busy port" "doc['ok'] is False and \
'$port' in doc['error'] and 'failed to start' not in doc['error']"

# ---- stop ------------------------------------------------------------------------------------
expect_rc 0 "stop" "$cli" service stop
expect_grep "stop" "^softdpu-uromd \(pid $pid\) stopped" "$tmp/out"
wait_gone "$pid" || fail "stop: pid $pid still runs"
[ -e "$run/uromd.pid" ] && fail "stop: pid file left behind"
[ -e "$run/uromd.port" ] && fail "stop: port file left behind"
expect_rc 3 "status after stop" "$cli" service status

# ---- stale pid files -------------------------------------------------------------------------
# A pid that no longer exists.
sleep 0 &
dead=$!
wait "$dead"
echo "$dead" >"$run/uromd.pid"
expect_rc 3 "status, stale pid file" "$cli" service status
expect_grep "status, stale pid file" 'stale' "$tmp/out"
expect_rc 0 "start over a stale pid file" "$cli" service start --listen 127.0.0.1:0
pid=$(daemon_pid)
is_uromd "$pid" || fail "start over a stale pid file: no daemon"
expect_rc 0 "status after stale start" "$cli" service status
expect_rc 0 "stop after stale start" "$cli" service stop
wait_gone "$pid" || fail "stop after stale start: pid $pid still runs"

# A live process that is not the daemon (this shell): not refused, and never signalled.
echo "$$" >"$run/uromd.pid"
expect_rc 0 "start over a pid file naming another process" "$cli" service start \
	--listen 127.0.0.1:0
pid=$(daemon_pid)
[ "$pid" != "$$" ] || fail "start over another process's pid: pid file not rewritten"
expect_rc 0 "stop (other pid case)" "$cli" service stop
wait_gone "$pid" || fail "stop (other pid case): pid $pid still runs"

# start and stop with --json: one JSON object each, the same facts as the text.
expect_rc 0 "start --json" "$cli" service start --json --listen 127.0.0.1:0
pid=$(daemon_pid)
port=$(cat "$run/uromd.port" 2>/dev/null)
expect_json "start --json" "doc['action'] == 'start' and doc['ok'] is True and \
doc['pid'] == ${pid:-0} and doc['listen'] == '127.0.0.1:$port' and doc['run_dir'] == '$run'"
is_uromd "$pid" || fail "start --json: no daemon"
expect_rc 0 "stop --json" "$cli" service stop --json
expect_json "stop --json" "doc['action'] == 'stop' and doc['ok'] is True and \
doc['was_running'] is True and doc['pid'] == ${pid:-0}"
wait_gone "$pid" || fail "stop --json: pid $pid still runs"

# The daemon killed with SIGKILL leaves its pid file unlocked: reported as not running.
expect_rc 0 "start before SIGKILL" "$cli" service start --listen 127.0.0.1:0
pid=$(daemon_pid)
kill -KILL "$pid"
wait_gone "$pid" || fail "SIGKILL: pid $pid still runs"
expect_rc 3 "status after SIGKILL" "$cli" service status
expect_rc 3 "status --json after SIGKILL" "$cli" service status --json
expect_json "status --json after SIGKILL" "doc['running'] is False and doc['stale'] is True"
expect_rc 0 "stop after SIGKILL (removes the stale file)" "$cli" service stop
expect_grep "stop after SIGKILL" 'stale pid file' "$tmp/out"
[ -e "$run/uromd.pid" ] && fail "stop after SIGKILL: stale pid file left"

# ---- one daemon per run directory; each removes only its own files ---------------------------
# A second daemon on the same run directory with another pid file is refused (it used to
# overwrite and, at its exit, remove the first one's uromd.port, uromd.listen, ...).
expect_rc 0 "start A" "$cli" service start --listen 127.0.0.1:0
pid=$(daemon_pid)
port_a=$(cat "$run/uromd.port" 2>/dev/null)
expect_rc 1 "second daemon, same run dir, other pid file" "$uromd" --listen 127.0.0.1:0 \
	--pid-file "$tmp/other.pid"
expect_grep "second daemon, same run dir" \
	"already running in run directory $run \(pid $pid" "$tmp/err"
if [ -e "$tmp/other.pid" ]; then
	fail "second daemon, same run dir: it started (pid file $tmp/other.pid)"
	kill -TERM "$(cat "$tmp/other.pid")" 2>/dev/null
	wait_gone "$(cat "$tmp/other.pid")"
fi
[ "$(cat "$run/uromd.port" 2>/dev/null)" = "$port_a" ] ||
	fail "second daemon, same run dir: uromd.port changed or vanished"
is_uromd "$pid" || fail "second daemon, same run dir: the first daemon (pid $pid) is gone"
# A's pid file removed by hand and made again by daemon B (its own run dir), A's uromd.listen
# replaced by hand: A's exit removes neither.
rm -f "$run/uromd.pid" "$run/uromd.listen"
echo "not A's" >"$run/uromd.listen"
expect_rc 0 "daemon B on A's pid file path" env SOFTDPU_UROM_RUN_DIR="$tmp/run3" "$uromd" \
	--listen 127.0.0.1:0 --pid-file "$run/uromd.pid"
pid_b=$(daemon_pid)
is_uromd "$pid_b" && [ "$pid_b" != "$pid" ] || fail "daemon B: pid file names '$pid_b'"
kill -TERM "$pid"
wait_gone "$pid" || fail "stop A: pid $pid still runs"
[ "$(daemon_pid)" = "$pid_b" ] || fail "stop A: B's pid file $run/uromd.pid was removed"
[ "$(cat "$run/uromd.listen" 2>/dev/null)" = "not A's" ] ||
	fail "stop A: the uromd.listen A did not write was removed"
[ -e "$run/uromd.port" ] && fail "stop A: its own uromd.port was left behind"
[ -e "$tmp/run3/uromd.port" ] || fail "stop A: B's uromd.port vanished"
expect_rc 0 "stop B" "$cli" service stop
wait_gone "$pid_b" || fail "stop B: pid $pid_b still runs"
[ -e "$run/uromd.pid" ] && fail "stop B: its pid file was left behind"
rm -f "$run/uromd.listen"

# ---- the secret given to start is the one status uses -------------------------------------
expect_rc 0 "start --secret-file" "$cli" service start --listen 127.0.0.1:0 \
	--secret-file "$tmp/secret-of-start"
pid=$(daemon_pid)
expect_rc 0 "status after start --secret-file" "$cli" service status
expect_grep "status after start --secret-file" "running: pid $pid" "$tmp/out"
expect_rc 0 "status --json after start --secret-file" "$cli" service status --json
expect_json "status --json after start --secret-file" "doc['running'] is True"
expect_rc 1 "status --secret-file <other> still wins" "$cli" service status \
	--secret-file "$tmp/other-secret"
expect_rc 0 "stop (start --secret-file)" "$cli" service stop
wait_gone "$pid" || fail "stop (start --secret-file): pid $pid still runs"
[ -e "$run/uromd.secret-path" ] && fail "stop: uromd.secret-path left behind"

# ---- start --json: one document on stdout whatever goes wrong; ok:false leaves nothing -----
# A network device that does not exist: UCX (if the transport uses it) warns, maybe on
# stdout, and the service may be unreachable. Whatever the outcome, stdout is exactly one JSON
# document, and "ok":false means no daemon is left running (the CLI stops what it started).
expect_rc_any() {
	timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
}
expect_rc_any env UCX_NET_DEVICES=nosuchdev0 "$cli" service start --json --listen 127.0.0.1:0
expect_json "start --json, bad UCX_NET_DEVICES" "doc['action'] == 'start' and \
(doc['ok'] is True or len(doc.get('error') or '') > 0)"
if python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["ok"] else 1)' \
	<"$tmp/out" 2>/dev/null; then
	pid=$(daemon_pid)
	is_uromd "$pid" || fail "start --json, bad UCX_NET_DEVICES: ok but no daemon"
	expect_rc 0 "stop (bad UCX_NET_DEVICES)" "$cli" service stop
	wait_gone "$pid" || fail "stop (bad UCX_NET_DEVICES): pid $pid still runs"
else
	expect_rc 3 "status after a failed start --json" "$cli" service status
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = softdpu-uromd ] || continue
		tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qxF "SOFTDPU_UROM_RUN_DIR=$run" &&
			fail "start --json reported ok:false but left softdpu-uromd ${p#/proc/} running"
	done
fi

# ---- files that are not pid files: never removed, truncated or replaced ---------------------
# (as root, `stop --pid-file /etc/passwd` used to delete it: a scratch file stands in for it.)
printf 'root:x:0:0:root:/root:/bin/bash\n1234 is not alone here\n' >"$tmp/scratch"
cp "$tmp/scratch" "$tmp/scratch.orig"
: >"$tmp/empty"
ln -s "$tmp/scratch" "$tmp/link"
unchanged() {
	cmp -s "$tmp/scratch" "$tmp/scratch.orig" || fail "$1: the scratch file was changed or removed"
}
for f in scratch empty link; do
	expect_rc 1 "stop --pid-file <$f>" "$cli" service stop --pid-file "$tmp/$f"
	expect_grep "stop --pid-file <$f>" 'not a softdpu pid file|symbolic link|not a pid file' \
		"$tmp/err"
	unchanged "stop --pid-file <$f>"
	expect_rc 1 "stop --json --pid-file <$f>" "$cli" service stop --json --pid-file "$tmp/$f"
	expect_json "stop --json --pid-file <$f>" \
		"doc['ok'] is False and 'not a pid file' in doc['error']"
	expect_rc 1 "status --pid-file <$f>" "$cli" service status --pid-file "$tmp/$f"
	unchanged "status --pid-file <$f>"
	expect_rc 1 "start --pid-file <$f>" "$cli" service start --listen 127.0.0.1:0 \
		--pid-file "$tmp/$f"
	expect_grep "start --pid-file <$f>" 'not a softdpu pid file|symbolic link' "$tmp/err"
	unchanged "start --pid-file <$f>"
	expect_rc 1 "softdpu-uromd -f --pid-file <$f>" "$uromd" -f --listen 127.0.0.1:0 \
		--pid-file "$tmp/$f"
	unchanged "softdpu-uromd -f --pid-file <$f>"
done
[ -f "$tmp/empty" ] && [ ! -s "$tmp/empty" ] || fail "the empty file was changed or removed"
[ -L "$tmp/link" ] || fail "the symbolic link was removed"
[ -e "$run/uromd.pid" ] && fail "refused starts left a pid file in $run"

if [ "$fails" -ne 0 ]; then
	echo "---- daemon log ----" >&2
	tail -n 30 "$run/uromd.log" >&2 2>/dev/null
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "all checks passed"
exit 0
