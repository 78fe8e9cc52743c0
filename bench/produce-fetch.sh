#!/usr/bin/env sh
# Produce/fetch throughput of an in-process Pier, durable and none modes (never asserted).
#   bench/produce-fetch.sh [records (2000000)] [record bytes (100)] [modes (durable,none)]
# Extra JVM options: JAVA_OPTS="-Xmx1g" bench/produce-fetch.sh
exec "$(dirname "$0")/testkit-main.sh" io.pier.bench.ProduceFetchBench "$@"
