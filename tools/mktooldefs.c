/* tools/mktooldefs.c - print the built-in tools' texts of src/tool_defs.h
 * for tools/lzpack (a build tool, run on the build machine): for each tool
 * in enum order its name, description and parameters, each ended by a NUL
 * byte; a tool without fixed parameters gets an empty text. */
#include <stdio.h>

#include "tool/tool.h"
#include "tool/tool_defs.h"

int
main(void)
{
	unsigned i;

	for (i = 0; i < T__COUNT; i++) {
		if (tool_texts[i].name == NULL || tool_texts[i].desc == NULL) {
			fprintf(stderr, "mktooldefs: tool %u has no text\n", i);
			return 1;
		}
		fputs(tool_texts[i].name, stdout);
		putchar(0);
		fputs(tool_texts[i].desc, stdout);
		putchar(0);
		if (tool_texts[i].params != NULL)
			fputs(tool_texts[i].params, stdout);
		putchar(0);
	}
	return ferror(stdout) ? 1 : 0;
}
