#!/usr/bin/env bash
# Has HotSpot verify every class of a (rewritten) tree. See --help.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() {
	cat <<'EOF'
usage: verify.sh --java JAVA_HOME [--original DIR] [options] TREE

Loads every class of TREE into a JVM of JAVA_HOME with -Xverify:all, links
it without initializing it (Class.forName(name, false, loader), then
getDeclaredMethods()) and counts what HotSpot rejects.

TREE is either
  a JDK tree (`jimage extract` layout MODULE/pkg/Cls.class; recognised by
  a java.base folder or a module-info.class in a folder, else --mode jdk):
  the JVM runs with --patch-module MODULE=TREE/MODULE for each module, so
  the boot, platform and application modules load the tree's classes;
  dependencies come from the JDK itself, which must be the one the tree
  was extracted from. --original DIR (the original jimage
  tree) is optional: given, its classes must all be in TREE;
or
  a jar corpus: a folder of .jar files, or of folders named like the jars
  (`guava.jar/` or `guava/`, holding pkg/Cls.class). --original DIR (the
  folder of the original jars) is required: each unit gets a loader that
  defines its own classes from TREE, child first, and takes the rest from
  all original jars, then the JDK. Every class of every original jar must
  be in TREE.

To check an original corpus, give it as TREE (and as --original).

Options:
  --java DIR         the JDK (or JRE) to run; default $JAVA_HOME
  --original DIR     the original jars (jar mode), the original tree (jdk mode)
  --mode jdk|jars    instead of guessing from TREE
  --harness DIR|JAR  the compiled harness (Verify.class); default: compile
                     tests/jvm/harness/Verify.java with JAVA_HOME's javac
  --sample N         check 1 class in N, chosen by a hash of its name (the
                     same classes in every run); the rest stay loadable as
                     dependencies. Default 1: every class
  --show-missing     one line per class stopped by a missing dependency
  --list-missing     the missing class names, with how many classes needed each
  --log FILE         keep HotSpot's class+init log there
  --jvm-opt OPT      one more JVM option, after the harness's own (repeatable)
  -h, --help         this text

Output: one line "KIND UNIT!CLASS: message" per class that did not verify,
then the summary
  N classes: N verified, N VerifyError, N ClassFormatError,
  N UnsupportedClassVersionError, N missing dependencies, N other,
  N not verified by HotSpot, N absent from the tree, N skipped
A class whose dependency is absent from the corpus and the JDK is "missing
dependencies"; it still counts as verified when HotSpot's log shows that its
verification passed (only reflection met the gap). A dependency that is in
the corpus but fails to load is "other", never "missing".
"not verified by HotSpot": linked, but HotSpot's class+init log shows no
verification of it (HotSpot exempts a few bootstrap and reflection classes).
"absent from the tree": a class of the original that TREE lacks.
If the JVM cannot start (a broken class it needs at start-up), the JVM's
error is shown as "startup KIND CLASS: message"; if the harness dies on
the way, as "fatal KIND CLASS: message".

Exit status: 0 no VerifyError, no ClassFormatError, no absent class; 1 some
(or the JVM did not finish); 2 usage error.
EOF
}

die() { echo "verify.sh: $*" >&2; exit 2; }

java_home=${JAVA_HOME:-} original= mode= harness= tree= keep_log= sample=1
opts=() jvm_opts=()
while (($#)); do
	case $1 in
	-h|--help) usage; exit 0 ;;
	--java) java_home=${2:?}; shift ;;
	--original) original=${2:?}; shift ;;
	--mode) mode=${2:?}; shift ;;
	--harness) harness=${2:?}; shift ;;
	--log) keep_log=${2:?}; shift ;;
	--jvm-opt) jvm_opts+=("${2:?}"); shift ;;
	--sample) sample=${2:?}; [[ $sample =~ ^[1-9][0-9]*$ ]] || die "--sample needs a positive number"; shift ;;
	--show-missing|--list-missing) opts+=("$1") ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) [[ -z $tree ]] || die "one TREE only (see --help)"; tree=$1 ;;
	esac
	shift
done
[[ -n $tree ]] || { usage >&2; exit 2; }
[[ -d $tree ]] || die "$tree is not a folder"
[[ -n $java_home && -x $java_home/bin/java ]] || die "no JDK: give --java JAVA_HOME"
java=$java_home/bin/java
tree=$(cd "$tree" && pwd)
if [[ -z $mode ]]; then
	mode=jars
	for d in "$tree"/*/; do
		[[ -f $d/module-info.class ]] && mode=jdk
	done
	[[ -d $tree/java.base ]] && mode=jdk
fi
case $mode in
jdk)
	if [[ -n $original ]]; then
		[[ -d $original ]] || die "$original is not a folder"
		original=$(cd "$original" && pwd)
	fi ;;
jars)
	[[ -n $original ]] || die "jar mode needs --original DIR"
	[[ -d $original ]] || die "$original is not a folder"
	original=$(cd "$original" && pwd) ;;
*) die "--mode is jdk or jars" ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/jinst-verify.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [[ -z $harness ]]; then
	[[ -x $java_home/bin/javac ]] || die "$java_home has no javac: give --harness"
	mkdir "$work/classes"
	"$java_home/bin/javac" --release 11 -d "$work/classes" "$here/harness/Verify.java" || die "cannot compile the harness"
	harness=$work/classes
fi

log=${keep_log:-$work/class-init.log}
: >"$log"
args=(-Xverify:all -Xshare:off "-Xlog:class+init=info:file=$log::filecount=0" -cp "$harness")
if [[ $mode == jdk ]]; then
	# Each folder that is a module of this JDK is patched in; the harness
	# reports the classes of any other folder as "other".
	mapfile -t mods < <("$java" --list-modules | sed 's/@.*//')
	for m in "${mods[@]}"; do
		[[ -d $tree/$m ]] && args+=("--patch-module" "$m=$tree/$m")
	done
	args+=(--add-modules ALL-SYSTEM)
	targs=(jdk "$tree" ${original:+"$original"})
else
	targs=(jars "$original" "$tree")
fi
args+=("${jvm_opts[@]}")
printf '%s\n' "${args[@]}" | sed 's/.*/"&"/' >"$work/args"

start=$SECONDS
"$java" "@$work/args" Verify --log "$log" --sample "$sample" "${opts[@]}" "${targs[@]}" \
	>"$work/out" 2>"$work/err"
rc=$?
last=$(tail -n 1 "$work/out")
if [[ $rc == 2 ]]; then
	cat "$work/out"
	cat "$work/err" >&2
	exit 2
fi
if [[ ! $last =~ ^[0-9]+\ classes: ]]; then
	# The JVM died before the harness could report: most likely a class it
	# needs at start-up was rejected (HotSpot prints "Error occurred during
	# initialization of boot layer" and the error). Say which, and fail.
	echo "verify.sh: the JVM did not finish (exit status $rc); its output:" >&2
	cat "$work/out" "$work/err" >&2
	stage=startup
	grep -q '^Verify: checking' "$work/err" && stage=fatal
	cat "$work/out" "$work/err" | sed 's/^Exception in thread "[^"]*" //' | awk -v stage=$stage '
		/^(java\.lang\.)?[A-Za-z.]*(Error|Exception)(: |$)/ && !kind {
			kind = $1; sub(/:$/, "", kind); sub(/^java\.lang\./, "", kind)
			msg = $0; sub(/^[^ ]* ?/, "", msg); next }
		kind && /Location:/ { getline; where = $1; sub(/\..*/, "", where); exit }
		END { if (kind) printf "%s %s %s: %s\n", stage, kind, where ? where : "?", msg
		      else printf "%s failure: see the JVM output above\n", stage }'
	exit 1
fi
cat "$work/out"
grep -v -e '^WARNING: Using incubator modules' -e '^WARNING: module-info.class ignored in patch' -e '^$' "$work/err" >&2
echo "time: $((SECONDS - start)) s ($mode mode, $("$java" -version 2>&1 | head -n 1))" >&2
exit $rc
