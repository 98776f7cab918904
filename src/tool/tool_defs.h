/* tool_defs.h - the built-in tools' names, descriptions and JSON
 * schemas. Not compiled into skillbox as they are: tools/mktooldefs.c
 * prints them at build time and tools/lzpack packs them (about 3.5 KB of
 * JSON that repeats itself), and tool.c unpacks them on first use.
 * Needs tool.h's enum tool_id. */
#define OBJ(props, req) "{\"type\":\"object\",\"properties\":{" props \
	"},\"required\":[" req "],\"additionalProperties\":false}"
#define STRP(n, d) "\"" n "\":{\"type\":\"string\",\"description\":\"" d "\"}"
#define SKILLP STRP("skill", "Skill name; defaults to your own skill.")

static const struct {
	const char *name, *desc, *params;
} tool_texts[T__COUNT] = {
	[T_RUN_COMMAND_LINE] = { "run_command_line",
	    "Run a shell command line in the skill folder, confined by the "
	    "sandbox (default timeout 30 s). Say why in reason.",
	    OBJ(STRP("reason", "Why this command is needed.") ","
	    STRP("commandLine", "The shell command line.") "," SKILLP,
	    "\"reason\",\"commandLine\"") },
	[T_LOAD_SKILL_RESOURCES] = { "load_skill_resources",
	    "Read a Markdown file from the skill's references/ folder; "
	    "without a path, list them.",
	    OBJ(STRP("path", "File under references/, e.g. guide.md.") ","
	    SKILLP, "") },
	[T_READ_SKILL_FILE] = { "read_skill_file",
	    "Read a file inside a skill folder.",
	    OBJ(STRP("path", "Path relative to the skill folder.") "," SKILLP,
	    "\"path\"") },
	[T_LIST_SKILL_FILES] = { "list_skill_files",
	    "List the files of a skill folder.", OBJ(SKILLP, "") },
	[T_RUN_SKILL_SCRIPT] = { "run_skill_script",
	    "Run one of the skill's scripts in the sandbox. The input JSON "
	    "reaches it on stdin and in SKILL_INPUT; JSON on its stdout is "
	    "returned as structured output.",
	    OBJ(STRP("script", "Path relative to the skill folder, e.g. "
	    "scripts/overview.sh.") ",\"args\":{\"type\":\"array\",\"items\":"
	    "{\"type\":\"string\"},\"description\":\"Arguments.\"},"
	    "\"input\":{\"description\":\"JSON input for the script.\"},"
	    SKILLP, "\"script\"") },
	[T_LIST_SKILLS] = { "list_skills",
	    "List the available skills with their descriptions.",
	    OBJ(STRP("query", "Only skills whose name or description "
	    "contains this.") , "") },
	[T_ACTIVATE_SKILL] = { "activate_skill",
	    "Load a skill's full instructions and its list of files.",
	    NULL },
	[T_WRITE_FILE] = { "write_file",
	    "Write a text file in the workspace (replaces it whole).",
	    OBJ(STRP("path", "Path relative to the workspace.") ","
	    STRP("content", "The file's content."), "\"path\",\"content\"") },
	[T_READ_FILE] = { "read_file", "Read a file from the workspace.",
	    OBJ(STRP("path", "Path relative to the workspace."), "\"path\"") },
	[T_LIST_WORKSPACE_FILES] = { "list_workspace_files",
	    "List the files in the workspace.", OBJ("", "") },
	[T_GET_FILE_INFO] = { "get_file_info",
	    "Size, type and modification time of a workspace file.",
	    OBJ(STRP("path", "Path relative to the workspace."), "\"path\"") },
	[T_CREATE_SKILL] = { "create_skill",
	    "Create a new skill (validated) from a name, a description and "
	    "instructions.",
	    OBJ(STRP("name", "Lowercase letters, digits and hyphens.") ","
	    STRP("description", "What it does and when to use it.") ","
	    STRP("instructions", "The Markdown body of SKILL.md.") ","
	    STRP("allowed_tools", "Space-separated, e.g. Read Bash."),
	    "\"name\",\"description\",\"instructions\"") },
	[T_HAND_BACK] = { "hand_back",
	    "Finish your part and hand the result back to the agent that "
	    "asked.",
	    OBJ(STRP("result", "What you found or did, for the other agent."),
	    "\"result\"") },
	/* Answered by the agent, not by tool_call: the turn pauses. */
	[T_ASK_USER] = { "ask_user",
	    "Ask the person a question and wait for the answer, which comes "
	    "back as this tool's result. Use it only for a decision or a "
	    "detail that only the person has.",
	    OBJ(STRP("question", "The question, short and complete.") ","
	    "\"choices\":{\"type\":\"array\",\"items\":{\"type\":"
	    "\"string\"},\"description\":\"The answers to offer, if "
	    "there are few.\"}", "\"question\"") },
	/* An orchestration skill's two ways to end (loop session). */
	[T_FINAL_ANSWER] = { "final_answer",
	    "Finish: give the final answer to the task.",
	    OBJ(STRP("answer", "The answer, complete, for the person."),
	    "\"answer\"") },
	[T_CANNOT_COMPLETE] = { "cannot_complete",
	    "Finish without an answer: the task cannot be done with the "
	    "skills you have.",
	    OBJ(STRP("reason", "Why, and what was found so far."),
	    "\"reason\"") },
};
