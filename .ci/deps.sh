#!/usr/bin/env bash
# `npm install`, only when node_modules was not installed from this package.json and package-lock.json yet: a
# check costs milliseconds, while `npm install` over a complete node_modules still takes 7-10 s here (it resolves
# the whole tree). The stamp holds the hash of both files as they were after the last successful install.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=node_modules/.edgefloor-installed
installed() { cat package.json package-lock.json 2>/dev/null | sha256sum | cut -d' ' -f1; }
if [ -f node_modules/.package-lock.json ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(installed)" ]; then exit 0; fi
npm install --no-audit --no-fund --loglevel=error
installed >"$stamp"
