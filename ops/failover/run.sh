#!/usr/bin/env bash
# The failover drill of docs/failover.md, on this machine and loopback only: etcd, a 2-node
# Patroni cluster with synchronous_mode on (PostgreSQL from Debian's packages), HAProxy checking
# Patroni's REST /primary, and the service with DATABASE_URL at HAProxy. drill.ts then runs a
# steady load, a `patronictl switchover`, then a kill -9 of the primary's postgres under load,
# and prints the figures. Everything it started is stopped and its directory removed on exit.
#
# Needs: apt-get install patroni etcd-server etcd-client haproxy (and postgresql-15), npm ci.
# Usage: ops/failover/run.sh            (run from anywhere; as root, the servers run as postgres)
#        KEEP_LOGS=<dir> ops/failover/run.sh   also copies the logs of etcd, Patroni, HAProxy and
#        the service there before the cleanup
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
node="$root/node_modules/.bin/node"
pg_bin="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}"

for tool in etcd etcdctl patroni patronictl haproxy curl "$pg_bin/postgres"; do
  command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install patroni etcd-server etcd-client haproxy curl)" >&2; exit 1; }
done
[ -x "$node" ] || { echo "missing: $node (run npm ci)" >&2; exit 1; }

dir="$(mktemp -d /tmp/sms-failover-drill-XXXXXX)"
as_postgres=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$dir"
  as_postgres=(runuser -u postgres --)
fi

pids=()
cleanup() {
  set +e
  # the service, HAProxy and etcd at once; Patroni stops its PostgreSQL on SIGTERM
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  if [ -n "${KEEP_LOGS:-}" ]; then
    mkdir -p "$KEEP_LOGS"
    cp "$dir"/*.log "$KEEP_LOGS"/ 2>/dev/null
    for member in "$dir"/node*/; do cp -r "$member/data/log" "$KEEP_LOGS/$(basename "$member")-postgres-log" 2>/dev/null; done
  fi
  # a PostgreSQL that outlived its Patroni
  for pidfile in "$dir"/node*/data/postmaster.pid; do
    [ -f "$pidfile" ] && kill -9 "$(head -1 "$pidfile")" 2>/dev/null
  done
  rm -rf "$dir"
}
trap cleanup EXIT

# free loopback ports, one per line
ports=($("$node" -e '
  const net = require("node:net")
  const one = () => new Promise((done) => { const s = net.createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => done(p)) }) })
  ;(async () => { const seen = new Set(); while (seen.size < 9) seen.add(await one()); console.log([...seen].join("\n")) })()
'))
etcd_port=${ports[0]} etcd_peer=${ports[1]} haproxy_port=${ports[2]} service_port=${ports[3]}
pg_port_1=${ports[4]} pg_port_2=${ports[5]} rest_port_1=${ports[6]} rest_port_2=${ports[7]}

wait_for() { # seconds, description, command...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq 1 $((seconds * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "timed out after ${seconds}s waiting for $what" >&2
  tail -n 30 "$dir"/*.log >&2 || true
  exit 1
}

echo "== etcd on 127.0.0.1:$etcd_port"
"${as_postgres[@]}" etcd --name drill --data-dir "$dir/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
  --initial-cluster "drill=http://127.0.0.1:$etcd_peer" >"$dir/etcd.log" 2>&1 &
pids+=($!)
wait_for 30 "etcd" env ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$etcd_port" endpoint health

member() { # name pg_port rest_port
  mkdir -p "$dir/$1"
  sed -e "s|@NAME@|$1|g" -e "s|@PG_PORT@|$2|g" -e "s|@REST_PORT@|$3|g" -e "s|@ETCD_PORT@|$etcd_port|g" \
    -e "s|@DIR@|$dir|g" -e "s|@PG_BIN@|$pg_bin|g" "$here/patroni.yml.in" >"$dir/$1.yml"
  [ "${#as_postgres[@]}" -gt 0 ] && chown -R postgres: "$dir/$1" "$dir/$1.yml"
  "${as_postgres[@]}" patroni "$dir/$1.yml" >"$dir/$1.log" 2>&1 &
  pids+=($!)
}
echo "== Patroni node1 (PostgreSQL 127.0.0.1:$pg_port_1, REST :$rest_port_1), node2 (127.0.0.1:$pg_port_2, :$rest_port_2)"
member node1 "$pg_port_1" "$rest_port_1"
wait_for 90 "node1 primary" curl -sf "http://127.0.0.1:$rest_port_1/primary"
member node2 "$pg_port_2" "$rest_port_2"
wait_for 120 "node2 synchronous standby" curl -sf "http://127.0.0.1:$rest_port_2/sync"
patronictl -c "$dir/node1.yml" list

echo "== HAProxy on 127.0.0.1:$haproxy_port (checks GET /primary on both members)"
sed -e "s|@HAPROXY_PORT@|$haproxy_port|g" -e "s|@PG_PORT_1@|$pg_port_1|g" -e "s|@PG_PORT_2@|$pg_port_2|g" \
  -e "s|@REST_PORT_1@|$rest_port_1|g" -e "s|@REST_PORT_2@|$rest_port_2|g" "$here/haproxy.cfg.in" >"$dir/haproxy.cfg"
haproxy -f "$dir/haproxy.cfg" -db >"$dir/haproxy.log" 2>&1 &
pids+=($!)
wait_for 30 "HAProxy" "$pg_bin/pg_isready" -h 127.0.0.1 -p "$haproxy_port"

echo "== the service on 127.0.0.1:$service_port, DATABASE_URL at HAProxy"
admin_token="drill-$(date +%s)-$RANDOM"
# exec: the pid recorded is the service's own, so that the cleanup stops it
(cd "$root" && exec env -i PATH="$PATH" PORT="$service_port" HOST=127.0.0.1 \
  DATABASE_URL="postgres://postgres:postgres-drill@127.0.0.1:$haproxy_port/postgres" \
  SMS_ADMIN_TOKEN="$admin_token" SMS_SIMULATOR_RECEIPT_DELAY_MS=500 LOG_LEVEL=warn \
  "$node" src/main.ts >"$dir/service.log" 2>&1) &
pids+=($!)
wait_for 60 "the service" curl -sf "http://127.0.0.1:$service_port/ready"

echo "== drill: load, switchover, kill -9 of the primary's postgres"
env SERVICE_URL="http://127.0.0.1:$service_port" SMS_ADMIN_TOKEN="$admin_token" \
  PATRONI_CONFIG="$dir/node1.yml" \
  FAILOVER_MEMBERS="node1=http://127.0.0.1:$rest_port_1=$dir/node1/data,node2=http://127.0.0.1:$rest_port_2=$dir/node2/data" \
  "$node" "$here/drill.ts"
patronictl -c "$dir/node1.yml" list
