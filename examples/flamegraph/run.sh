#!/usr/bin/env bash
# A flame graph: trace=times with folded stacks and the agent's own page, of
# examples/profile's program.
source "$(dirname "$0")/../common.sh"
compile "$examples"/profile/Profile.java
echo "== java -agentpath:libjinst.so=trace=times,include=profile.**,format=folded+html,out=$OUT/profile profile.Profile"
"$java" -agentpath:"$agent"=trace=times,include=profile.**,format=folded+html,out="$OUT"/profile,log="$OUT"/agent.log \
	-cp "$OUT"/classes profile.Profile
echo "== $OUT/profile.html: the flame graph, one page to open in a browser"
echo "== $OUT/profile.folded: $(head -1 "$OUT"/profile.folded)"
echo "== then one line per stack, its self time in ns (the heaviest 5)"
sort -k2,2nr "$OUT"/profile.folded | awk 'NR <= 5'
echo "== the deepest stack: $(awk -F';' '{ print NF }' "$OUT"/profile.folded | sort -n | tail -1) frames"
if command -v flamegraph.pl >/dev/null; then
	flamegraph.pl --title "examples/profile" --countname ns "$OUT"/profile.folded >"$OUT"/profile.svg
	echo "== wrote $OUT/profile.svg (flamegraph.pl)"
else
	echo "== to draw it: flamegraph.pl --countname ns $OUT/profile.folded > profile.svg"
	echo "   or open $OUT/profile.folded in speedscope (https://www.speedscope.app, or: speedscope $OUT/profile.folded)"
fi
