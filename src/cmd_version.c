/* cmd_version.c - print version, architecture, build date and libraries
 * usage: skillbox version
 * Prints the skillbox version, the architecture and board it was built for,
 * the build date (the date of the last commit; certificate time checks use
 * it as the earliest plausible time) and the versions of the libraries
 * compiled in. */
#include <stdio.h>

#include "cmd.h"
#include "fm.h"

#ifndef SKILLBOX_BUILD_DATE
#define SKILLBOX_BUILD_DATE "unknown"
#endif

int
cmd_version(int argc, char **argv)
{
	if (argc > 1)
		return cmd_usage("version", "takes no arguments");
	printf("skillbox %s\n", SKILLBOX_VERSION);
	printf("arch: %s (board %s)\n", SKILLBOX_ARCH, SKILLBOX_BOARD);
	printf("built: %s\n", SKILLBOX_BUILD_DATE);
	printf("libraries: musl %s, BearSSL %s, libfyaml %s, jsmn %s\n",
	    MUSL_VERSION, BEARSSL_VERSION, fm_version(), JSMN_VERSION);
	printf("protocols: openai (chat completions), responses, anthropic, "
	    "ollama; TLS 1.2\n");
	return EXIT_OK;
}
