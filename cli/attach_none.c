/* jinst attach in a build without a JDK: no agent was built to attach. */
#include <stdio.h>
#include <string.h>

#include "attach.h"

const char attach_help[] = "usage: jinst attach|dump|stop PID: this jinst was built without a JDK, and so\n"
                           "without the agent (libjinst.so) it would load.\n";

bool cli_attach_wanted(int argc, char **argv)
{
	(void)argc, (void)argv;
	return false;
}

int cmd_attach(const char *what, int argc, char **argv)
{
	(void)argc, (void)argv;
	fprintf(stderr, "jinst %s: built without a JDK: there is no agent to attach\n", what);
	return 1;
}
