#!/usr/bin/env bash
# softdpu-selftest end to end: every mode answers, the facts agree between the text and the JSON
# output, --vars lists every variable, bad usage exits 2.
#   test_selftest.sh <path to softdpu-selftest>
# SPDX-License-Identifier: BSD-3-Clause
set -uo pipefail

tool=$1
fails=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_selftest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}
# expect_rc <want> <what> <command...>: output into $tmp/out and $tmp/err.
expect_rc() {
	local want=$1 what=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$what: expected exit status $want, got $rc; stderr:"
		sed 's/^/    /' "$tmp/err" >&2
	fi
}
expect_grep() {
	local what=$1 pattern=$2 file=$3
	grep -Eq -- "$pattern" "$file" || fail "$what: expected a line matching '$pattern', got:
$(sed 's/^/    /' "$file")"
}

# Plain text: versions and the always-present host device.
expect_rc 0 "text" "$tool"
cp "$tmp/out" "$tmp/text"
expect_grep "text" '^softdpu version: +[0-9]+\.[0-9]+\.[0-9]+' "$tmp/text"
expect_grep "text" '^DOCA API level: +3\.3\.0 ' "$tmp/text"
expect_grep "text" '^library runtime: +3\.3\.0 ' "$tmp/text"
expect_grep "text" '^devices: +[1-9][0-9]*$' "$tmp/text"
expect_grep "text" '^  softdpu0 +iface [^ ]+ +pci [0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] ' \
	"$tmp/text"
[ -s "$tmp/err" ] && fail "text: expected nothing on stderr, got: $(cat "$tmp/err")"

# An alias declared through the environment shows up as one more device.
expect_rc 0 "alias" env SOFTDPU_HOST_DEV_ALIASES="mlx5_$$" "$tool"
expect_grep "alias" "^  mlx5_$$ " "$tmp/out"

# JSON: the same facts, in a document a JSON parser accepts.
expect_rc 0 "json" "$tool" --json
cp "$tmp/out" "$tmp/json"
if command -v python3 >/dev/null 2>&1; then
	if ! python3 - "$tmp/json" "$tmp/text" >"$tmp/py" 2>&1 <<'PY'; then
import json, re, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
for key in ("softdpu_version", "doca_api_level", "runtime_version", "devices"):
    assert key in doc, "no %r in the JSON output" % key
assert doc["doca_api_level"] == "3.3.0", doc["doca_api_level"]
m = re.search(r"^softdpu version: +(\S+)", text, re.M)
assert m and m.group(1) == doc["softdpu_version"], "text and JSON disagree on the version"
names = [d["ibdev_name"] for d in doc["devices"]]
assert "softdpu0" in names, "softdpu0 missing from %r" % names
n = int(re.search(r"^devices: +(\d+)", text, re.M).group(1))
assert n == len(names), "text says %d devices, JSON lists %d" % (n, len(names))
for d in doc["devices"]:
    for key in ("ibdev_name", "iface_name", "pci_addr", "pci_func_type"):
        assert key in d, "device without %r: %r" % (key, d)
PY
		fail "json: $(cat "$tmp/py")"
	fi
else
	expect_grep "json" '"ibdev_name": "softdpu0"' "$tmp/json"
fi

# --vars: every variable with its help, current value shown when set.
expect_rc 0 "vars" env SOFTDPU_DEVICE_CONFIG="/nonexistent/$$.conf" "$tool" --vars
for v in DOCA_LOG_LEVEL SOFTDPU_PROVIDER_PATH SOFTDPU_DEVICES SOFTDPU_DEVICE_CONFIG \
	SOFTDPU_HOST_DEV_ALIASES; do
	expect_grep "vars" "$v" "$tmp/out"
done
expect_grep "vars" "/nonexistent/$$\.conf" "$tmp/out"

# Usage.
expect_rc 0 "help" "$tool" --help
expect_grep "help" '--json' "$tmp/out"
expect_rc 2 "unknown option" "$tool" --no-such-option
expect_grep "unknown option" 'Usage:' "$tmp/err"
expect_rc 2 "extra argument" "$tool" extra
expect_rc 2 "--json with --vars" "$tool" --json --vars

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "softdpu-selftest: all checks passed"
