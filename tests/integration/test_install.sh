#!/usr/bin/env bash
# An install as a new user gets it (issue 14): `meson install --destdir` into a temporary
# directory, then everything is run from there with `env -i` (no LD_LIBRARY_PATH, no
# UROM_PLUGIN_PATH, no SOFTDPU_UROM_WORKER_BIN):
#   - every installed program starts (--help) and resolves its libraries (ldd);
#   - the installed service, started privately (temp run dir and secret, kernel-picked port),
#     finds the installed plugins and the worker in <libexecdir>/softdpu, and a sample installed
#     in <libexecdir>/softdpu/samples spawns workers through it;
#   - SIGHUP reopens the log (renamed away: a new uromd.log appears with new lines);
#   - a service with an empty --plugin-dir warns (WARNING line, "warnings" in its status);
#   - old worker logs are capped (--max-worker-logs) and only files the service names are removed;
#   - every installed program has a man page that man/groff parse without warnings;
#   - the systemd unit verifies (systemd-analyze verify, else a check of its keys), and the
#     service, run as the unit runs it, sends READY=1 (MAINPID) and STOPPING=1 to NOTIFY_SOCKET.
# Needs no root; removes only its own temporary directory (and stops the services it started).
#   test_install.sh <meson> <build root> <prefix> <bindir> <libdir> <libexecdir> <mandir>
#                   <datadir> <plugin dir> <systemd unit dir or "no">
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail

meson=$1 build=$2 prefix=$3 bindir=$4 libdir=$5 libexecdir=$6 mandir=$7 datadir=$8
plugin_dir=$9 unit_dir=${10}
fails=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_install.XXXXXX") || exit 1
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
# Absolute install paths (meson gives them relative to the prefix when they are under it).
abs() { case $1 in /*) echo "$1" ;; *) echo "$prefix/$1" ;; esac; }
root=$tmp/root
B=$root$(abs "$bindir")
X=$root$(abs "$libexecdir")/softdpu
M=$root$(abs "$mandir")
D=$root$(abs "$datadir")
P=$root$(abs "$plugin_dir")
# The clean environment every installed program runs with.
E=(env -i PATH=/usr/bin:/bin HOME="$tmp/home" LC_ALL=C)
mkdir -p "$tmp/home"

# Bounded wait: wait_for <seconds> <command...> (polls, 50 ms apart).
wait_for() {
	local limit=$(($1 * 20)) i=0
	shift
	until "$@"; do
		i=$((i + 1))
		[ $i -ge $limit ] && return 1
		sleep 0.05
	done
}
# json_get <file> <python expression on doc>: prints the value.
json_get() {
	python3 -c 'import json,sys; doc=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$1" "$2"
}

# Files in the run directory named as the service names worker logs.
count_logs() {
	local f n=0
	for f in "$run"/worker-*.log; do
		[[ ${f##*/} =~ ^worker-[0-9]+-(spawn)?[0-9]+\.log$ ]] && n=$((n + 1))
	done
	echo $n
}

# ---- install ------------------------------------------------------------------------------
if ! "$meson" install -C "$build" --no-rebuild --destdir "$root" >"$tmp/install.log" 2>&1; then
	fail "meson install --destdir failed:"
	sed 's/^/    /' "$tmp/install.log" >&2
	exit 1
fi
echo "installed into $root"

# ---- every installed program runs, every ELF file finds its libraries -----------------------
[ -x "$X/softdpu-urom-worker" ] || fail "the worker is not in $X"
[ -e "$root$(abs "$libdir")/libdoca_common.so.3" ] || fail "no libdoca_common.so.3 in <libdir>"
[ -e "$B/softdpu-urom-worker" ] && fail "the worker is installed in $B (users never run it)"
progs=()
for f in "$B"/* "$X"/softdpu-urom-worker "$X"/samples/*; do
	[ -f "$f" ] && [ -x "$f" ] && progs+=("$f")
done
[ ${#progs[@]} -ge 4 ] || fail "expected at least 4 installed programs, found ${#progs[@]}"
# (Libraries and modules are loaded by these programs, which have libdoca_common already.)
for f in "${progs[@]}"; do
	head -c 4 "$f" | grep -q 'ELF' || continue
	if "${E[@]}" ldd "$f" 2>&1 | grep -q 'not found'; then
		fail "$f: libraries not found with env -i: $("${E[@]}" ldd "$f" | grep 'not found')"
	fi
done
for f in "$B"/*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	if ! "${E[@]}" "$f" --help >"$tmp/out" 2>&1; then
		fail "$(basename "$f") --help with env -i failed: $(head -5 "$tmp/out")"
	elif [ ! -s "$tmp/out" ]; then
		fail "$(basename "$f") --help printed nothing"
	fi
done
# The installed libraries' providers are found next to them (the host device is listed).
if "${E[@]}" "$B/softdpu-selftest" --json >"$tmp/selftest.json" 2>"$tmp/selftest.err"; then
	n=$(json_get "$tmp/selftest.json" \
		'len([d for d in doc["devices"] if d["ibdev_name"] == "softdpu0"])')
	[ "$n" = 1 ] || fail "installed softdpu-selftest does not list softdpu0"
else
	fail "installed softdpu-selftest --json failed: $(cat "$tmp/selftest.err")"
fi
# The example device file is installed and every declaration in it is accepted.
ex=$D/softdpu/devices.conf.example
if [ -f "$ex" ]; then
	"${E[@]}" SOFTDPU_DEVICE_CONFIG="$ex" "$B/softdpu-selftest" --json >"$tmp/ex.json" \
		2>"$tmp/ex.err" || fail "softdpu-selftest with the example device file failed"
	[ -s "$tmp/ex.err" ] && fail "the example device file draws warnings: $(cat "$tmp/ex.err")"
	n=$(json_get "$tmp/ex.json" \
		'len([d for d in doc["devices"] if d["ibdev_name"] in ("wire0", "wire1")])')
	[ "$n" = 2 ] || fail "the example device file's wire0/wire1 are not listed"
else
	fail "no example device file at $ex"
fi

echo "ok: ${#progs[@]} programs resolve their libraries with env -i" \
	"(those in <bindir> answer --help): ${progs[*]##*/}"

# ---- the installed service, started privately ---------------------------------------------
run=$tmp/run
secret=$tmp/secret
# Names the service gives worker logs (old ones, oldest first), and files it must leave alone.
mkdir -m 700 "$run"
for i in 1 2 3 4 5; do
	echo "old $i" >"$run/worker-$i-$((100 + i)).log"
	touch -d "2020-01-0$i 00:00:00" "$run/worker-$i-$((100 + i)).log"
done
echo keep >"$run/worker-notes.log"
echo keep >"$run/notes.txt"
echo keep >"$tmp/outside.log"
ln -s "$tmp/outside.log" "$run/worker-9-9.log"
touch -d "2019-01-01 00:00:00" "$run/worker-notes.log" "$run/notes.txt"

svc=("${E[@]}" SOFTDPU_UROM_SECRET_FILE="$secret" "$B/softdpu-uromd" --run-dir "$run"
	--listen 127.0.0.1:0 --max-worker-logs 3 -l 50)
if ! "${svc[@]}" >"$tmp/start.out" 2>"$tmp/start.err"; then
	fail "the installed softdpu-uromd did not start: $(cat "$tmp/start.err")"
	exit 1
fi
pid=$(cat "$run/uromd.pid")
pids+=("$pid")
status() {
	"${E[@]}" "$B/softdpu" service status --json --run-dir "$run" --secret-file "$secret" \
		>"$1" 2>"$1.err"
}
status "$tmp/st.json" || fail "softdpu service status failed: $(cat "$tmp/st.json.err")"
names=$(json_get "$tmp/st.json" '",".join(sorted(p["name"] for p in doc["plugins"]))')
for want in worker_graph worker_rdmo worker_sandbox; do
	case ",$names," in *",$want,"*) ;; *) fail "installed service lacks $want (has: $names)" ;; esac
done
bad=$(python3 -c 'import json, sys
doc = json.load(open(sys.argv[1]))
print([p["path"] for p in doc["plugins"] if not p["path"].startswith(sys.argv[2])])' \
	"$tmp/st.json" "$P/")
[ "$bad" = "[]" ] || fail "plugins not from the installed plugin dir $P: $bad"
[ "$(json_get "$tmp/st.json" 'doc["running"]')" = True ] || fail "status lacks running:true"
[ "$(json_get "$tmp/st.json" 'doc["warnings"]')" = "[]" ] ||
	fail "unexpected warnings: $(cat "$tmp/st.json")"
[ "$(json_get "$tmp/st.json" 'doc["plugin_path"]')" = "$P" ] || fail "plugin_path is not $P"
grep -q "worker $X/softdpu-urom-worker" "$run/uromd.log" ||
	fail "the service did not pick the worker in $X: $(grep -m1 'listening on' "$run/uromd.log")"

# The installed sample spawns 2 workers (the libexec worker loads the installed worker_graph).
addr=$(cat "$run/uromd.listen")
if [ -x "$X/samples/doca_urom_multi_workers_bootstrap" ]; then
	if ! timeout 90 "${E[@]}" SOFTDPU_UROM_SERVICE_ADDR="$addr" SOFTDPU_UROM_SECRET_FILE="$secret" \
		"$X/samples/doca_urom_multi_workers_bootstrap" -n 2 -c 2 >"$tmp/mwb.out" 2>&1; then
		fail "the installed sample failed: $(tail -5 "$tmp/mwb.out")"
	fi
	wait_for 10 bash -c "! ls '$run'/worker-*-spawn*.log >/dev/null 2>&1" ||
		fail "worker logs were not renamed"
	ls "$run" >"$tmp/ls.run"
	grep -Eq '^worker-[0-9]+-[0-9]+\.log$' "$tmp/ls.run" || fail "no worker log in $run"
	echo "ok: the installed sample ran: $(tail -1 "$tmp/mwb.out")"
else
	fail "no installed sample doca_urom_multi_workers_bootstrap in $X/samples"
fi
# The cap: at most 3 logs of gone workers of the service's naming; the oldest went first; the
# other files stayed.
logs_le_4() { [ "$(count_logs)" -le 4 ]; }
wait_for 10 logs_le_4
for f in worker-1-101.log worker-2-102.log; do
	[ -e "$run/$f" ] && fail "old worker log $f was not removed (cap 3)"
done
for f in worker-notes.log notes.txt; do
	[ -f "$run/$f" ] || fail "$f was removed: not a name the service writes"
done
[ -L "$run/worker-9-9.log" ] || fail "the symbolic link worker-9-9.log was removed"
[ -f "$tmp/outside.log" ] || fail "the file a link pointed to was removed"
n=$(count_logs)
# 3 regular ones at most, plus the link (never a candidate).
[ "$n" -le 4 ] || fail "$n worker logs left, the cap is 3: $(ls "$run")"

# SIGHUP: rename the log away, a new uromd.log appears with new lines; the old one gets none.
mv "$run/uromd.log" "$run/uromd.log.1"
old_lines=$(wc -l <"$run/uromd.log.1")
kill -HUP "$pid"
wait_for 10 grep -q 'reopened' "$run/uromd.log" 2>/dev/null ||
	fail "no new uromd.log with lines after SIGHUP"
status "$tmp/st2.json" || fail "status after SIGHUP failed"
[ "$(wc -l <"$run/uromd.log.1")" -eq "$old_lines" ] ||
	fail "the renamed log still got lines after SIGHUP"
kill -0 "$pid" 2>/dev/null || fail "the service died on SIGHUP"
echo "ok: plugins $names from $P, worker from $X, SIGHUP: $(grep -m1 reopened "$run/uromd.log")"
echo "ok: run dir after the cap: $(ls "$run" | tr '\n' ' ')"

# ---- zero plugins: a loud warning, at start and in the status document ----------------------
run2=$tmp/run2
mkdir -p "$tmp/empty"
if "${E[@]}" SOFTDPU_UROM_SECRET_FILE="$secret" "$B/softdpu-uromd" --run-dir "$run2" \
	--listen 127.0.0.1:0 --plugin-dir "$tmp/empty" >"$tmp/start2.out" 2>"$tmp/start2.err"; then
	pids+=("$(cat "$run2/uromd.pid")")
	grep -q 'WARNING.*no UROM plugins found in '"$tmp/empty" "$tmp/start2.err" ||
		fail "no WARNING about zero plugins at start: $(cat "$tmp/start2.err")"
	"${E[@]}" "$B/softdpu" service status --json --run-dir "$run2" --secret-file "$secret" \
		>"$tmp/st3.json" 2>/dev/null || fail "status of the empty service failed"
	w=$(json_get "$tmp/st3.json" \
		'len(doc["warnings"]) == 1 and "no UROM plugins" in doc["warnings"][0]')
	[ "$w" = True ] || fail "the status document does not carry the zero-plugin warning"
	echo "ok: zero plugins: $(grep -m1 'no UROM plugins' "$tmp/start2.err")"
	"${E[@]}" "$B/softdpu" service stop --run-dir "$run2" >/dev/null 2>&1 ||
		fail "stopping the empty service failed"
else
	fail "the service with an empty plugin dir did not start: $(cat "$tmp/start2.err")"
fi

# ---- systemd readiness by hand: READY=1 (with MAINPID) once listening, STOPPING=1 at SIGTERM --
# A foreground service as the unit runs it, NOTIFY_SOCKET pointing at a datagram socket here.
if ! python3 - "$tmp/notify.sock" "$B/softdpu-uromd" "$tmp/run3" "$secret" \
	>"$tmp/notify.out" 2>&1 <<'PY'; then
import os, signal, socket, subprocess, sys
path, uromd, run, secret = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(15)
env = {"PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": path, "SOFTDPU_UROM_SECRET_FILE": secret}
p = subprocess.Popen([uromd, "--foreground", "--run-dir", run, "--listen", "127.0.0.1:0"],
                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    msg = s.recv(4096).decode()
    fields = dict(l.split("=", 1) for l in msg.splitlines())
    assert fields.get("READY") == "1", "no READY=1 in %r" % msg
    assert fields.get("MAINPID") == str(p.pid), "MAINPID %r, pid %d" % (
        fields.get("MAINPID"), p.pid)
    assert os.path.exists(os.path.join(run, "uromd.port")), "READY=1 before uromd.port"
    p.send_signal(signal.SIGTERM)
    msg = s.recv(4096).decode()
    assert "STOPPING=1" in msg, "no STOPPING=1 in %r" % msg
    assert p.wait(timeout=15) == 0, "exit status %r" % p.returncode
    print("READY=1 MAINPID=%d, then STOPPING=1, exit 0" % p.pid)
finally:
    if p.poll() is None:
        p.kill()
        p.wait()
PY
	fail "sd_notify: $(cat "$tmp/notify.out")"
else
	echo "ok: sd_notify: $(cat "$tmp/notify.out")"
fi

# ---- stop ---------------------------------------------------------------------------------
"${E[@]}" "$B/softdpu" service stop --json --run-dir "$run" >"$tmp/stop.json" 2>&1 ||
	fail "softdpu service stop failed: $(cat "$tmp/stop.json")"
wait_for 10 bash -c "! kill -0 $pid 2>/dev/null" || fail "the service (pid $pid) did not stop"
[ -e "$run/uromd.pid" ] && fail "the pid file stayed after stop"
# (A sanitizer build reports into the logs.)
if grep -l 'Sanitizer\|runtime error' "$run"/*.log* "$run2"/*.log* >/dev/null 2>&1; then
	fail "sanitizer reports in $(grep -l 'Sanitizer\|runtime error' "$run"/*.log* "$run2"/*.log*)"
fi

# ---- the default run directory (the CLI resolves the service's) ------------------------------
if [ "$(id -u)" = 0 ]; then want=/run/softdpu; else want=/tmp/softdpu-$(id -u); fi
"${E[@]}" "$B/softdpu" service status --json >"$tmp/def.json" 2>/dev/null
got=$(json_get "$tmp/def.json" 'doc.get("pid_file", doc.get("run_dir", ""))' 2>/dev/null)
case $got in "$want"/*) ;; *) fail "default run dir: expected $want/..., got '$got'" ;; esac

# ---- man pages ----------------------------------------------------------------------------
for f in "$B"/*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	n=$(basename "$f")
	page=$(ls "$M"/man1/"$n".1 "$M"/man8/"$n".8 2>/dev/null | head -1)
	if [ -z "$page" ]; then
		fail "no man page for $n under $M"
		continue
	fi
	if command -v groff >/dev/null 2>&1; then
		groff -man -z -ww "$page" >"$tmp/groff.err" 2>&1
		[ -s "$tmp/groff.err" ] && fail "groff warns on $page: $(cat "$tmp/groff.err")"
	fi
	if command -v man >/dev/null 2>&1; then
		LC_ALL=C MANWIDTH=80 man --warnings -l "$page" >"$tmp/man.out" 2>"$tmp/man.err" ||
			fail "man -l $page failed: $(cat "$tmp/man.err")"
		[ -s "$tmp/man.err" ] && fail "man warns on $page: $(cat "$tmp/man.err")"
		grep -q "$n" "$tmp/man.out" || fail "man -l $page does not name $n"
		echo "ok: man page $page"
	else
		echo "SKIP man -l check: man is not installed (groff checked: $(command -v groff || echo no))"
	fi
done

# ---- the systemd unit ---------------------------------------------------------------------
if [ "$unit_dir" != no ]; then
	unit=$root$(abs "$unit_dir")/softdpu-uromd.service
	if [ ! -f "$unit" ]; then
		fail "no systemd unit at $unit"
	else
		grep -q '^Type=notify$' "$unit" || fail "unit: not Type=notify"
		grep -q "^ExecStart=$(abs "$bindir")/softdpu-uromd --foreground" "$unit" ||
			fail "unit: ExecStart does not run $(abs "$bindir")/softdpu-uromd --foreground"
		grep -q '^ExecReload=.*-HUP' "$unit" || fail "unit: no ExecReload sending SIGHUP"
		grep -q '^WantedBy=multi-user.target$' "$unit" || fail "unit: no [Install] WantedBy"
		if command -v systemd-analyze >/dev/null 2>&1; then
			# The staged copy, pointing at the staged program (verify checks it exists).
			mkdir -p "$tmp/unit"
			sed "s|$(abs "$bindir")/softdpu-uromd|$B/softdpu-uromd|" "$unit" \
				>"$tmp/unit/softdpu-uromd.service"
			MANPATH=$M timeout 60 systemd-analyze verify "$tmp/unit/softdpu-uromd.service" \
				>"$tmp/verify.out" 2>&1 ||
				fail "systemd-analyze verify: $(cat "$tmp/verify.out")"
			[ -s "$tmp/verify.out" ] && fail "systemd-analyze verify warns: $(cat "$tmp/verify.out")"
			echo "ok: systemd-analyze verify $unit"
		else
			echo "SKIP systemd-analyze verify: not installed (keys checked)"
		fi
	fi
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "install: all checks passed"
