#!/usr/bin/env bash
# cfn-lint on the synthesized templates: scripts/cfn-lint.sh [CDK_OUT_DIR] (default cdk.out).
# cfn-lint comes from PyPI into the project's .venv (created when missing; setup.sh --test uses the
# same venv), so it works on a fresh machine with python3-venv. Exit code: cfn-lint's (errors fail;
# warnings and informational findings are printed but do not fail).
set -euo pipefail
cd "$(dirname "$0")/.."
out_dir="${1:-cdk.out}"
venv=.venv
# Serialize venv creation/installs with other scripts (setup.sh, moto.sh) running at the same time.
exec 9>/tmp/aurora-bench-venv.lock
flock 9
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if [ ! -x "$venv/bin/cfn-lint" ]; then
  "$venv/bin/pip" install -q --disable-pip-version-check cfn-lint
fi
flock -u 9
shopt -s nullglob
templates=("$out_dir"/*.template.json)
if [ ${#templates[@]} -eq 0 ]; then
  echo "cfn-lint: no templates in $out_dir (run npx cdk synth first)" >&2
  exit 2
fi
# Errors fail the run; warnings are reported (cfn-lint exit codes: 2 = error, 4 = warning, 8 = info).
set +e
"$venv/bin/cfn-lint" --format parseable "${templates[@]}"
code=$?
set -e
if [ $((code & 2)) -ne 0 ] || [ $((code & 1)) -ne 0 ]; then
  echo "cfn-lint: errors in ${templates[*]}" >&2
  exit 1
fi
echo "cfn-lint: no errors in ${templates[*]}"
