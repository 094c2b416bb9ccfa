# Sourced by the scripts: .node/bin/node, the Node.js major the Lambda functions deploy on, which
# scripts/setup.sh links, comes first on PATH, so node, npm and npx run on it.
# shellcheck shell=bash
if [ -x "$PWD/.node/bin/node" ]; then
  case ":$PATH:" in *":$PWD/.node/bin:"*) ;; *) export PATH="$PWD/.node/bin:$PATH" ;; esac
fi
