#!/usr/bin/env bash
# Tracing a running VM: load the agent with jcmd, dump, stop; the program runs on.
source "$(dirname "$0")/../common.sh"
compile "$examples"/attach/Server.java
"$java" -cp "$OUT"/classes attach.Server "$OUT"/stop >"$OUT"/server.txt 2>&1 &
pid=$!
trap 'touch "$OUT"/stop; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	grep -q serving "$OUT"/server.txt && break
	sleep 0.1
done
cat "$OUT"/server.txt
# jcmd cuts an unquoted key=value at its first '=': quote the options.
echo "== jcmd $pid JVMTI.agent_load libjinst.so '\"trace=counts,include=attach.**,out=$OUT/server,log=$OUT/agent.log\"'"
"$jcmd" $pid JVMTI.agent_load "$agent" "\"trace=counts,include=attach.**,out=$OUT/server,log=$OUT/agent.log\""
sleep 1
echo "== jcmd $pid JVMTI.agent_load libjinst.so dump"
"$jcmd" $pid JVMTI.agent_load "$agent" dump
cp "$OUT"/server.tsv "$OUT"/dump.tsv
echo "== the counts so far ($OUT/dump.tsv)"
cat "$OUT"/dump.tsv
sleep 1
echo "== jcmd $pid JVMTI.agent_load libjinst.so stop"
"$jcmd" $pid JVMTI.agent_load "$agent" stop
echo "== the counts at stop ($OUT/server.tsv)"
cat "$OUT"/server.tsv
touch "$OUT"/stop
wait $pid
trap - EXIT
tail -1 "$OUT"/server.txt
echo "== the agent's log ($OUT/agent.log)"
cat "$OUT"/agent.log
