/* Folders a command replaces as a whole (cli.h): a report's HTML folder, a
 * writer's output folder. A folder is replaced only when nothing in it can
 * be lost: it is empty, or an earlier run of the same kind marked it. */
#include <dirent.h>
#include <errno.h>
#include <string.h>

#include "cli.h"

int cli_folder_replaceable(const char *dir, const char *marker)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	bool empty = true, marked = false;
	const struct dirent *e;
	errno = 0;
	while (!marked && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		empty = false;
		marked = strcmp(e->d_name, marker) == 0;
	}
	int err = marked ? 0 : errno;
	closedir(d);
	errno = err;
	return err ? -1 : empty || marked;
}
