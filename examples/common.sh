# Sourced by the examples' run.sh scripts: finds the JDK and the built agent,
# and compiles an example's Java sources.
#   JINST_AGENT  libjinst.so (default: build/lib/libjinst.so of this checkout;
#                build it with `bash scripts/build.sh build`)
#   JAVA_HOME    the JDK (default: the java on the path)
#   OUT          where the example writes (default: /tmp/jinst-examples/NAME)
set -euo pipefail
examples=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$examples")
agent=${JINST_AGENT:-$repo/build/lib/libjinst.so}
if [[ ! -f $agent ]]; then
	echo "no agent at $agent: build jinst first (bash scripts/build.sh build) or set JINST_AGENT" >&2
	exit 1
fi
bin=
[[ -n ${JAVA_HOME:-} ]] && bin=$JAVA_HOME/bin/
java=${bin}java
javac=${bin}javac
jcmd=${bin}jcmd
OUT=${OUT:-/tmp/jinst-examples/$(basename "$(dirname "$(readlink -f "$0")")")}
# Each run starts afresh, in a folder of its own: one that holds anything
# else is left alone.
if [[ -d $OUT && ! -f $OUT/.jinst-example && -n $(ls -A "$OUT") ]]; then
	echo "OUT=$OUT holds other files: give an empty or new folder" >&2
	exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT/classes"
touch "$OUT/.jinst-example"

# compile SOURCES...: into $OUT/classes
compile() {
	"$javac" -encoding UTF-8 -d "$OUT/classes" "$@"
}
