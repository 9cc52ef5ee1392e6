#!/usr/bin/env bash
# bench/simulate-live.sh — does the server's ingest keep up with a live
# simulated network of 5,000 clients?
#
# It builds wnms into a temporary directory, starts `wnms serve` on a fresh
# data directory (embedded SQLite, or the PostgreSQL in WNMS_DATABASE_URL),
# and runs `wnms simulate --live` against it: first a backfill of DAYS days,
# then live rounds, one a minute, each sending what the network did since
# the last (client events, 5-minute statistics, a heartbeat of every AP).
# After LIVE_MINUTES of live rounds it stops both and prints:
#   - each live round: records sent and how long the server took for them;
#   - the server's CPU (user + system) during the live rounds, as a share of
#     one core, and its resident memory at the end.
# The server keeps up when every round is taken in well under a minute.
#
# Environment:
#   CLIENTS=5000 SITES=10 FLOORS=3 APS_PER_FLOOR=8   the network (240 APs)
#   DAYS=1            backfill before the live rounds
#   LIVE_MINUTES=10   live rounds to measure
#   TIMEZONE=         the sites' time zone; default: one where it is now a
#                     weekday around noon (busy hours)
#   WNMS_ADDR=127.0.0.1:18080  ANALYTICS_ADDR=127.0.0.1:18081
#   WNMS_DATABASE_URL PostgreSQL instead of SQLite (a throw-away database)
#   KEEP=1            keep the temporary directory (binary, logs)
#
# Needs: go, curl, jq. Everything it starts is stopped on exit.
set -euo pipefail

CLIENTS=${CLIENTS:-5000}
SITES=${SITES:-10}
FLOORS=${FLOORS:-3}
APS_PER_FLOOR=${APS_PER_FLOOR:-8}
DAYS=${DAYS:-1}
LIVE_MINUTES=${LIVE_MINUTES:-10}
WNMS_ADDR=${WNMS_ADDR:-127.0.0.1:18080}
ANALYTICS_ADDR=${ANALYTICS_ADDR:-127.0.0.1:18081}

cd "$(dirname "${BASH_SOURCE[0]}")/.."
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ ${KEEP:-} == 1 ]]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# A zone where it is now between 11:00 and 14:00 on a weekday, so that the
# offices are full.
if [[ -z ${TIMEZONE:-} ]]; then
	for tz in Asia/Tokyo Asia/Kolkata Europe/Berlin America/New_York America/Los_Angeles Pacific/Auckland; do
		h=$(TZ=$tz date +%H) d=$(TZ=$tz date +%u)
		if ((10#$h >= 11 && 10#$h < 14 && d <= 5)); then TIMEZONE=$tz; break; fi
	done
	TIMEZONE=${TIMEZONE:-UTC}
fi

go build -o "$tmp/wnms" ./cmd/wnms
key_id=wnms-live-bench key_value=$(head -c 24 /dev/urandom | base64 | tr '+/' '-_')
WNMS_BOOTSTRAP_KEY_ID=$key_id WNMS_BOOTSTRAP_KEY_VALUE=$key_value \
	"$tmp/wnms" serve --data "$tmp/data" --listen "$WNMS_ADDR" --analytics-listen "$ANALYTICS_ADDR" \
	--snmp-agent-listen off ${WNMS_DATABASE_URL:+--database-url "$WNMS_DATABASE_URL"} >"$tmp/serve.log" 2>&1 &
server=$!
pids+=("$server")
for ((i = 0; i < 100; i++)); do
	curl -sf -o /dev/null "http://$WNMS_ADDR/healthz" && break
	sleep 0.2
done

echo "== $CLIENTS clients, $((SITES * FLOORS * APS_PER_FLOOR)) APs, $DAYS day(s) of backfill, $TIMEZONE, ${WNMS_DATABASE_URL:+PostgreSQL}${WNMS_DATABASE_URL:-SQLite}"
t0=$(date +%s)
"$tmp/wnms" simulate --url "http://$WNMS_ADDR" --key-id "$key_id" --key-value "$key_value" \
	--clients "$CLIENTS" --sites "$SITES" --floors "$FLOORS" --aps-per-floor "$APS_PER_FLOOR" \
	--days "$DAYS" --timezone "$TIMEZONE" --live >"$tmp/simulate.out" 2>"$tmp/simulate.err" &
sim=$!
pids+=("$sim")

# The first live line ends the backfill.
until grep -q "wnms simulate: live to" "$tmp/simulate.err"; do
	kill -0 "$sim" 2>/dev/null || { cat "$tmp/simulate.err"; exit 1; }
	sleep 1
done
echo "backfill: $(($(date +%s) - t0)) s"

cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; } # clock ticks, user + system
hz=$(getconf CLK_TCK)
c0=$(cpu) w0=$(date +%s.%N)
while (($(grep -c "wnms simulate: live to" "$tmp/simulate.err") < LIVE_MINUTES + 1)); do
	kill -0 "$sim" 2>/dev/null || { cat "$tmp/simulate.err"; exit 1; }
	sleep 1
done
c1=$(cpu) w1=$(date +%s.%N)
grep "wnms simulate: live to" "$tmp/simulate.err" | tail -n "$LIVE_MINUTES"
grep -v "wnms simulate: live to" "$tmp/simulate.err" || true
awk -v c="$((c1 - c0))" -v hz="$hz" -v w0="$w0" -v w1="$w1" \
	'BEGIN { printf "server CPU during the live rounds: %.1f%% of one core\n", 100 * c / hz / (w1 - w0) }'
echo "server resident memory: $(awk '/VmRSS/ {print $2, $3}' "/proc/$server/status")"
grep "wnms simulate: live to" "$tmp/simulate.err" | tail -n "$LIVE_MINUTES" |
	sed -E 's/.* in ([0-9.]+)(m?s)$/\1 \2/' |
	awk '{ v = ($2 == "ms") ? $1 / 1000 : $1; if (v > m) m = v; s += v } END { printf "round taken in: mean %.2f s, longest %.2f s (of 60 s)\n", s / NR, m }'
