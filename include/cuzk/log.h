/* log.h: the process log (src/util/log.c, in the core library so the engine and the servers
 * share it; libc only): leveled human or JSON lines on stderr, and the TIMELINE event stream
 * (one line per partition event) that waterfall tools read. The daemon sets level and format
 * from [logging]. See docs/daemon.md ("Observability"). */
#ifndef CUZK_LOG_H
#define CUZK_LOG_H

#include <stdbool.h>

enum clog_level { CLOG_ERROR, CLOG_WARN, CLOG_INFO, CLOG_DEBUG, CLOG_TRACE };

/* "error" | "warn" | "info" | "debug" | "trace" -> level; false if unknown. */
bool clog_level_parse(int *out, const char *name);
void clog_set_level(int level);
void clog_set_json(bool json);
bool clog_enabled(int level);

/* One line: "2025-01-31T12:00:00.123Z INFO  message" or {"ts":...,"level":...,"msg":...}.
 * Thread-safe; lines never interleave. */
void cuzk_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "TIMELINE,<ms since clog_start>,<EVENT>,<job_id>,<detail>" on stderr (independent of level). */
void clog_timeline(const char *event, const char *job_id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
