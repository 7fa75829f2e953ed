# shellcheck shell=bash
# The peer harness, sourced by run.sh, check.sh, ../test_compare_xml.sh and
# bench/coverage: the workloads (which real program, its jars, its driver,
# its arguments) in one place, and the steps every user of them takes.
#
#   peer_prepare WORK             compile the drivers and Report into WORK,
#                                 make WORK/jacoco-agent.jar
#   peer_command WORK NAME [SCALE]  the java command line of workload NAME
#                                 (one word a line; JVM options go after the
#                                 first line)
#   peer_jacoco_option WORK EXEC  the -javaagent option writing EXEC
#   peer_report WORK NAME XML EXEC...  JaCoCo's XML over NAME's jars
#   peer_checksum FILE            the "checksum ..." line of a run's output
#
# Needs Debian's libjacoco-java, libasm-java and the programs' packages
# (scripts/setup.sh); peer_missing prints what is not installed.
peer_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
peer_java_dir=${JINST_JAVA_DIR:-/usr/share/java}
peer_workloads=(rhino xalan h2 lucene)

# peer_jars NAME: the jars of the program (its class path, and the classes
# its report covers), one a line.
peer_jars() {
	local d=$peer_java_dir
	case $1 in
	rhino) echo "$d/js.jar" ;;
	xalan) printf '%s\n' "$d/xalan2.jar" "$d/serializer.jar" "$d/xercesImpl.jar" ;;
	h2) echo "$d/h2.jar" ;;
	lucene)
		# Debian names Lucene's jars with their version only.
		local j
		for j in core analyzers-common queryparser; do
			compgen -G "$d/lucene-$j-[0-9]*.jar" | sort -V | tail -1
		done
		;;
	*) echo "peer: unknown workload $1 (${peer_workloads[*]})" >&2; return 2 ;;
	esac
}

peer_main() {
	case $1 in
	rhino) echo RhinoWorkload ;;
	xalan) echo XalanWorkload ;;
	h2) echo H2Workload ;;
	lucene) echo LuceneWorkload ;;
	esac
}

# peer_scale NAME: the scale of a measured run, 1-5 s plain here.
peer_scale() {
	case $1 in
	rhino) echo 20 ;;
	xalan) echo 25 ;;
	h2) echo 2 ;;
	lucene) echo 4 ;;
	esac
}

# peer_tiny_scale NAME: a scale that runs in well under a second.
peer_tiny_scale() {
	case $1 in
	rhino) echo 2 ;;
	xalan) echo 2 ;;
	h2) echo 1 ;;
	lucene) echo 1 ;;
	esac
}

peer_classpath() { peer_jars "$1" | paste -sd:; }

peer_missing() {
	local j w absent=()
	for j in org.jacoco.agent.rt.jar org.jacoco.core.jar org.jacoco.report.jar asm.jar asm-commons.jar asm-tree.jar; do
		[[ -f $peer_java_dir/$j ]] || absent+=("$peer_java_dir/$j")
	done
	for w in "${peer_workloads[@]}"; do
		while read -r j; do
			[[ -n $j && -f $j ]] || absent+=("${j:-a jar of $w}")
		done < <(peer_jars "$w")
	done
	command -v xmllint >/dev/null || absent+=(xmllint)
	((${#absent[@]} == 0)) || echo "${absent[*]}"
}

# peer_begin NAME PREFIX: skips the calling test (exit 77, NAME saying what
# is missing) when a peer package is absent; else sets work to a new
# temporary folder, removed at exit.
peer_begin() {
	local missing
	missing=$(peer_missing)
	if [[ -n $missing ]]; then
		echo "$1: skipped, missing $missing (scripts/setup.sh)"
		exit 77
	fi
	work=$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX")
	trap 'rm -rf "$work"' EXIT
}

peer_report_classpath() {
	local d=$peer_java_dir
	echo "$d/org.jacoco.core.jar:$d/org.jacoco.report.jar:$d/asm.jar:$d/asm-commons.jar:$d/asm-tree.jar"
}

# The tools' own JVMs (javac, Report) are short runs over many classes: the
# client compiler alone and the serial collector take a third of the CPU
# time of the defaults here.
peer_quick_jvm=(-XX:TieredStopAtLevel=1 -XX:+UseSerialGC)

peer_prepare() {
	local work=$1 all='' w
	mkdir -p "$work/classes" "$work/report"
	for w in "${peer_workloads[@]}"; do
		all+=:$(peer_classpath "$w")
	done
	# -Xlint:-path: xalan2.jar's manifest names xml-apis.jar, which Debian
	# does not ship (the JDK has those APIs).
	javac "${peer_quick_jvm[@]/#/-J}" --release 11 -Xlint:all,-path -Werror -cp "${all#:}" -d "$work/classes" "$peer_dir"/workloads/*.java
	javac "${peer_quick_jvm[@]/#/-J}" --release 11 -Xlint:all -Werror -cp "$(peer_report_classpath)" -d "$work/report" "$peer_dir/Report.java"
	bash "$peer_dir/jacoco_agent.sh" "$work/jacoco-agent.jar"
}

peer_command() {
	local work=$1 name=$2 scale=${3:-}
	[[ -n $scale ]] || scale=$(peer_scale "$name")
	echo java
	echo -cp
	echo "$work/classes:$(peer_classpath "$name")"
	peer_main "$name"
	echo "$scale"
	case $name in
	rhino) echo "$peer_dir/workloads/script.js" ;;
	xalan) echo "$peer_dir/workloads/style.xsl" ;;
	esac
}

# Debian's agent is not shaded: its own packages and ASM's are on the
# class path and must not be instrumented.
peer_jacoco_option() {
	echo "-javaagent:$1/jacoco-agent.jar=destfile=$2,excludes=org.jacoco.*:org.objectweb.*"
}

peer_report() {
	local work=$1 name=$2 xml=$3 j args=()
	shift 3
	while read -r j; do
		args+=(--classfiles "$j")
	done < <(peer_jars "$name")
	java "${peer_quick_jvm[@]}" -cp "$work/report:$(peer_report_classpath)" Report "$@" "${args[@]}" --name "$name" --xml "$xml"
}

peer_checksum() { grep -m1 '^checksum ' "$1" || true; }
