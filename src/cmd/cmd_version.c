/* cmd_version.c - print version, architecture, build date and libraries
 * usage: skillbox version
 * Prints the skillbox version, the architecture and board it was built for,
 * the build date (the date of the last commit; certificate time checks use
 * it as the earliest plausible time) and the versions of the libraries
 * compiled in, then a line per feature: what it adds, or "no (MCP=0)"
 * when the build left it out (make MCP=0). */
#include <stdio.h>

#include "cmd/cmd.h"
#include "config.h"
#include "fmt/fm.h"

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
	printf("protocols: openai (chat), responses, anthropic, "
	    "ollama; TLS 1.2\n");
	/* A line per feature: what it does, or the switch that left it out
	 * (only the text the build needs is in the binary). */
	printf("serve: HTTP/1.1, %s\norchestration: %s\nhooks: %s\n"
	    "mcp: %s\neval: %s\npersist: %s\njobs: %s\ncrew: %s\nfleet: %s\n",
	    HAVE_SERVE_TLS ? "HTTPS (TLS 1.2)" : "no HTTPS (SERVE_TLS=0)",
	    HAVE_ORCH ? "oskill.md (SOP plans, loops)" : "no (ORCH=0)",
	    HAVE_HOOKS ? "command, http" : "no (HOOKS=0)",
	    HAVE_MCP ? "stdio servers, in the sandbox" : "no (MCP=0)",
	    HAVE_EVAL ? "evals, response cache" : "no (EVAL=0)",
	    HAVE_PERSIST ? "sessions to flash (skillbox state)" :
	    "no (PERSIST=0)",
	    HAVE_JOBS ? "board, schedules, run-due" : "no (JOBS=0)",
	    HAVE_CREW ? ".skilled_crew.yaml" : "no (CREW=0)",
	    HAVE_FLEET ? "MQTT 5 and 3.1.1: serve's mqtt:, skillbox fleet" :
	    "no (FLEET=0)");
	return EXIT_OK;
}
