#!/usr/bin/env bash
# bench/ingest-junk.sh — what refusing hostile ingest bodies costs the server.
#
# It builds wnms, starts `wnms serve` on a fresh data directory (embedded
# SQLite, or the PostgreSQL in WNMS_DATABASE_URL), and POSTs CONCURRENT
# bodies at once to /V5/ingest/clientevents, each SIZE_MIB MiB of
# `[1,1,1,...]` (a JSON array whose elements are not records). It prints the
# status and time of each answer, the server's resident memory before, and
# its peak resident memory (VmHWM) after.
#
# Environment: CONCURRENT=8  SIZE_MIB=8  WNMS_ADDR=127.0.0.1:18480
#              KEEP=1 keeps the temporary directory.
# Needs: go, curl. Everything it starts is stopped on exit.
set -euo pipefail
CONCURRENT=${CONCURRENT:-8}
SIZE_MIB=${SIZE_MIB:-8}
ADDR=${WNMS_ADDR:-127.0.0.1:18480}
tmp=$(mktemp -d)
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	[[ ${KEEP:-} == 1 ]] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CGO_ENABLED=0 go build -o "$tmp/wnms" ./cmd/wnms
WNMS_BOOTSTRAP_KEY_ID=junk-bench WNMS_BOOTSTRAP_KEY_VALUE=junk-bench-value-0123456789 \
	"$tmp/wnms" serve --data "$tmp/data" --listen "$ADDR" --analytics-listen 127.0.0.1:0 --snmp-agent-listen off \
	--log-level warn >"$tmp/server.log" 2>&1 &
pid=$!
for _ in $(seq 300); do curl -sf "http://$ADDR/readyz" >/dev/null && break; sleep 0.1; done
curl -sf -c "$tmp/cookies" -H 'Content-Type: application/json' \
	-d '{"type":"apikeycredentials","keyId":"junk-bench","keyValue":"junk-bench-value-0123456789"}' \
	"http://$ADDR/new/webservice/login/key/bench/3600" >/dev/null
# SIZE_MIB MiB of [1,1,1,...]
python3 -c "import sys; n=${SIZE_MIB}*1024*1024//2; sys.stdout.write('[' + '1,'*(n-1) + '1]')" >"$tmp/junk.json"
echo "body: $(stat -c %s "$tmp/junk.json") bytes, $CONCURRENT at once"
echo "server RSS before: $(awk '/VmRSS/ {print $2, $3}' /proc/$pid/status)"
for i in $(seq "$CONCURRENT"); do
	curl -s -o /dev/null -w "answer $i: %{http_code} in %{time_total} s\n" -b "$tmp/cookies" \
		-H 'Content-Type: application/json' --data-binary "@$tmp/junk.json" \
		"http://$ADDR/new/webservice/V5/ingest/clientevents" &
done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
echo "server peak RSS (VmHWM): $(awk '/VmHWM/ {print $2, $3}' /proc/$pid/status)"
