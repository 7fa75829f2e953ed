/* jinst: the command-line tool. */
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "cli.h"

static const char usage[] =
	"usage: jinst COMMAND [ARGS...]\n"
	"\n"
	"jinst is a bytecode instrumentation engine for the JVM. Commands:\n"
	"  dump FILE.class | JAR|JMOD|FOLDER [ENTRY...]\n"
	"                                     list classes like javap -v: constants resolved,\n"
	"                                     attributes, code and StackMapTable frames decoded\n"
	"  dump FILE.cov                      list coverage data: sessions, classes, probes hit\n"
	"  roundtrip [--deep] PATH...         parse and write every class in class files, jars,\n"
	"                                     jmods and folders, and compare with the input\n"
	"  hierarchy [-cp PATH] CLASS...      super classes and interfaces of classes on a class\n"
	"                                     path, as the class-hierarchy resolver reads them\n"
	"  rewrite [--frames=keep|recompute] IN... -o OUT\n"
	"                                     every method through the code editor, or with\n"
	"                                     its StackMapTable recomputed; OUT mirrors IN\n"
	"  instrument --coverage[=counts] | --trace[=counts|times] IN... -o OUT\n"
	"                                     instrument class files, folders, jars, wars and\n"
	"                                     ears ahead of time; they run with jinst-runtime.jar\n"
	"  merge -o OUT IN...                 merge coverage data files (.cov): booleans ORed,\n"
	"                                     counts added\n"
	"  report DATA.cov... --classfiles PATH [--xml F] [--html DIR] [--csv F] [--lcov F]\n"
	"                                     coverage reports, with jacococli report's flags\n"
	"  attach PID [OPTION,...]            load the agent into a running JVM (no jcmd needed)\n"
	"  dump PID | stop PID                the agent there writes its outputs now | and stops\n"
	"  reset PID                          the agent there forgets what it recorded so far\n"
	"  help [COMMAND]                     this text, or a command's own help\n"
	"\n"
	"Options: --help, --version. 'jinst COMMAND --help' explains a command.\n";

static const char dump_help[] =
	"usage: jinst dump FILE.class | JAR|JMOD|FOLDER [ENTRY...]\n"
	"       jinst dump FILE.cov\n"
	"       jinst dump PID   (the agent in process PID writes its outputs: jinst help attach)\n"
	"\n"
	"Prints each class as a javap -v style listing: header, constant pool with\n"
	"every entry resolved, fields and methods with their attributes, bytecode with\n"
	"resolved operands, exception tables and StackMapTable frames (expanded to full\n"
	"frames). ENTRY selects classes inside a jar, jmod or folder by entry name\n"
	"(java/lang/String.class; in a jmod classes/java/lang/String.class too),\n"
	"internal name (java/lang/String) or binary name (java.lang.String); an ENTRY\n"
	"that matches no class is named on stderr. A class file or FILE.cov takes none.\n"
	"A coverage data file (recognised by its magic, whatever its name; a FILE.cov\n"
	"is read as one, whatever its bytes) is listed instead: its sessions (name,\n"
	"start, dump), then one line per class:\n"
	"  NAME IDENTITY booleans|counts HIT/PROBES hit PROBES\n"
	"with the probes as 0/1 digits, or as counts after a colon.\n"
	"Exit status: 0 ok, 1 a class or the file could not be read or decoded, or an\n"
	"ENTRY matched no class, 2 usage error.\n";

static const char roundtrip_help[] =
	"usage: jinst roundtrip [--deep] [--quiet] [-j N] PATH...\n"
	"\n"
	"Parses and writes every class found in PATH (class files, .jar/.zip/.jmod files,\n"
	"folders searched recursively) and compares the output with the input.\n"
	"  (default)  untouched classes must be written back byte for byte\n"
	"  --deep     decode every attribute, method body and frame and encode the class\n"
	"             from the model (no bytes copied); the output must mean the same as the\n"
	"             input (same resolved constants, instructions, full frames, attributes);\n"
	"             byte-identical outputs are counted as identical, the rest as equivalent\n"
	"  --quiet    no progress on stderr\n"
	"  -j N       worker threads (default: the number of processors)\n"
	"\n"
	"Prints one line per failing class and per file that cannot be read, then\n"
	"  N classes: N identical, N equivalent, N differ, N rejected\n"
	"  N files could not be read      (when some could not)\n"
	"Exit status: 0 when nothing differs, nothing is rejected and every file was read,\n"
	"1 otherwise, 2 usage error.\n";

static const char hierarchy_help[] =
	"usage: jinst hierarchy [-cp PATH[:PATH...]] [--jdk JAVA_HOME | --no-jdk] [--release N] CLASS...\n"
	"\n"
	"Prints, for each CLASS (internal or binary name) and each of its super classes\n"
	"up to java/lang/Object, one line: NAME: class|interface, super S, interfaces A B.\n"
	"Classes are read from the class path, never loaded into a JVM.\n"
	"  -cp PATH    jars, .jmod files, class folders, module trees (jimage extract)\n"
	"              and runtime images (lib/modules), ':'-separated, first match wins\n"
	"  --jdk HOME  a JDK's classes (lib/modules, else jmods/, else rt.jar)\n"
	"  --release N the META-INF/versions/N of multi-release jars (default: none)\n"
	"  --no-jdk    no JDK: only -cp answers\n"
	"The JDK answers after -cp: --jdk, else the JDK of JAVA_HOME or of `java` on the PATH.\n"
	"Exit status: 0 all classes known, 1 a class or an entry could not be read, 2 usage\n"
	"error (--jdk given no folder that holds a JDK's classes is one).\n";

static const char rewrite_help[] =
	"usage: jinst rewrite [--frames=keep|recompute] [--classpath PATH:...] [--jdk JAVA_HOME]\n"
	"                     [-j N] [--force] [--quiet] [--verbose] IN... -o OUT\n"
	"\n"
	"Writes every class of IN (class files, folders, jars, wars, ears, zips) again to\n"
	"OUT, which takes the shape of the input: a folder keeps its layout, other files,\n"
	"times, and links that stay inside it (a link to a file outside is read through,\n"
	"one to a folder outside or to nothing kept with a warning); an archive its\n"
	"entries in their order with their names, times, compression,\n"
	"attributes, extra fields and comments, every non-class entry byte for byte.\n"
	"Archives inside (BOOT-INF/lib/*.jar, WEB-INF/lib/*.jar) are rewritten too, and\n"
	"multi-release classes (META-INF/versions/N/) like any other. A signed archive\n"
	"whose classes change loses its signature (a warning names it). With several\n"
	"inputs OUT is a folder holding each by its own name; one file into an existing\n"
	"folder goes in by its name. The same input and options give the same bytes.\n"
	"\n"
	"The inputs are never written: OUT may not be an input, lie inside an input folder\n"
	"or hold an input. OUT is written beside its place (.jinst-tmp.PID.NAME) and put\n"
	"there only when the run succeeded; on an error (unreadable input, corrupt archive,\n"
	"a write failing, a stop by SIGINT, SIGTERM or SIGHUP) nothing changes. An existing\n"
	"OUT is replaced only with --force, and only a file, an empty folder or a folder\n"
	"jinst wrote (it holds .jinst-output): never a device, a FIFO, a link or a folder\n"
	"of something else.\n"
	"\n"
	"  --frames=keep       (default) decode every method into the code editor and\n"
	"                      encode it again: branches laid out, tables remapped, frames\n"
	"                      kept and re-encoded in their most compact form\n"
	"  --frames=recompute  drop every StackMapTable and compute it anew by type\n"
	"                      inference (classes older than version 50 need none and are\n"
	"                      skipped). Questions about the class hierarchy are\n"
	"                      answered from IN, then --classpath, then the JDK's runtime\n"
	"                      image; no class is ever loaded.\n"
	"  --classpath L       jars, folders, jmods or JDK images, separated by ':'\n"
	"  --jdk HOME          the JDK whose classes answer last (default: JAVA_HOME, or the\n"
	"                      JDK of `java` on the PATH)\n"
	"  -j N                worker threads (default: the number of processors)\n"
	"  --force             replace OUT when it exists (a file, or a folder jinst wrote)\n"
	"  --quiet / --verbose no progress on stderr / print every note\n"
	"\n"
	"A class that cannot be rewritten is written unchanged, with a warning on stderr\n"
	"  jinst rewrite: warning: NAME: REASON (copied unchanged)\n"
	"The summary counts what was written:\n"
	"  N archives, N files; N classes: N changed, N unchanged, N skipped, N failed; N warnings; T s\n"
	"    N skipped: REASON           (one line per reason)\n"
	"  N methods rewritten (N classes came out byte for byte as they went in, counted\n"
	"  unchanged); left alone: N without code, N in classes skipped or failed;\n"
	"  N classes failed for classes the hierarchy does not know\n"
	"A class is changed when its bytes differ from the input's and unchanged when\n"
	"they do not: its methods went through all the same (--frames=keep writes most\n"
	"classes back as they were), and are counted rewritten.\n"
	"Exit status: 0 when nothing failed, 1 when a class failed (the output is written)\n"
	"or OUT could not be written (nothing changed), 2 usage error.\n";

static const char instrument_help[] =
	"usage: jinst instrument PASSES [--include GLOBS] [--exclude GLOBS] [-j N] [--force]\n"
	"                        [--quiet] [--verbose] IN... -o OUT\n"
	"\n"
	"Instruments every class of IN (class files, folders, jars, wars, ears) ahead of\n"
	"time, for programs that run without the agent: the instrumented code calls\n"
	"jinst.rt.Hooks, which jinst-runtime.jar (installed beside libjinst.so) holds.\n"
	"OUT takes the shape of the input: a folder keeps its layout, its other files\n"
	"and their times (links to files outside it are read through), a jar its\n"
	"entries, their order, times and compression. With one input\n"
	"-o names the output file or folder; with several, a folder holding each\n"
	"input by its own name. Same inputs and options, same bytes.\n"
	"\n"
	"PASSES (one or both; coverage is placed first, as in the agent):\n"
	"  --coverage[=booleans|counts]  coverage probes (JaCoCo's sites): whether each\n"
	"                      ran, or how often; the data goes to OUT.cov of -Djinst.out\n"
	"  --trace             entry and exit hooks in every method: the run records\n"
	"                      counts or times (-Djinst.trace=counts|times)\n"
	"  --trace=counts      the counting hook alone: call counts, the smallest code\n"
	"  --trace=times       as --trace, leaf methods counted only (the agent's\n"
	"                      trace=times)\n"
	"Not ahead of time: allocation sites, monitors and natives (the agent's alloc,\n"
	"monitor and natives) need JVMTI at run time: an object's bytes, contention\n"
	"events, native method prefixes. --alloc, --monitor and --natives say so.\n"
	"Options:\n"
	"  --include GLOBS     classes to instrument [all]: patterns separated by + or :,\n"
	"  --exclude GLOBS     classes to leave alone; '*' within a package, '**' across,\n"
	"                      '.' read as '/' (com.example.** or com/example/*Test)\n"
	"  -o OUT              the output (required); never one of the inputs\n"
	"  -j N                worker threads (default: the number of processors)\n"
	"  --force             replace an existing OUT (a file, or a folder jinst wrote)\n"
	"  --quiet / --verbose no progress on stderr / a line for every class copied\n"
	"                      with a note (already instrumented, say)\n"
	"\n"
	"Classes carry the original class's identity (XXH64 of the input bytes), so\n"
	"`jinst report --classfiles IN` maps the data back to the original classes. A\n"
	"class instrumented already (the JinstInstrumented marker, or calls into the\n"
	"runtime) is copied as it is and counted as skipped, never instrumented twice.\n"
	"A class that cannot be instrumented (coverage of jsr/ret, say) is copied\n"
	"unchanged with a line\n"
	"  warning: NAME: not instrumented: REASON\n"
	"and so is each method left alone in a class instrumented (its code would pass\n"
	"64 KB), `not instrumented: PASS: METHOD CODE: REASON`; with another pass, a class\n"
	"that gets no coverage says `no coverage: REASON`. The summary counts them all.\n"
	"With --trace, each jar or folder written holds the method table that names\n"
	"the ids, META-INF/jinst/methods.tsv (so do nested jars and wars, and each\n"
	"WEB-INF/classes/ and BOOT-INF/classes/), and each folder of instrumented classes\n"
	"the run's class $JinstRunKEY.class: the ids are the run's, so jars of\n"
	"separate runs share a JVM without a clash. The summary at the end:\n"
	"  N archives, N files; N classes: N instrumented, N unchanged, N skipped,\n"
	"  N failed; N warnings; T s\n"
	"  N skipped: REASON (one line per reason)\n"
	"  N methods instrumented, N left alone\n"
	"\n"
	"Examples:\n"
	"  jinst instrument --coverage app.jar lib/ -o out/\n"
	"  java -cp out/app.jar:out/lib/...:jinst-runtime.jar -Djinst.out=app Main\n"
	"  java -Xbootclasspath/a:jinst-runtime.jar -Djinst.out=app -jar out/app.jar  # -jar takes no -cp\n"
	"  java -p out/app.jar -cp jinst-runtime.jar --add-reads app=ALL-UNNAMED \\\n"
	"       -Djinst.out=app -m app/Main   # a module reads the runtime if told to\n"
	"  jinst report app.cov --classfiles app.jar --html site/\n"
	"\n"
	"  jinst instrument --trace=counts --include com.example.** app.jar -o app-traced.jar\n"
	"  java -cp app-traced.jar:jinst-runtime.jar -Djinst.out=calls Main   # calls.tsv\n"
	"Exit status: 0 written (warnings included), 1 an input could not be read or\n"
	"an output written (that output is left as it was), 2 usage error.\n";

static const char merge_help[] =
	"usage: jinst merge -o OUT IN...\n"
	"\n"
	"Merges coverage data files (.cov, docs/coverage-format.md) into OUT: the\n"
	"sessions of all inputs, and one record per class and identity, with\n"
	"booleans ORed and hit counts added (a sum past 2^64 - 1 stays there); a\n"
	"boolean record with a counts record gives counts, each hit boolean adding 1.\n"
	"An input with the same bytes as one before it (the same file twice, or a\n"
	"copy) is read once; an input that holds a session already merged (a file\n"
	"and a merge of it) is merged, and a line on stderr names the session.\n"
	"OUT may be one of the inputs; it is replaced in one step (a temporary file\n"
	"beside it, then a rename), so it never holds part of a file.\n"
	"\n"
	"Two records of one class with different identities come from two versions\n"
	"of the class: both are kept, and a line on stderr names the class and the\n"
	"two identities:\n"
	"  jinst merge: IN: class NAME has identity X, already merged with Y: ...\n"
	"An input that cannot be read, is damaged or truncated, or has a newer\n"
	"format version stops the merge with one line naming it, and OUT is not\n"
	"written. The last line on stdout:\n"
	"  OUT: N files merged: N sessions, N classes, N identity conflicts\n"
	"Exit status: 0 merged (identity conflicts included), 1 an input could not be\n"
	"read or merged or OUT could not be written, 2 usage error.\n";

static const char report_help[] =
	"usage: jinst report DATA.cov... --classfiles PATH [--classfiles PATH...]\n"
	"                    [--sourcefiles PATH...] [--xml FILE] [--html DIR] [--csv FILE]\n"
	"                    [--lcov FILE] [--name NAME] [--encoding ENC] [--tabwith N]\n"
	"\n"
	"Coverage reports from coverage data files (merged when there are several) and\n"
	"the class files they were recorded for; the flags are those of JaCoCo's\n"
	"`jacococli report`.\n"
	"  --classfiles PATH   class files, folders, jars (nested jars too); repeatable\n"
	"  --sourcefiles PATH  folders of source files (PATH/PKG/File.java); repeatable\n"
	"  --xml FILE          JaCoCo's XML report (report.dtd 1.1)\n"
	"  --html DIR          HTML report: a folder that works offline\n"
	"  --csv FILE          JaCoCo's CSV report, one line per class\n"
	"  --lcov FILE         LCOV tracefile (for genhtml and tools that read LCOV)\n"
	"  --name NAME         the report's name (default: JaCoCo Coverage Report)\n"
	"  --encoding ENC      the source files' encoding (default UTF-8); iconv's names\n"
	"                      or Java's (ISO8859_1, Cp1252); bytes that do not decode\n"
	"                      are shown as U+FFFD\n"
	"  --tabwith N         spaces per tab in HTML source pages (default 4)\n"
	"With no output flag, prints a summary: classes, methods, lines, branches,\n"
	"instructions, complexity, covered of total.\n"
	"A class is matched to its data by name and identity (XXH64 of the class file):\n"
	"a class file that is not the one the data was recorded for is named on stderr\n"
	"and in the report and counted nowhere; classes without data are missed.\n"
	"Classes jinst instrumented are refused (their code holds the probes): give\n"
	"--classfiles the original classes, as for `jinst instrument` IN.\n"
	"Each file is written to a temporary file and renamed into place; DIR is\n"
	"replaced only when it is empty or an earlier jinst report.\n"
	"Exit status: 0 written, 1 a data file, class file or output failed, 2 usage error.\n";

const char *cli_help_for(const char *cmd);
const char *cli_help_for(const char *cmd)
{
	if (strcmp(cmd, "dump") == 0)
		return dump_help;
	if (strcmp(cmd, "roundtrip") == 0)
		return roundtrip_help;
	if (strcmp(cmd, "hierarchy") == 0)
		return hierarchy_help;
	if (strcmp(cmd, "rewrite") == 0)
		return rewrite_help;
	if (strcmp(cmd, "instrument") == 0)
		return instrument_help;
	if (strcmp(cmd, "merge") == 0)
		return merge_help;
	if (strcmp(cmd, "report") == 0)
		return report_help;
	if (strcmp(cmd, "attach") == 0 || strcmp(cmd, "stop") == 0 || strcmp(cmd, "reset") == 0)
		return attach_help;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0) {
		printf("jinst %s\n", JINST_VERSION_STRING);
		return 0;
	}
	if (strcmp(cmd, "help") == 0) {
		/* help explains itself with the general help, which is its own. */
		if (argc < 3 || strcmp(argv[2], "help") == 0 || strcmp(argv[2], "--help") == 0 ||
		    strcmp(argv[2], "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		const char *h = cli_help_for(argv[2]);
		if (!h) {
			fprintf(stderr, "jinst: no command '%s'\n\n%s", argv[2], usage);
			return 2;
		}
		fputs(h, stdout);
		return 0;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			const char *h = cli_help_for(cmd);
			if (h) {
				fputs(h, stdout);
				return 0;
			}
		}
	}
	if (strcmp(cmd, "dump") == 0 && cli_attach_wanted(argc - 2, argv + 2))
		return cmd_attach(cmd, argc - 2, argv + 2);
	if (strcmp(cmd, "attach") == 0 || strcmp(cmd, "stop") == 0 || strcmp(cmd, "reset") == 0)
		return cmd_attach(cmd, argc - 2, argv + 2);
	if (strcmp(cmd, "dump") == 0)
		return cmd_dump(argc - 2, argv + 2);
	if (strcmp(cmd, "roundtrip") == 0)
		return cmd_roundtrip(argc - 2, argv + 2);
	if (strcmp(cmd, "hierarchy") == 0)
		return cmd_hierarchy(argc - 2, argv + 2);
	if (strcmp(cmd, "rewrite") == 0)
		return cmd_rewrite(argc - 2, argv + 2);
	if (strcmp(cmd, "instrument") == 0)
		return cmd_instrument(argc - 2, argv + 2);
	if (strcmp(cmd, "merge") == 0)
		return cmd_merge(argc - 2, argv + 2);
	if (strcmp(cmd, "report") == 0)
		return cmd_report(argc - 2, argv + 2);
	fprintf(stderr, "jinst: unknown command '%s'\n\n%s", cmd, usage);
	return 2;
}
