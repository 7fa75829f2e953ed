/* Finding the JDK whose classes answer last. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* The JDK whose image answers for the platform's classes: --jdk, else
 * JAVA_HOME, else the one `java` on the PATH belongs to. */
char *cli_default_jdk(void)
{
	const char *home = getenv("JAVA_HOME");
	if (home && *home)
		return strdup(home);
	const char *path = getenv("PATH");
	if (!path)
		return NULL;
	char *copy = strdup(path), *save = NULL;
	char *found = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char cand[4096];
		snprintf(cand, sizeof(cand), "%s/java", dir);
		if (access(cand, X_OK) != 0)
			continue;
		char *real = realpath(cand, NULL);
		if (!real)
			continue;
		char *bin = strstr(real, "/bin/java");
		if (bin && bin[9] == '\0') {
			*bin = '\0';
			found = real;
		} else {
			free(real);
		}
	}
	free(copy);
	return found;
}
