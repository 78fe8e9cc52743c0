#!/usr/bin/env sh
# Cost of durable share state of an in-process Pier (never asserted): state bytes per accepted
# record (in order, and with 10% released), share-consume throughput with durable delivery counts
# on and off, and reopen time of 10,000 share-partitions.
#   bench/share-state.sh [records (100000)]
set -eu
cd "$(dirname "$0")/.."
CP_FILE=pier-testkit/target/bench.classpath
./mvnw -q -o -pl pier-testkit -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
exec java ${JAVA_OPTS:-} \
    -cp "pier-testkit/target/test-classes:pier-testkit/target/classes:$(cat "$CP_FILE")" \
    io.pier.bench.ShareStateBench "$@"
