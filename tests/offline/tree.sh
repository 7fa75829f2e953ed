#!/bin/sh
# instrument_tree's calling convention (OUT IN) on `jinst instrument --trace`,
# so that tests/instrument/run_standalone.sh runs the runtime without the
# agent on what the command writes: JINST names the jinst binary.
exec "$JINST" instrument --trace --quiet -j 1 "$2" -o "$1"
