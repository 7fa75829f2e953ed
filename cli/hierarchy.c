/* jinst hierarchy: what the class-hierarchy resolver answers for classes on
 * a class path, each class followed by its super classes up to the root. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "jinst/classpath.h"

static const char hierarchy_usage[] =
	"usage: jinst hierarchy [-cp PATH[:PATH...]] [--jdk JAVA_HOME | --no-jdk] [--release N] CLASS...\n";

/* What jinst_classpath_add_jdk reads: a folder with one of these. A value
 * that is none is a mistake on the command line, not an unreadable JDK:
 * --jdk $JAVA_HOME with JAVA_HOME unset takes the first CLASS. */
static bool jdk_home(const char *home)
{
	static const char *const marks[] = {"lib/modules", "jmods", "jre/lib/rt.jar", "lib/rt.jar"};
	char path[4096];
	struct stat st;
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", home, marks[i]);
		if (stat(path, &st) == 0)
			return true;
	}
	return false;
}

/* One line: "NAME: class|interface, super S, interfaces A B". */
static void print_info(const jinst_class_info *info)
{
	printf("%s: %s", info->name, (info->access_flags & JINST_ACC_INTERFACE) ? "interface" : "class");
	if (info->super_name)
		printf(", super %s", info->super_name);
	if (info->interface_count) {
		printf(", interfaces");
		for (uint16_t i = 0; i < info->interface_count; i++)
			printf(" %s", info->interfaces[i]);
	}
	putchar('\n');
}

int cmd_hierarchy(int argc, char **argv)
{
	jinst_classpath *cp;
	if (jinst_classpath_new(&cp) != 0) {
		fputs("jinst hierarchy: out of memory\n", stderr);
		return 1;
	}
	jinst_diag diag = {0};
	bool have_jdk = false, no_jdk = false;
	int first = argc, rc = 0;
	for (int i = 0; i < argc && first == argc; i++) {
		const char *a = argv[i];
		if ((strcmp(a, "-cp") == 0 || strcmp(a, "--jdk") == 0 || strcmp(a, "--release") == 0) && i + 1 >= argc) {
			fprintf(stderr, "jinst hierarchy: %s needs a value\n%s", a, hierarchy_usage);
			rc = 2;
		} else if (strcmp(a, "-cp") == 0) {
			if (jinst_classpath_add_list(cp, argv[++i], &diag) != 0)
				rc = 1;
		} else if (strcmp(a, "--no-jdk") == 0) {
			no_jdk = true;
		} else if (strcmp(a, "--jdk") == 0) {
			have_jdk = true;
			const char *home = argv[++i];
			if (!*home || !jdk_home(home)) {
				fprintf(stderr,
				        "jinst hierarchy: --jdk took '%s', which is not a JDK home (no lib/modules, jmods/ or "
				        "rt.jar)%s\n%s",
				        home, i + 1 >= argc ? ", and no CLASS is left" : "", hierarchy_usage);
				rc = 2;
			} else if (jinst_classpath_add_jdk(cp, home, &diag) != 0) {
				rc = 1;
			}
		} else if (strcmp(a, "--release") == 0) {
			char *end;
			long r = strtol(argv[++i], &end, 10);
			if (*end || r < 0 || r > 1000) {
				fprintf(stderr, "jinst hierarchy: --release needs a number\n%s", hierarchy_usage);
				rc = 2;
			}
			jinst_classpath_set_release(cp, (int)r);
		} else if (a[0] == '-') {
			fprintf(stderr, "jinst hierarchy: unknown option '%s'\n%s", a, hierarchy_usage);
			rc = 2;
		} else {
			first = i;
		}
		if (rc)
			break;
	}
	if (rc == 1)
		fprintf(stderr, "jinst hierarchy: %s\n", diag.message);
	if (rc == 0 && first == argc) {
		fprintf(stderr, "jinst hierarchy: no class given\n%s", hierarchy_usage);
		rc = 2;
	}
	/* The JDK answers after -cp, as in rewrite: an application's classes
	 * end in java/lang/Object and the JDK's interfaces. Without --jdk, the
	 * JDK of JAVA_HOME or of `java` on the PATH. */
	char *home = rc == 0 && !have_jdk && !no_jdk ? cli_default_jdk() : NULL;
	if (rc == 0 && !have_jdk && !no_jdk && !home)
		fprintf(stderr, "jinst hierarchy: no JDK found (--jdk or JAVA_HOME): only -cp answers\n");
	if (home && jinst_classpath_add_jdk(cp, home, &diag) != 0) {
		const char *env = getenv("JAVA_HOME");
		fprintf(stderr, "jinst hierarchy: the JDK of %s: %s\n", env && *env ? "JAVA_HOME" : "`java` on the PATH",
		        diag.message);
		rc = 1;
	}
	free(home);
	jinst_hierarchy_cache *cache;
	jinst_classpath_cache(cp, &cache);
	for (int i = first; rc != 2 && i < argc; i++) {
		/* Binary names (java.lang.String) become internal names. */
		char *name = strdup(argv[i]);
		if (!name)
			break;
		for (char *p = name; *p; p++)
			if (*p == '.')
				*p = '/';
		const char *cur = name;
		for (int depth = 0; cur && depth < 256; depth++) {
			const jinst_class_info *info;
			diag = (jinst_diag){0};
			if (jinst_hierarchy_cache_query(cache, cur, &info, &diag) != 0) {
				printf("%s: unknown: %s\n", cur, diag.message);
				rc = 1;
				break;
			}
			print_info(info);
			cur = info->super_name;
		}
		free(name);
	}
	jinst_classpath_free(cp);
	return rc;
}
