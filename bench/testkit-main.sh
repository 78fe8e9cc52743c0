#!/usr/bin/env sh
# Runs a main class of pier-testkit's test sources (the in-process benchmarks) on their classpath.
#   bench/testkit-main.sh CLASS [args...]     extra JVM options: JAVA_OPTS
set -eu
cd "$(dirname "$0")/.."
MAIN="$1"
shift
CP_FILE=pier-testkit/target/bench.classpath
./mvnw -q -o -pl pier-testkit -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test
exec java ${JAVA_OPTS:-} \
    -cp "pier-testkit/target/test-classes:pier-testkit/target/classes:$(cat "$CP_FILE")" \
    "$MAIN" "$@"
