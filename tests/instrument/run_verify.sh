#!/bin/sh
# Instruments folders of classes and links every instrumented class under
# HotSpot's verifier (VerifyTree). A control first: the test program with
# one instruction broken on purpose must be refused, so a verifier that
# checks nothing cannot pass.
#   run_verify.sh JAVA INSTRUMENT_TREE HOOKS VERIFY WORK IN...
# INSTRUMENT_ARGS (optional): passes for instrument_tree (-c, -C, -x).
set -eu
args=${INSTRUMENT_ARGS:-}
java=$1 tool=$2 hooks=$3 verify=$4 work=$5
shift 5
rm -rf "$work"
mkdir -p "$work/out" "$work/broken/jinsttrace"
for d in "$@"; do
	"$tool" $args "$work/out" "$d"
done
# the control: depth(I)I begins with iload_0, ifne; aload_0 there loads an int as a reference
cp "$work/out/jinsttrace/Main.class" "$work/broken/jinsttrace/Main.class"
python3 - "$work/broken/jinsttrace/Main.class" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
i = b.find(bytes([0x1a, 0x9a]))
assert i > 0, "pattern not found"
b[i] = 0x2a
open(p, 'wb').write(b)
PY
if "$java" -Xverify:all -cp "$hooks:$verify" VerifyTree "$work/broken" > "$work/broken.txt" 2>&1; then
	echo "FAIL: the broken class passed the verifier"; cat "$work/broken.txt"; exit 1
fi
grep -q 'VerifyError: jinsttrace.Main' "$work/broken.txt"
"$java" -Xverify:all -cp "$hooks:$verify" VerifyTree "$work/out" | tee "$work/verify.txt"
grep -q 'linked [1-9][0-9]*, VerifyError 0, not definable here 0, other errors {}' "$work/verify.txt"
# A class file older than 50 (NoDebug with its major version set to 49):
# no StackMapTable is needed, and the old verifier (type inference) links it.
mkdir -p "$work/old" "$work/old-out"
for d in "$@"; do
	[ -f "$d/NoDebug.class" ] && cp "$d/NoDebug.class" "$work/old/NoDebug.class"
done
python3 - "$work/old/NoDebug.class" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[6:8] = (49).to_bytes(2, 'big')
open(p, 'wb').write(b)
PY
"$tool" $args "$work/old-out" "$work/old" | tee "$work/old.txt"
grep -q '^classes 1: instrumented 1,' "$work/old.txt"
"$java" -Xverify:all -cp "$hooks:$verify" VerifyTree "$work/old-out" | tee "$work/verify-old.txt"
grep -q 'linked 1, VerifyError 0' "$work/verify-old.txt"
