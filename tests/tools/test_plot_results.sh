#!/usr/bin/env bash
# bench/plot_results.py (issue 18) on the committed bench/RESULTS.md: every figure written into
# a fresh directory as a PNG carrying the script's marker; a second run overwrites its own files;
# a file of the same name it did not write is left byte for byte and the run still succeeds for
# the others. Skips (77) only where Debian's python3 has no matplotlib.
#   test_plot_results.sh <source root>
# SPDX-License-Identifier: BSD-3-Clause
set -u
root=${1:?usage: $0 <source root>}
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sdp-plot.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$py" "$root/bench/plot_results.py" --results "$root/bench/RESULTS.md" --out "$tmp/p" \
	>"$tmp/out" 2>&1
rc=$?
[ "$rc" = 77 ] && { cat "$tmp/out"; exit 77; }
[ "$rc" = 0 ] || { cat "$tmp/out"; fail "exit $rc"; }
for f in gpunetio_rx_threads gpunetio_rx_size gpunetio_tx urom_cmd_ratios; do
	p=$tmp/p/$f.png
	[ -s "$p" ] || fail "$f.png not written"
	[ "$(head -c 8 "$p" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$f.png is no PNG"
	grep -qa 'softdpu bench/plot_results.py' "$p" || fail "$f.png has no marker"
	grep -qx "$p" "$tmp/out" || fail "$f.png not reported"
done
# its own files are overwritten; a foreign one is not
echo "not a plot" >"$tmp/p/gpunetio_tx.png"
"$py" "$root/bench/plot_results.py" --results "$root/bench/RESULTS.md" --out "$tmp/p" \
	>"$tmp/out2" 2>&1 || { cat "$tmp/out2"; fail "second run failed"; }
[ "$(cat "$tmp/p/gpunetio_tx.png")" = "not a plot" ] || fail "a foreign file was overwritten"
grep -q 'was not written by this script' "$tmp/out2" || fail "the foreign file was not reported"
grep -qx "$tmp/p/gpunetio_rx_size.png" "$tmp/out2" || fail "its own file was not rewritten"
# a results file without the tables: exit 1, nothing written
printf '# nothing\n' >"$tmp/empty.md"
"$py" "$root/bench/plot_results.py" --results "$tmp/empty.md" --out "$tmp/q" >/dev/null 2>&1
[ $? = 1 ] || fail "a results file without tables did not fail"
echo "PASS: 4 figures from bench/RESULTS.md; a foreign file left alone"
