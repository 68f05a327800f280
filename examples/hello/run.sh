#!/usr/bin/env bash
# Runs the example: starts hello-server, runs hello-client against it, stops the server, and
# exits with the client's status. Called by `make run` with the directory of the binaries.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$root/bin}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
cd "$root" || exit 1 # the configurations' paths are the repository's
log=$(mktemp)
"$bin/hello-server" -config examples/hello/server.toml >"$log" 2>&1 &
srv=$!
trap 'kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do
  grep -q listening "$log" && break
  kill -0 "$srv" 2>/dev/null || { cat "$log"; echo "hello-server exited"; exit 1; }
  sleep 0.05
done
cat "$log"
"$bin/hello-client" -config examples/hello/client.toml
rc=$?
kill -INT "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
cat "$log" | grep -v listening
exit $rc
