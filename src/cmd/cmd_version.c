/* cmd_version.c - print version, architecture, build date and libraries
 * usage: skillbox version
 * Prints the skillbox version, the architecture and board it was built for,
 * the build date (the date of the last commit; certificate time checks use
 * it as the earliest plausible time) and the versions of the libraries
 * compiled in, and whether `serve` can speak HTTPS (SERVE_TLS). */
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
	printf("serve: HTTP/1.1%s\n", HAVE_SERVE_TLS ? ", HTTPS (TLS 1.2)" :
	    " (no HTTPS: SERVE_TLS=0)");
	printf("orchestration: %s\nhooks: %s\n", HAVE_ORCH ? "oskill.md "
	    "(SOP plans, loops)" : "no (ORCH=0)", HAVE_HOOKS ? "command, "
	    "http" : "no (HOOKS=0)");
	/* Later features: a line only when in (the router's bytes). */
	if (HAVE_EVAL)
		printf("eval: evals, response cache\n");
	if (HAVE_JOBS)
		printf("jobs: board, schedules, run-due\n");
	if (HAVE_MCP)
		printf("mcp: stdio servers, in the sandbox\n");
	if (HAVE_CREW)
		printf("crew: .skilled_crew.yaml\n");
	if (HAVE_PERSIST)
		printf("persist: sessions to flash (skillbox state)\n");
	return EXIT_OK;
}
