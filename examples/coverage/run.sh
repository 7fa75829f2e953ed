#!/usr/bin/env bash
# Coverage: at launch, then attached to a running VM (coverage on, dump,
# stop), and `jinst report` to a console summary, HTML and XML.
source "$(dirname "$0")/../common.sh"
jinst=${JINST:-$(dirname "$(dirname "$agent")")/bin/jinst}
compile "$examples"/coverage/Grades.java

echo "== java -agentpath:libjinst.so=coverage,include=grades.**,out=$OUT/launch grades.Grades"
"$java" -agentpath:"$agent"=coverage,include=grades.**,out="$OUT"/launch,log="$OUT"/launch.log \
	-cp "$OUT"/classes grades.Grades
echo "== jinst report $OUT/launch.cov --classfiles ... --html $OUT/html --xml $OUT/launch.xml"
"$jinst" report "$OUT"/launch.cov --classfiles "$OUT"/classes --sourcefiles "$examples"/coverage \
	--name grades --html "$OUT"/html --xml "$OUT"/launch.xml
"$jinst" report "$OUT"/launch.cov --classfiles "$OUT"/classes --name grades
echo "HTML report: $OUT/html/index.html"

"$java" -cp "$OUT"/classes grades.Grades "$OUT"/stop >"$OUT"/server.txt 2>&1 &
pid=$!
trap 'touch "$OUT"/stop; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
	grep -q grading "$OUT"/server.txt && break
	sleep 0.1
done
# jcmd cuts an unquoted key=value at its first '=': quote the options.
echo "== jcmd PID JVMTI.agent_load libjinst.so '\"coverage,include=grades.**,out=$OUT/attach\"'"
"$jcmd" $pid JVMTI.agent_load "$agent" "\"coverage,include=grades.**,out=$OUT/attach,log=$OUT/attach.log\"" | grep -v '^[0-9]*:$'
sleep 1
echo "== jcmd PID JVMTI.agent_load libjinst.so dump"
"$jcmd" $pid JVMTI.agent_load "$agent" dump | grep -v '^[0-9]*:$'
"$jinst" report "$OUT"/attach.cov --classfiles "$OUT"/classes --name grades-attached
echo "== jcmd PID JVMTI.agent_load libjinst.so stop"
"$jcmd" $pid JVMTI.agent_load "$agent" stop | grep -v '^[0-9]*:$'
"$jinst" report "$OUT"/attach.cov --classfiles "$OUT"/classes --sourcefiles "$examples"/coverage \
	--name grades-attached --html "$OUT"/attach-html --xml "$OUT"/attach.xml
touch "$OUT"/stop
wait $pid
trap - EXIT
tail -1 "$OUT"/server.txt
echo "HTML report of the attached run: $OUT/attach-html/index.html"
echo "== the agent's log ($OUT/attach.log)"
cat "$OUT"/attach.log
