/* log.h: the process log (src/util/log.c, in the core library so the engine and the servers
 * share it; libc only): leveled human or JSON lines on stderr, and the TIMELINE event stream
 * (one line per partition event) that waterfall tools read. The daemon sets level and format
 * from [logging]. See docs/daemon.md ("Observability"). */
#ifndef CUZK_LOG_H
#define CUZK_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum clog_level { CLOG_ERROR, CLOG_WARN, CLOG_INFO, CLOG_DEBUG, CLOG_TRACE };

/* "error" | "warn" | "info" | "debug" | "trace" -> level; false if unknown. */
bool clog_level_parse(int *out, const char *name);
void clog_set_level(int level);
void clog_set_json(bool json);
bool clog_enabled(int level);

/* One line: "2025-01-31T12:00:00.123Z INFO  message" or {"ts":...,"level":...,"msg":...}.
 * Thread-safe; lines never interleave. */
void cuzk_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A client-chosen id (request_id, job_id) as it appears in log lines: between double quotes,
 * with '"' and '\\' escaped by a backslash, and ',' and control characters as \xHH, so that an id
 * like `a kind=porep status=FAILED` cannot read as fields of the line and one with commas
 * cannot add TIMELINE columns. Writes at most cap bytes (NUL included), cutting the id short
 * (the closing quote always written) when it does not fit; cap >= CLOG_ID_MAX holds any id of
 * up to 127 bytes. Returns out. CLOG_ID(s) is the same in a buffer of the enclosing block. */
#define CLOG_ID_MAX (4 * 127 + 3)
char *clog_id(char *out, size_t cap, const char *id);
#define CLOG_ID(s) clog_id((char[CLOG_ID_MAX]){0}, CLOG_ID_MAX, (s))

/* "TIMELINE,<ms since clog_start>,<EVENT>,<job_id>,<detail>" on stderr (independent of level);
 * job_id as clog_id writes it in text mode. */
void clog_timeline(const char *event, const char *job_id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
