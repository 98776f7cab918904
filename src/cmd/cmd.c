/* cmd.c - what several applets share (see cmd.h). */
#include "cmd/cmd.h"

#include "base/log.h"

/* see cmd.h */
int
cmd_off(const char *applet, const char *sw)
{
	log_err("%s: not in this build (%s=0)", applet, sw);
	return EXIT_USAGE;
}
