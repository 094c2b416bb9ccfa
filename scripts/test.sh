#!/usr/bin/env bash
# One command on a fresh machine: set everything up, then run every test (unit, integration with
# real MariaDB and sysbench, moto-backed AWS tests, CDK synth + cdk-nag + cfn-lint, end to end).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
echo "test: typecheck"
npx tsc -p tsconfig.json --noEmit
echo "test: asl-validator"
npx asl-validator --json-path state-machines/benchmark.asl.json
mkdir -p test-output
set +e
npx jest --ci --json --outputFile=test-output/jest.json "$@"
code=$?
set -e
# A plain closing line CI can read whatever the runner.
node -e '
const r = require("./test-output/jest.json");
const skipped = r.numPendingTests + r.numTodoTests;
console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
if (r.numTotalTests === 0) { console.error("no test ran"); process.exit(1); }
'
exit $code
