#!/usr/bin/env bash
# bench/users-current.sh — how fast wnms answers an authenticated call,
# compared with a bare net/http server on the same machine.
#
# It builds wnms, bench/bare and bench/login into a temporary directory,
# starts `wnms serve` on a fresh data directory (embedded SQLite, or the
# PostgreSQL in WNMS_DATABASE_URL when that is set), logs in with an API key,
# and then runs wrk (-t2 -c64) in alternating rounds against
#   bare: a plain net/http server answering a fixed 1 KiB JSON body, and
#   wnms: GET /new/webservice/V5/users/current with the session cookie
#         (session lookup in the store + role check + JSON of the user).
# It prints the rate and latency of wnms in the first second after it said
# ready, then requests/s of every round, the median of each and the ratio
# wnms/bare, then the latency of sequential API-key logins over one
# keep-alive connection (p50/p90/p99).
#
# Environment:
#   ROUNDS=5          alternating rounds (each runs bare, then wnms)
#   DURATION=10       seconds per wrk run
#   WARMUP=2          seconds of unrecorded warm-up for each server
#   THREADS=2 CONNS=64  wrk threads and connections
#   LOGINS=500        sequential key logins for the latency figure
#   WNMS_ADDR=127.0.0.1:18080  ANALYTICS_ADDR=127.0.0.1:18081  BARE_ADDR=127.0.0.1:18090
#   WNMS_DATABASE_URL PostgreSQL instead of SQLite (use a throw-away database:
#                     the run adds a SUPERUSER API user "wnms-bench" and sessions)
#   KEEP=1            keep the temporary directory (binaries, server logs)
#
# Needs: go, curl, wrk (apt-get install wrk). Everything it starts is
# stopped on exit.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
THREADS=${THREADS:-2}
CONNS=${CONNS:-64}
LOGINS=${LOGINS:-500}
WNMS_ADDR=${WNMS_ADDR:-127.0.0.1:18080}
ANALYTICS_ADDR=${ANALYTICS_ADDR:-127.0.0.1:18081}
BARE_ADDR=${BARE_ADDR:-127.0.0.1:18090}

die() { echo "users-current: $*" >&2; exit 1; }

command -v wrk >/dev/null || die "wrk is not installed: apt-get install -y wrk"
command -v curl >/dev/null || die "curl is not installed: apt-get install -y curl"
command -v go >/dev/null || die "go is not on PATH"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wnms-bench.XXXXXX")
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [[ ${KEEP:-} == 1 ]]; then
		echo "users-current: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== building into $tmp/bin"
(cd "$repo" && go build -o "$tmp/bin/wnms" ./cmd/wnms &&
	go build -o "$tmp/bin/bare" ./bench/bare &&
	go build -o "$tmp/bin/login" ./bench/login)

# wait_http URL PID: wait until URL answers, failing if PID dies first.
wait_http() {
	local url=$1 pid=$2 i
	for ((i = 0; i < 300; i++)); do
		if curl -fs -o /dev/null "$url"; then
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Only the variables this script means to pass reach wnms: a WNMS_* left in
# the caller's environment (WNMS_LISTEN, WNMS_TLS...) must not change what
# is measured.
serve_env=(env -u WNMS_LISTEN -u WNMS_ANALYTICS_LISTEN -u WNMS_DATA -u WNMS_TLS -u WNMS_TLS_CERT -u WNMS_TLS_KEY
	-u WNMS_LOG_LEVEL -u WNMS_BOOTSTRAP_KEY_ID -u WNMS_BOOTSTRAP_KEY_VALUE)

key_id="bench-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
key_value=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
store="SQLite in a fresh data directory"
if [[ -n ${WNMS_DATABASE_URL:-} ]]; then
	# Never print the password: show the URL without its user information.
	store="PostgreSQL at $(sed -E 's#://[^@/]*@#://#' <<<"$WNMS_DATABASE_URL") (from WNMS_DATABASE_URL; not a fresh database)"
	echo "== note: WNMS_DATABASE_URL is set; measuring on PostgreSQL, not SQLite"
	# The database may already hold users, in which case no bootstrap key
	# is made: make a key with the CLI instead.
	out=$("${serve_env[@]}" "$tmp/bin/wnms" apikey create --login wnms-bench --role SUPERUSER --data "$tmp/data")
	key_id=$(sed -n 's/.*"keyId":"\([^"]*\)".*/\1/p' <<<"$out")
	key_value=$(sed -n 's/.*"keyValue":"\([^"]*\)".*/\1/p' <<<"$out")
	[[ -n $key_id && -n $key_value ]] || die "wnms apikey create printed no key: $out"
fi

echo "== starting wnms on $WNMS_ADDR ($store)"
"${serve_env[@]}" WNMS_BOOTSTRAP_KEY_ID="$key_id" WNMS_BOOTSTRAP_KEY_VALUE="$key_value" \
	"$tmp/bin/wnms" serve --data "$tmp/data" --listen "$WNMS_ADDR" --analytics-listen "$ANALYTICS_ADDR" \
	>"$tmp/wnms.out" 2>"$tmp/wnms.log" &
pids+=($!)
wnms_pid=$!
if ! wait_http "http://$WNMS_ADDR/readyz" "$wnms_pid"; then
	tail -n 20 "$tmp/wnms.log" >&2
	die "wnms did not become ready on $WNMS_ADDR (port taken? set WNMS_ADDR)"
fi

echo "== starting bare on $BARE_ADDR"
"$tmp/bin/bare" -listen "$BARE_ADDR" 2>"$tmp/bare.log" &
pids+=($!)
bare_pid=$!
wait_http "http://$BARE_ADDR/" "$bare_pid" || die "bare did not start on $BARE_ADDR (port taken? set BARE_ADDR)"

base="http://$WNMS_ADDR/new/webservice"
login_body=$(printf '{"type":"apikeycredentials","keyId":"%s","keyValue":"%s"}' "$key_id" "$key_value")
code=$(curl -s -o "$tmp/login.json" -D "$tmp/login.headers" -w '%{http_code}' \
	-H 'Content-Type: application/json' -d "$login_body" "$base/login/key/bench/86400")
[[ $code == 200 ]] || die "login answered $code: $(cat "$tmp/login.json")"
session=$(sed -n 's/^[Ss]et-[Cc]ookie: JSESSIONID=\([^;]*\).*/\1/p' "$tmp/login.headers" | tr -d '\r')
[[ -n $session ]] || die "login set no JSESSIONID cookie"
cookie="Cookie: JSESSIONID=$session"
wnms_url="$base/V5/users/current"
size=$(curl -fs -H "$cookie" "$wnms_url" | wc -c) || die "GET users/current with the session failed"
echo "== wnms GET /V5/users/current answers $size bytes; bare answers $(curl -fs "http://$BARE_ADDR/" | wc -c) bytes"

# run_wrk NAME SECONDS URL [wrk args...]: prints requests/s; fails on any
# error or non-2xx answer, which would make the figure meaningless.
run_wrk() {
	local name=$1 secs=$2 url=$3 out rps
	shift 3
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"${secs}s" "$@" "$url") || die "wrk against $name failed: $out"
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		die "wrk against $name saw errors:"$'\n'"$out"
	fi
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	[[ -n $rps ]] || die "no Requests/sec in wrk output: $out"
	echo "$rps"
}

# The first second after /readyz said ready (and one login): the same
# load, with its latency, before anything else warmed the server.
out=$(wrk -t"$THREADS" -c"$CONNS" -d1s --latency -H "$cookie" "$wnms_url") || die "wrk failed: $out"
grep -qE 'Non-2xx|Socket errors' <<<"$out" && die "wrk saw errors in the first second:"$'\n'"$out"
printf 'first second after ready: wnms users/current %.0f req/s, p50 %s, p99 %s\n' \
	"$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")" "$(awk '$1 == "50%" {print $2}' <<<"$out")" "$(awk '$1 == "99%" {print $2}' <<<"$out")"

if ((WARMUP > 0)); then
	echo "== warm-up ${WARMUP}s each"
	run_wrk bare "$WARMUP" "http://$BARE_ADDR/" >/dev/null
	run_wrk wnms "$WARMUP" "$wnms_url" -H "$cookie" >/dev/null
fi

echo "== $ROUNDS rounds, wrk -t$THREADS -c$CONNS -d${DURATION}s, alternating"
bare_all=()
wnms_all=()
for ((r = 1; r <= ROUNDS; r++)); do
	b=$(run_wrk bare "$DURATION" "http://$BARE_ADDR/")
	w=$(run_wrk wnms "$DURATION" "$wnms_url" -H "$cookie")
	bare_all+=("$b")
	wnms_all+=("$w")
	printf 'round %d: bare %10.0f req/s   wnms users/current %10.0f req/s   (%.2f)\n' "$r" "$b" "$w" \
		"$(awk -v w="$w" -v b="$b" 'BEGIN {print w / b}')"
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
bm=$(median "${bare_all[@]}")
wm=$(median "${wnms_all[@]}")
printf 'median: bare %.0f req/s, wnms users/current %.0f req/s, ratio wnms/bare %.3f\n' "$bm" "$wm" \
	"$(awk -v w="$wm" -v b="$bm" 'BEGIN {print w / b}')"

echo "== API-key login latency: $LOGINS sequential logins over one keep-alive connection"
"$tmp/bin/login" -url "$base" -key-id "$key_id" -key-value "$key_value" -n "$LOGINS"
