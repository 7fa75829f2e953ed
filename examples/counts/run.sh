#!/usr/bin/env bash
# Exact call counts of the bundled example (examples/hello): trace=counts.
source "$(dirname "$0")/../common.sh"
compile "$examples"/hello/Hello.java
echo "== java -agentpath:libjinst.so=trace=counts,include=hello.**,out=$OUT/hello hello.Hello"
"$java" -agentpath:"$agent"=trace=counts,include=hello.**,out="$OUT"/hello,log="$OUT"/agent.log \
	-cp "$OUT"/classes hello.Hello
echo "== $OUT/hello.tsv: class, method, descriptor, calls (sorted by name)"
cat "$OUT"/hello.tsv
echo "== the most called"
sort -t$'\t' -k4,4nr "$OUT"/hello.tsv | awk 'NR <= 3'
echo "== the agent's log ($OUT/agent.log)"
cat "$OUT"/agent.log
