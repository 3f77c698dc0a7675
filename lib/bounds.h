/*
 * Named caps on everything that crosses the trust boundary (OpenSSH's MONITOR_MAX_MSGLEN habit).
 * Changing one changes the documented protocol: docs/trace.md quotes them.
 */
#ifndef FB_BOUNDS_H
#define FB_BOUNDS_H

/* A sandbox name: it becomes a cgroup and a netns name, so it stays short and path-safe. */
#define FB_NAME_MAX 63
/* A tool name as the harness reports it (gen_ai.tool.name). */
#define FB_TOOL_MAX 63
/* An event kind such as "tool_call.start". */
#define FB_KIND_MAX 31
/* A tool call id (gen_ai.tool.call.id). */
#define FB_CALL_ID_MAX 128
/* error.type on a tool call's end. */
#define FB_ERROR_TYPE_MAX 256
/* The largest tool-call step number the harness may send. */
#define FB_STEP_MAX 2147483647LL
/* One trace line, newline excluded; a longer line is refused whole. */
#define FB_TRACE_LINE_MAX 65536
/* The annotations object of a trace line, as compact JSON. */
#define FB_ANNOTATIONS_MAX 8192
/* One control-socket request or reply line. */
#define FB_CONTROL_MSG_MAX 65536
/* A process name, as the kernel's TASK_COMM_LEN less its NUL. */
#define FB_COMM_MAX 15

#endif
