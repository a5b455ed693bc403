#!/usr/bin/env bash
#! Runs load.py against a fresh copy of a PostgreSQL scale store, so measurements alternate
#! binaries on equal stores (docs/PERFORMANCE.md, "`pitwall serve` at scale").
#
# usage: tests/eval/serve/pg_load.sh PITWALL_BINARY [load.py args...]
# env:   PG (default postgres://postgres@127.0.0.1:5544), TEMPLATE (default scale), PSQL (default psql)
# The copy is made with STRATEGY FILE_COPY (the default WAL_LOG writes the whole 3.6 GB store
# to the log and set off checkpoints during the next measurement), then dropped.
set -euo pipefail
bin=$1
shift
pg=${PG:-postgres://postgres@127.0.0.1:5544}
template=${TEMPLATE:-scale}
psql=${PSQL:-psql}
db="load_$$"
"$psql" "$pg/postgres" -qc "CREATE DATABASE $db TEMPLATE $template STRATEGY FILE_COPY"
trap '"$psql" "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db"' EXIT
"$psql" "$pg/postgres" -qc "CHECKPOINT"
sync
python3 "$(dirname "$0")/load.py" --pitwall "$bin" --store "$pg/$db" --psql "$psql" "$@"
