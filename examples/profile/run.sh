#!/usr/bin/env bash
# Where the time goes: trace=times, the ranked profile.
source "$(dirname "$0")/../common.sh"
compile "$examples"/profile/Profile.java
echo "== java -agentpath:libjinst.so=trace=times,include=profile.**,out=$OUT/profile profile.Profile"
"$java" -agentpath:"$agent"=trace=times,include=profile.**,format=profile+counts,out="$OUT"/profile,log="$OUT"/agent.log \
	-cp "$OUT"/classes profile.Profile
echo "== the ranked profile ($OUT/profile.txt)"
cat "$OUT"/profile.txt
