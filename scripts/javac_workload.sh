#!/usr/bin/env bash
# A real javac workload: the JDK's own java.util (with .function, .stream,
# .concurrent, .concurrent.atomic, .concurrent.locks, .regex and .zip),
# java.time (with .temporal and .chrono) and java.math sources, about 400
# files, compiled as a patch of java.base by that JDK's own javac.
# (java.time.format is left out: Debian's JDK 17 sources are newer than its
# JDK, and that package calls a method the older java.base lacks.)
#
#   scripts/javac_workload.sh OUTDIR [JDK_HOME]
#
# JDK_HOME defaults to the JDK of the javac on the path. OUTDIR is one JDK's
# workload (use one OUTDIR per JDK). The script writes into OUTDIR:
#   src/        the chosen sources, a package root (src/java/util/...)
#   files.txt   their paths relative to src/, sorted (LC_ALL=C)
#   javac.args  a javac @argfile: the options and every source file (absolute
#               paths), without -d; run it as
#                   JDK_HOME/bin/javac @OUTDIR/javac.args -d CLASSES
#               (JVM flags go before it as -J..., e.g. -J-Xverify:all
#               -J-agentpath:...); it compiles cleanly, exit 0, no diagnostics
#   jdk         JDK_HOME, one line
#   source      where the sources came from, one line
#   stamp       what the output was built from; when it matches, the script
#               returns at once without touching anything
# and prints a one-line summary. Sources: JDK_HOME/lib/src.zip when it exists;
# otherwise (Debian's JDK 17 points it at the openjdk-17-source package) the
# package's .deb, fetched with `apt-get download` into a cache
# (JINST_CORPUS, default /tmp/jinst-corpus, /debs) and unpacked with dpkg-deb -x,
# which installs nothing. JINST_JAVAC_PACKAGES (space-separated, a/b/c form)
# replaces the package list. Exit 0 done, 1 failed (with a message).
set -euo pipefail
die() {
	echo "javac_workload: $*" >&2
	exit 1
}
[[ $# -ge 1 && $# -le 2 ]] || die "usage: javac_workload.sh OUTDIR [JDK_HOME]"
out=$(realpath -m "$1")
if [[ $# == 2 ]]; then
	jdk=$2
else
	javac=$(command -v javac) || die "no javac on the path; give JDK_HOME"
	jdk=$(dirname "$(dirname "$(readlink -f "$javac")")")
fi
jdk=$(cd "$jdk" 2>/dev/null && pwd) || die "no JDK at $2"
[[ -x $jdk/bin/javac ]] || die "no javac in $jdk"
packages=${JINST_JAVAC_PACKAGES:-java/util java/util/function java/util/stream java/util/concurrent java/util/concurrent/atomic java/util/concurrent/locks java/util/regex java/util/zip java/time java/time/temporal java/time/chrono java/math}
version=$(sed -n 's/^JAVA_VERSION="\(.*\)"$/\1/p' "$jdk/release" 2>/dev/null || true)
[[ -n $version ]] || version=$("$jdk/bin/javac" -version 2>&1 | awk '{ print $2 }')
major=${version%%.*}

# Where the sources are: the JDK's own src.zip, else its Debian source package.
zip=$jdk/lib/src.zip
if [[ ! -f $zip ]]; then
	cache=${JINST_CORPUS:-/tmp/jinst-corpus}/debs
	pkg=openjdk-$major-source
	unpacked=$cache/$pkg
	zip=$(find "$unpacked" -name src.zip -type f 2>/dev/null | head -1 || true)
	if [[ -z $zip ]]; then
		mkdir -p "$cache"
		deb=$(ls "$cache"/"${pkg}"_*.deb 2>/dev/null | head -1 || true)
		if [[ -z $deb ]]; then
			echo "javac_workload: $jdk/lib/src.zip is missing; fetching $pkg (apt-get download)" >&2
			(cd "$cache" && apt-get download "$pkg" >&2) ||
				die "no sources for JDK $version: $jdk/lib/src.zip is missing and 'apt-get download $pkg' failed"
			deb=$(ls "$cache"/"${pkg}"_*.deb 2>/dev/null | head -1 || true)
			[[ -n $deb ]] || die "apt-get download $pkg left no .deb in $cache"
		fi
		rm -rf "$unpacked.tmp.$$"
		dpkg-deb -x "$deb" "$unpacked.tmp.$$" || die "dpkg-deb -x $deb failed"
		rm -rf "$unpacked"
		mv "$unpacked.tmp.$$" "$unpacked"
		zip=$(find "$unpacked" -name src.zip -type f | head -1 || true)
		[[ -n $zip ]] || die "$deb holds no src.zip"
	fi
fi

stamp="jdk=$jdk version=$version zip=$zip size=$(stat -c %s "$zip") packages=$packages"
if [[ -f $out/stamp && $(cat "$out/stamp") == "$stamp" && -f $out/javac.args && -d $out/src ]]; then
	echo "javac_workload: $out: $(wc -l <"$out/files.txt") files of $(cat "$out/source") for $jdk (cached)"
	exit 0
fi

# Built aside, then moved in: an interrupted run leaves no half workload.
tmp=$out.tmp.$$
trap 'rm -rf "$tmp"' EXIT
rm -rf "$tmp"
mkdir -p "$tmp/raw"
names=$(unzip -Z1 "$zip") || die "cannot read $zip"
for p in $packages; do
	grep -q "^java.base/$p/[^/]*\.java\$" <<<"$names" || die "$zip has no java.base/$p"
	grep "^java.base/$p/[^/]*\.java\$" <<<"$names" | sed 's|^java.base/||'
done | LC_ALL=C sort -u >"$tmp/files.txt"
[[ -s $tmp/files.txt ]] || die "no sources found in $zip"
sed 's|^|java.base/|' "$tmp/files.txt" | xargs unzip -q -o "$zip" -d "$tmp/raw" || die "unzip of $zip failed"
mv "$tmp/raw/java.base" "$tmp/src"
rm -rf "$tmp/raw"
{
	# -implicit:none: src/ holds exactly the listed files, nothing else is
	# compiled; -XDignore.symbol.file and -nowarn: JDK sources use internal
	# APIs, and their warnings would only be noise.
	printf '%s\n' --patch-module "java.base=$out/src" -implicit:none -XDignore.symbol.file -nowarn \
		-Xlint:none -XDsuppressNotes -encoding UTF-8
	sed "s|^|$out/src/|" "$tmp/files.txt"
} >"$tmp/javac.args"
echo "$jdk" >"$tmp/jdk"
echo "$zip" >"$tmp/source"
echo "$stamp" >"$tmp/stamp"
rm -rf "$out"
mkdir -p "$(dirname "$out")"
# Another run may have moved its own in meanwhile: the same inputs make the
# same workload, so its is as good as ours.
if ! mv -T "$tmp" "$out" 2>/dev/null; then
	[[ -f $out/stamp && $(cat "$out/stamp") == "$stamp" ]] || die "cannot move the workload into $out"
fi
echo "javac_workload: $out: $(wc -l <"$out/files.txt") files of $zip for $jdk"
