#!/usr/bin/env sh
# Produce/fetch throughput of an in-process Pier, durable and none modes (never asserted).
#   bench/produce-fetch.sh [records (2000000)] [record bytes (100)] [modes (durable,none)]
# Extra JVM options: JAVA_OPTS="-Xmx1g" bench/produce-fetch.sh
set -eu
cd "$(dirname "$0")/.."
CP_FILE=pier-testkit/target/bench.classpath
./mvnw -q -o -pl pier-testkit -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
exec java ${JAVA_OPTS:-} \
    -cp "pier-testkit/target/test-classes:pier-testkit/target/classes:$(cat "$CP_FILE")" \
    io.pier.bench.ProduceFetchBench "$@"
