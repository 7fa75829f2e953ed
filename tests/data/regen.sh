#!/bin/sh
# Regenerates the committed test classes from src/ with javac 17.
#   classes/main      src/main (a module with module-info), javac -g -parameters
#   classes/release8  src/release8, javac --release 8 (major 52)
#   classes/nodebug   src/nodebug, javac -g:none
#   classes/edit      src/edit (the editor's cases), javac -g
# The .class files are committed: tests never need a JDK to find their inputs.
set -eu
cd "$(dirname "$0")"
ver=$(javac -version 2>&1 | sed -n 's/^javac \([0-9]*\).*/\1/p')
if [ "$ver" != 17 ]; then
	echo "regen.sh: needs javac 17 (found: $ver)" >&2
	exit 1
fi
rm -rf classes
mkdir -p classes/main classes/release8 classes/nodebug classes/edit
javac -g -parameters --release 17 -d classes/main src/main/module-info.java src/main/jinsttest/*.java
javac --release 8 -d classes/release8 src/release8/Legacy8.java
javac -g:none --release 17 -d classes/nodebug src/nodebug/NoDebug.java
javac -g --release 17 -d classes/edit src/edit/jinstedit/*.java
find classes -name '*.class' | LC_ALL=C sort
