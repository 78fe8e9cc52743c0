#!/usr/bin/env sh
# Cost of durable share state of an in-process Pier (never asserted): state bytes per accepted
# record (in order, and with 10% released), share-consume throughput with durable delivery counts
# on and off, and reopen time of 10,000 share-partitions.
#   bench/share-state.sh [records (100000)]
exec "$(dirname "$0")/testkit-main.sh" io.pier.bench.ShareStateBench "$@"
