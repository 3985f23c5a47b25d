#!/usr/bin/env bash
# doca_caps, `softdpu env` and `softdpu caps` end to end (docs/tools.md): every --json output is
# exactly one JSON document that the schemas of docs/schemas/ accept (tests/tools/check_schema.py);
# the facts match what the test reads itself (versions, devices it declares with their MACs and
# queue capabilities, hugepages from /proc and /sys, Open MPI from mpirun, nvidia_peermem from
# /proc/modules, GPUs or their absence); the UROM service is reported not answering, with the
# cause, when none runs, and with the plugins it loaded when the test's private one runs
# (private run dir and secret, a port the kernel picks, plugins from the build tree; started and
# stopped here); a hanging or foreign mpirun is reported, not waited for; bad options exit 2, an
# unknown device exits 1 with a message.
#   test_tool_caps.sh <doca_caps> <softdpu> <softdpu-uromd> <plugin dir> <schema dir> <check_schema.py>
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail

caps=$1
cli=$2
uromd=$3
plugin_dir=$4
schemas=$5
checker=$6
fails=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_tool_caps.XXXXXX") || exit 1
run="$tmp/run"

export SOFTDPU_UROM_RUN_DIR="$run"
export SOFTDPU_UROM_SECRET_FILE="$tmp/secret"
export UCX_NET_DEVICES=lo
export SOFTDPU_UROM_CONNECT_TIMEOUT_MS=5000
unset SOFTDPU_UROM_SERVICE_ADDR XDG_RUNTIME_DIR
export PATH="$(dirname "$uromd"):$PATH"
# Devices this test declares (docs/devices.md): a generator with a chosen MAC and a loop wire.
gen_mac=02:12:34:56:78:9a
export SOFTDPU_DEVICES="gen:name=tcapgen0,mac=$gen_mac;loop:name=tcapw0,peer=tcapw1;loop:name=tcapw1,peer=tcapw0"
export SOFTDPU_DEVICE_CONFIG=

cleanup() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = softdpu-uromd ] || continue
		if { tr '\0' '\n' <"$p/cmdline"; } 2>/dev/null | grep -qF "$tmp" ||
			{ tr '\0' '\n' <"$p/environ"; } 2>/dev/null | grep -qF "$tmp"; then
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
# run_rc <want> <what> <command...>: stdout into $tmp/out, stderr into $tmp/err (bounded).
run_rc() {
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
# valid <what> <schema name> <file>: exactly one document, accepted by the schema; kept as
# $tmp/<name>.json for later checks.
valid() {
	local what=$1 schema=$2 file=$3
	python3 "$checker" "$schemas/$schema.schema.json" "$file" 2>"$tmp/schema.err" ||
		fail "$what: not one document valid against $schema.schema.json:
$(sed 's/^/    /' "$tmp/schema.err")
$(head -c 3000 "$file" | sed 's/^/    /')"
}
# check <what> <python code over doc (and the named files in F)> [file]
check() {
	local what=$1 code=$2 file=${3:-$tmp/out}
	python3 - "$file" "$code" "$tmp" <<'EOF' || fail "$what: check failed ($code)"
import json, os, re, sys
doc = json.load(open(sys.argv[1]))
tmp = sys.argv[3]
def F(name):
    return json.load(open(os.path.join(tmp, name)))
def dev(d, name):
    m = [x for x in d["devices"] if x["name"] == name]
    assert len(m) == 1, "device %s listed %d times" % (name, len(m))
    return m[0]
def types(q):
    return {(t["type"], t["data_path"]) for t in q["types"] if t["supported"]}
try:
    exec(sys.argv[2])
except AssertionError as e:
    print("assertion failed: %s" % e, file=sys.stderr)
    print(json.dumps(doc)[:3000], file=sys.stderr)
    sys.exit(1)
EOF
}

# ---- the schema checker itself refuses what it must --------------------------------------
echo '{"tool": "doca_caps"} {"tool": "doca_caps"}' >"$tmp/two.json"
python3 "$checker" "$schemas/doca_caps.schema.json" "$tmp/two.json" 2>/dev/null &&
	fail "check_schema accepted two documents"
echo '{"tool": "doca_caps", "devices": [{"name": 5}]}' >"$tmp/bad.json"
python3 "$checker" "$schemas/doca_caps.schema.json" "$tmp/bad.json" 2>"$tmp/bad.err" &&
	fail "check_schema accepted a device whose name is a number"
grep -q 'devices/0/name: expected string' "$tmp/bad.err" ||
	fail "check_schema did not name the bad key: $(cat "$tmp/bad.err")"
echo '{"tool": "doca_caps", "extra": true}' >"$tmp/bad.json"
python3 "$checker" "$schemas/doca_caps.schema.json" "$tmp/bad.json" 2>/dev/null &&
	fail "check_schema accepted a key additionalProperties forbids"
echo '{"type": "object", "oneOf": []}' >"$tmp/bad.schema.json"
python3 "$checker" "$tmp/bad.schema.json" "$tmp/two.json" 2>/dev/null
[ $? -eq 2 ] || fail "check_schema accepted a schema outside its subset"

# ---- doca_caps --------------------------------------------------------------------------
run_rc 0 "doca_caps --version" "$caps" --version
expect_grep "doca_caps --version" '^softdpu: +[0-9]+\.[0-9]+\.[0-9]+$' "$tmp/out"
expect_grep "doca_caps --version" '^DOCA API level: +3\.3\.0 ' "$tmp/out"
expect_grep "doca_caps --version" '^UCX: +[0-9]+\.[0-9]+' "$tmp/out"
expect_grep "doca_caps --version" '^CUDA driver: +([0-9]+\.[0-9]+|missing \(.+\))$' "$tmp/out"
run_rc 0 "doca_caps --version --json" "$caps" --version --json
valid "doca_caps --version --json" doca_caps "$tmp/out"
cp "$tmp/out" "$tmp/dc_version.json"
"$cli" --version >"$tmp/softdpu_version" 2>/dev/null || fail "softdpu --version failed"
check "doca_caps --version --json" '
v = doc["versions"]
assert "devices" not in doc
assert v["doca_api"] == "3.3.0" and v["doca_runtime"] == "3.3.0"
assert v["ucx"]["present"] and re.match(r"\d+\.\d+\.\d+", v["ucx"]["version"])
want = open(os.path.join(tmp, "softdpu_version")).read().split()[1]
assert v["softdpu"] == want, (v["softdpu"], want)
if not v["cuda_driver"]["present"]:
    assert v["cuda_driver"]["reason"], "no reason"
else:
    assert re.match(r"\d+\.\d+$", v["cuda_driver"]["version"]) and v["cuda_driver"]["raw"] > 0
for k in ("cuda_runtime", "cuda_toolkit"):
    assert v[k]["present"] or v[k]["reason"], k
' "$tmp/dc_version.json"

run_rc 0 "doca_caps --list-devs" "$caps" --list-devs
expect_grep "doca_caps --list-devs" "^tcapgen0 +pci ffff:02:[0-9a-f]{2}\.[0-7] +backend gen +iface tcapgen0 +link up +mac $gen_mac" "$tmp/out"
expect_grep "doca_caps --list-devs" '^softdpu0 +pci ffff:00:00\.0 +backend host .* mac - \(no Ethernet port' "$tmp/out"
expect_grep "doca_caps --list-devs" '^tcapw0 +pci ffff:01:.* backend loop ' "$tmp/out"
run_rc 0 "doca_caps --list-devs --json" "$caps" --list-devs --json
valid "doca_caps --list-devs --json" doca_caps "$tmp/out"
check "doca_caps --list-devs --json" '
assert "versions" not in doc
g = dev(doc, "tcapgen0")
assert g["backend"] == "gen" and g["mac"] == "'$gen_mac'" and g["link"] == "up", g
assert g["pci_addr"].startswith("ffff:02:") and g["iface"] == "tcapgen0" and "caps" not in g
h = dev(doc, "softdpu0")
assert h["backend"] == "host" and h["mac"] is None and "Ethernet" in h["mac_reason"], h
assert h["pci_addr"] == "ffff:00:00.0" and h["iface"] == "lo"
w0, w1 = dev(doc, "tcapw0"), dev(doc, "tcapw1")
assert w0["backend"] == w1["backend"] == "loop" and w0["mac"] != w1["mac"]
assert re.match(r"([0-9a-f]{2}:){5}[0-9a-f]{2}$", w0["mac"])
'
cp "$tmp/out" "$tmp/dc_list.json"

run_rc 0 "doca_caps" "$caps"
expect_grep "doca_caps" '^tcapgen0 ' "$tmp/out"
expect_grep "doca_caps" '^  rxq types: +CYCLIC/GPU, MANAGED_MEMPOOL/CPU, REGULAR/CPU$' "$tmp/out"
expect_grep "doca_caps" '^  txq types: +REGULAR/CPU, REGULAR/GPU$' "$tmp/out"
expect_grep "doca_caps" '^  wait on time: +NATIVE$' "$tmp/out"
expect_grep "doca_caps" '^  ethernet queues: not supported$' "$tmp/out"
run_rc 0 "doca_caps --json" "$caps" --json
valid "doca_caps --json" doca_caps "$tmp/out"
cp "$tmp/out" "$tmp/dc_caps.json"
check "doca_caps --json" '
assert "versions" in doc
names = [d["name"] for d in doc["devices"]]
assert names == [d["name"] for d in F("dc_list.json")["devices"]], names
for d in doc["devices"]:
    assert "caps" in d, d["name"]
g = dev(doc, "tcapgen0")["caps"]
assert g["ethernet"] is True
assert types(g["rxq"]) == {("CYCLIC", "GPU"), ("MANAGED_MEMPOOL", "CPU"), ("REGULAR", "CPU")}
assert len(g["rxq"]["types"]) == 6 and len(g["txq"]["types"]) == 2
assert types(g["txq"]) == {("REGULAR", "CPU"), ("REGULAR", "GPU")}
assert g["rxq"]["max_burst_size"] > 0 and g["rxq"]["max_packet_size"] >= 1514
assert g["txq"]["max_burst_size"] > 0
assert g["txq"]["l3_checksum_offload"] and g["txq"]["l4_checksum_offload"]
assert g["txq"]["wait_on_time"] == "NATIVE"
for t in g["rxq"]["types"]:
    assert t["status"] == ("DOCA_SUCCESS" if t["supported"] else "DOCA_ERROR_NOT_SUPPORTED"), t
h = dev(doc, "softdpu0")["caps"]
assert h["ethernet"] is False and types(h["rxq"]) == set() and types(h["txq"]) == set()
assert h["rxq"]["max_burst_size"] is None and h["txq"]["wait_on_time"] is None
'
# one device, by name and by PCI address
gen_pci=$(python3 -c 'import json,sys; print([d["pci_addr"] for d in json.load(open(sys.argv[1]))["devices"] if d["name"] == "tcapgen0"][0])' "$tmp/dc_list.json")
for sel in tcapgen0 "$gen_pci"; do
	run_rc 0 "doca_caps -d $sel --json" "$caps" -d "$sel" --json
	valid "doca_caps -d $sel --json" doca_caps "$tmp/out"
	check "doca_caps -d $sel --json" '
assert [d["name"] for d in doc["devices"]] == ["tcapgen0"]
assert doc["devices"][0] == dev(F("dc_caps.json"), "tcapgen0")
'
done
run_rc 0 "doca_caps --help" "$caps" --help
expect_grep "doca_caps --help" '^Usage: doca_caps' "$tmp/out"
# negative paths
run_rc 2 "doca_caps --bogus" "$caps" --bogus
run_rc 2 "doca_caps extra argument" "$caps" extra
run_rc 2 "doca_caps --version --list-devs" "$caps" --version --list-devs
run_rc 2 "doca_caps -d without a value" "$caps" -d
run_rc 2 "doca_caps --json --bogus" "$caps" --json --bogus
valid "doca_caps --json --bogus" error "$tmp/out"
run_rc 1 "doca_caps -d nosuch" "$caps" -d nosuch
expect_grep "doca_caps -d nosuch" 'no device named nosuch' "$tmp/err"
[ -s "$tmp/out" ] && fail "doca_caps -d nosuch: printed on stdout: $(cat "$tmp/out")"
run_rc 1 "doca_caps -d nosuch --json" "$caps" -d nosuch --json
valid "doca_caps -d nosuch --json" error "$tmp/out"
check "doca_caps -d nosuch --json" 'assert "nosuch" in doc["error"] and doc["exit_status"] == 1'

# ---- softdpu env / caps without a service ---------------------------------------------------
run_rc 0 "env --json, no service" "$cli" env --json
valid "env --json, no service" env "$tmp/out"
cp "$tmp/out" "$tmp/env.json"
check "env --json, no service" '
s = doc["service"]
assert s["answering"] is False and "no service running" in s["reason"], s
assert "'"$run"'/uromd.pid" in s["reason"], s
assert doc["versions"] == F("dc_version.json")["versions"]
assert doc["devices"] == F("dc_list.json")["devices"]
u = doc["ucx"]
assert u["present"] and u["version"] == doc["versions"]["ucx"]["version"]
assert "self" in u["transports"] and "tcp" in u["transports"], u["transports"]
assert any(r["transport"] == "tcp" and r["device"] == "lo" and r["type"] == "net"
           for r in u["resources"])
assert set(u["transports"]) == {r["transport"] for r in u["resources"]}
# hugepages as /proc and /sys say
mi = {}
for line in open("/proc/meminfo"):
    k, _, v = line.partition(":")
    mi[k] = int(v.split()[0])
m = doc["hugepages"]["meminfo"]
assert m["present"] and m["total"] == mi["HugePages_Total"] and m["default_size_kb"] == mi["Hugepagesize"]
base = "/sys/kernel/mm/hugepages"
if os.path.isdir(base):
    sizes = sorted(int(n[10:-2]) for n in os.listdir(base) if n.startswith("hugepages-"))
    got = doc["hugepages"]["sizes"]["list"]
    assert [e["size_kb"] for e in got] == sizes, (got, sizes)
    for e in got:
        assert e["nr"] == int(open("%s/hugepages-%dkB/nr_hugepages" % (base, e["size_kb"])).read())
else:
    assert doc["hugepages"]["sizes"]["present"] is False
# nvidia_peermem as /proc/modules says
pm = doc["gpus"]["nvidia_peermem"]
if os.path.exists("/proc/modules"):
    loaded = any(l.startswith("nvidia_peermem ") for l in open("/proc/modules"))
    assert pm["present"] and pm["loaded"] == loaded, pm
else:
    assert pm["present"] is False and "/proc/modules" in pm["reason"], pm
# the NVIDIA kernel module as /sys says
km = doc["gpus"]["kernel_module"]
if os.path.exists("/sys/module/nvidia/version"):
    assert km == {"present": True, "version": open("/sys/module/nvidia/version").read().strip()}, km
else:
    assert km["present"] is False and "/sys/module/nvidia/version" in km["reason"], km
# GPUs: none (with the cause) here, or each with its facts
g = doc["gpus"]
if not g["present"]:
    assert g["reason"] and g["list"] == [] and g["count"] == 0, g
else:
    assert g["count"] == len(g["list"]) > 0
    for x in g["list"]:
        assert re.match(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", x["pci_bus_id"].lower()), x
        assert re.match(r"\d+\.\d$", x["compute_capability"]) and x["memory_bytes"] > 0, x
        assert isinstance(x["dmabuf_supported"], bool), x
'
# Open MPI as mpirun itself says
check "env --json, mpi" '
import shutil, subprocess
m = doc["mpi"]
p = shutil.which("mpirun")
if p is None:
    assert m["present"] is False and m["reason"] == "no mpirun on PATH", m
else:
    out = subprocess.run([p, "--version"], capture_output=True, text=True, timeout=30).stdout
    first = out.splitlines()[0]
    mo = re.search(r"\(Open MPI\) (\S+)", first)
    if mo:
        assert m["present"] and m["version"] == mo.group(1) and m["path"] == p, (m, first)
    else:
        assert m["present"] is False and "not Open MPI" in m["reason"], m
' "$tmp/env.json"
run_rc 0 "env" "$cli" env
expect_grep "env" '^UROM service: +not answering \(no service running' "$tmp/out"
expect_grep "env" '^  tcapgen0 ' "$tmp/out"
expect_grep "env" '^UCX: +[0-9]' "$tmp/out"
expect_grep "env" '^GPUs: ' "$tmp/out"
# no secret yet, then nothing listening at --addr: each time the real cause
run_rc 0 "env --json --addr, no secret" "$cli" env --json --addr 127.0.0.1:1 --timeout-ms 2000
valid "env --json --addr, no secret" env "$tmp/out"
check "env --json --addr, no secret" '
s = doc["service"]
assert s["answering"] is False and "'"$tmp"'/secret" in s["reason"], s
'
head -c 32 /dev/urandom >"$tmp/other-secret" && chmod 600 "$tmp/other-secret"
run_rc 0 "env --json --addr (nothing there)" "$cli" env --json --addr 127.0.0.1:1 \
	--secret-file "$tmp/other-secret" --timeout-ms 2000
valid "env --json --addr (nothing there)" env "$tmp/out"
check "env --json --addr (nothing there)" '
s = doc["service"]
assert s["answering"] is False and "127.0.0.1:1" in s["reason"], s
'
run_rc 0 "caps --json, no service" "$cli" caps --json
valid "caps --json, no service" caps "$tmp/out"
check "caps --json, no service" '
assert doc["service"]["answering"] is False and "no service running" in doc["service"]["reason"]
assert doc["devices"] == F("dc_caps.json")["devices"]
assert doc["gpus"] == F("env.json")["gpus"]
'
run_rc 0 "caps" "$cli" caps
expect_grep "caps" '^  tcapgen0 +ffff:02:[0-9a-f]{2}\.[0-7] \(gen\)$' "$tmp/out"
expect_grep "caps" '^    rxq: CYCLIC/GPU, MANAGED_MEMPOOL/CPU, REGULAR/CPU; max burst [0-9]+, max packet [0-9]+$' "$tmp/out"
expect_grep "caps" '^    txq: REGULAR/CPU, REGULAR/GPU; max burst [0-9]+; checksum L3 yes, L4 yes; wait on time NATIVE$' "$tmp/out"
expect_grep "caps" '^  softdpu0 .*: no Ethernet queues$' "$tmp/out"
expect_grep "caps" '^UROM service: +not answering' "$tmp/out"
run_rc 0 "caps -d tcapw1 --json" "$cli" caps -d tcapw1 --json
valid "caps -d tcapw1 --json" caps "$tmp/out"
check "caps -d tcapw1 --json" 'assert [d["name"] for d in doc["devices"]] == ["tcapw1"]'
# negative paths
run_rc 2 "env --bogus" "$cli" env --bogus
run_rc 2 "env extra argument" "$cli" env extra
run_rc 2 "env --timeout-ms 0" "$cli" env --timeout-ms 0
run_rc 2 "env -d (caps only)" "$cli" env -d tcapgen0
run_rc 2 "env --json --bogus" "$cli" env --json --bogus
valid "env --json --bogus" error "$tmp/out"
run_rc 2 "caps --bogus" "$cli" caps --bogus
run_rc 1 "caps -d nosuch" "$cli" caps -d nosuch
expect_grep "caps -d nosuch" 'no device named nosuch' "$tmp/err"
run_rc 1 "caps --json -d nosuch" "$cli" caps --json -d nosuch
valid "caps --json -d nosuch" error "$tmp/out"
run_rc 0 "env --help" "$cli" env --help
expect_grep "env --help" '^Usage: softdpu env' "$tmp/out"
run_rc 0 "caps --help" "$cli" caps --help
expect_grep "caps --help" '^Usage: softdpu caps' "$tmp/out"

# ---- mpirun that is missing, hangs, or is not Open MPI's: reported, bounded ------------------
mkdir -p "$tmp/hang" "$tmp/other" "$tmp/none"
printf '#!/bin/sh\necho $$ >"%s"\nexec sleep 60\n' "$tmp/hang.pid" >"$tmp/hang/mpirun"
printf '#!/bin/sh\necho "HYDRA build details:"\n' >"$tmp/other/mpirun"
chmod +x "$tmp/hang/mpirun" "$tmp/other/mpirun"
start=$(date +%s)
run_rc 0 "env --json, mpirun hangs" env PATH="$tmp/hang:/usr/bin:/bin" "$cli" env --json
valid "env --json, mpirun hangs" env "$tmp/out"
check "env --json, mpirun hangs" '
m = doc["mpi"]
assert m["present"] is False and "did not finish within 5000 ms" in m["reason"], m
'
[ $(($(date +%s) - start)) -lt 30 ] || fail "env: a hanging mpirun held it $(($(date +%s) - start)) s"
hang_pid=$(cat "$tmp/hang.pid" 2>/dev/null)
[ -n "$hang_pid" ] || fail "env: the hanging mpirun never ran"
[ -n "$hang_pid" ] && kill -0 "$hang_pid" 2>/dev/null &&
	fail "env: the hanging mpirun (pid $hang_pid) was left running"
run_rc 0 "env --json, foreign mpirun" env PATH="$tmp/other:/usr/bin:/bin" "$cli" env --json
check "env --json, foreign mpirun" '
m = doc["mpi"]
assert m["present"] is False and "not Open MPI" in m["reason"] and m["output"] == "HYDRA build details:", m
'
run_rc 0 "env --json, no mpirun" env PATH="$tmp/none" "$cli" env --json
check "env --json, no mpirun" 'assert doc["mpi"] == {"present": False, "reason": "no mpirun on PATH"}'

# ---- with the test's own service ----------------------------------------------------------
run_rc 0 "service start" "$cli" service start --listen 127.0.0.1:0 --plugin-path "$plugin_dir"
run_rc 0 "service status --json" "$cli" service status --json
cp "$tmp/out" "$tmp/status.json"
check "service status --json" 'assert doc["running"] is True and len(doc["plugins"]) > 0, doc'
run_rc 0 "env --json, service" "$cli" env --json
valid "env --json, service" env "$tmp/out"
check "env --json, service" '
s, st = doc["service"], F("status.json")
assert s["answering"] is True, s
for k in ("version", "doca_api", "protocol", "pid", "listen", "run_dir"):
    assert s[k] == st[k], (k, s[k], st[k])
want = [{k: p[k] for k in ("name", "version", "id", "path")} for p in st["plugins"]]
assert s["plugins"] == want, (s["plugins"], want)
sos = sorted(os.path.splitext(f)[0] for f in os.listdir("'"$plugin_dir"'") if f.endswith(".so"))
assert sorted(os.path.splitext(os.path.basename(p["path"]))[0] for p in s["plugins"]) == sos, sos
'
run_rc 0 "caps --json, service" "$cli" caps --json
valid "caps --json, service" caps "$tmp/out"
check "caps --json, service" '
s, st = doc["service"], F("status.json")
assert s["answering"] is True and s["pid"] == st["pid"]
assert [(p["name"], p["version"], p["id"]) for p in s["plugins"]] == \
       [(p["name"], p["version"], p["id"]) for p in st["plugins"]], s["plugins"]
'
run_rc 0 "caps, service" "$cli" caps
expect_grep "caps, service" '^UROM service: +answering at 127\.0\.0\.1:[0-9]+ ' "$tmp/out"
run_rc 0 "env, service" "$cli" env
expect_grep "env, service" '^UROM service: +answering at 127\.0\.0\.1:[0-9]+ ' "$tmp/out"
# the wrong secret: not answering, and why
run_rc 0 "env --json, wrong secret" "$cli" env --json --secret-file "$tmp/other-secret"
valid "env --json, wrong secret" env "$tmp/out"
check "env --json, wrong secret" '
s = doc["service"]
assert s["answering"] is False and "secret" in s["reason"], s
'
run_rc 0 "service stop" "$cli" service stop
run_rc 3 "service status after stop" "$cli" service status
run_rc 0 "caps --json, service stopped" "$cli" caps --json
valid "caps --json, service stopped" caps "$tmp/out"
check "caps --json, service stopped" 'assert doc["service"]["answering"] is False'

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "all checks passed"
