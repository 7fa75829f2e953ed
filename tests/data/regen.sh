#!/bin/sh
# Regenerates the committed test classes from src/ with javac 17.
#   classes/main      src/main (a module with module-info), javac -g -parameters
#   classes/release8  src/release8, javac --release 8 (major 52)
#   classes/nodebug   src/nodebug, javac -g:none
#   classes/edit      src/edit (the editor's cases), javac -g
#   classes/infer     src/infer (frame inference cases), javac --release 17, and
#                     the classes src/gen/GenInfer.java writes with Debian's ASM
#                     (cases javac never produces: unreachable code, jsr/ret)
#   classes/coverage  src/coverage (the coverage core's cases), javac -g
#   classes/natives   src/natives (native methods to wrap), javac -g --release 8
#   classes/jsr       src/jsr, Debian's ecj for Java 1.4 (finally blocks as jsr/ret
#                     subroutines, which javac 17 cannot write)
#   classes/rebuilt   src/rebuilt: file/ the classes javac -g writes, jdk17/ the
#                     bytes JDK 17 rebuilds for RetransformClasses when the
#                     boot loader defined them (no StackMapTable), written by
#                     src/rebuilt/RebuiltDump.java
# The .class files are committed: tests never need a JDK to find their inputs.
set -eu
cd "$(dirname "$0")"
ver=$(javac -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p')
if [ "$ver" != 17 ]; then
	echo "regen.sh: needs javac 17 (found: $ver)" >&2
	exit 1
fi
rm -rf classes
mkdir -p classes/main classes/release8 classes/nodebug classes/edit classes/infer classes/jsr classes/coverage \
	classes/rebuilt/file
javac -g -parameters --release 17 -d classes/main src/main/module-info.java src/main/jinsttest/*.java
javac --release 8 -d classes/release8 src/release8/Legacy8.java
javac -g:none --release 17 -d classes/nodebug src/nodebug/NoDebug.java
mkdir -p classes/natives
javac -g --release 8 -d classes/natives src/natives/natives/Natives.java
javac -g --release 17 -d classes/edit src/edit/jinstedit/*.java
javac --release 17 -d classes/infer src/infer/infer/*.java
javac -g --release 17 -d classes/coverage src/coverage/Cov.java
asm=/usr/share/java/asm.jar
gen=$(mktemp -d)
javac -cp "$asm" -d "$gen" src/gen/GenInfer.java
java -cp "$asm:$gen" GenInfer classes/infer
rm -rf "$gen"
java -cp /usr/share/java/ecj.jar org.eclipse.jdt.internal.compiler.batch.Main -source 1.4 -target 1.4 -nowarn \
	-d classes/jsr src/jsr/Fin.java
java -cp /usr/share/java/ecj.jar org.eclipse.jdt.internal.compiler.batch.Main -1.4 -d classes/jsr src/jsr/jinstjsr/Finally.java
javac -g --release 17 -d classes/rebuilt/file src/rebuilt/jinstrebuilt/Branchy.java
dump=$(mktemp -d)
javac --release 17 -d "$dump" src/rebuilt/RebuiltDump.java
printf 'Premain-Class: RebuiltDump\nCan-Retransform-Classes: true\n' >"$dump/manifest.txt"
jar cfm "$dump/dump.jar" "$dump/manifest.txt" -C "$dump" RebuiltDump.class -C "$dump" 'RebuiltDump$1.class'
java -Xshare:off -Xbootclasspath/a:classes/rebuilt/file -javaagent:"$dump/dump.jar" -cp "$dump/dump.jar" RebuiltDump \
	"$dump/out" jinstrebuilt.Branchy 'jinstrebuilt.Branchy$Sub' >/dev/null
mv "$dump/out/rebuilt" classes/rebuilt/jdk17
rm -rf "$dump"
find classes -name '*.class' | LC_ALL=C sort
