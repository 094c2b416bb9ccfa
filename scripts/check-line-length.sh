#!/usr/bin/env bash
# Lines at most 120 characters in every tracked shell script and Markdown file, as in the TypeScript:
# eslint's max-len checks the TypeScript, and eslint reads no *.sh or *.md. Lists each longer line as
# FILE:LINE: LENGTH (in characters, under a UTF-8 locale) and exits 1 if there is any, else 0.
#
#   bash scripts/check-line-length.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C.UTF-8
readonly MAX=120
# An awk program: its $0 is awk's, not the shell's. It exits 1 once it printed a line.
# shellcheck disable=SC2016
readonly REPORT_LONG='length($0) > max {print FILENAME ":" FNR ": " length($0); long = 1} END {exit long}'
# -z: NUL-separated names, so git neither quotes nor splits any file name. xargs exits 123 when an
# awk run exited 1.
if ! git ls-files -z -- '*.sh' '*.md' | xargs -0 -r awk -v max="$MAX" "$REPORT_LONG"; then
  exit 1
fi
