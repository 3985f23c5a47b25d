#!/usr/bin/env bash
# docs/compat.md must be what scripts/gen-compat produces from this source tree and build.
# Usage: test_compat_table.sh <source root> <build root>. Exit 0 current, 1 stale, 77 when a
# tool it needs (python3, nm) is missing.
# SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

src=${1:?usage: $0 <source root> <build root>}
build=${2:?usage: $0 <source root> <build root>}
python=${PYTHON:-python3}

for tool in "$python" nm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool not found"
		exit 77
	fi
done

tmp=$(mktemp "${TMPDIR:-/tmp}/compat.XXXXXX.md")
trap 'rm -f "$tmp"' EXIT

"$python" "$src/scripts/gen-compat" --build "$build" --output "$tmp"
if ! diff -u "$src/docs/compat.md" "$tmp"; then
	echo "FAIL: docs/compat.md is stale: expected the lines marked +, which this build provides," >&2
	echo "      got the lines marked - in the committed file." >&2
	echo "      Regenerate it with: scripts/gen-compat --build $build" >&2
	exit 1
fi
echo "docs/compat.md is current"
