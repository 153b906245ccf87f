/* log.c: leveled human/JSON log lines and TIMELINE events on stderr (one write per line);
 * the core library's logger (include/cuzk/log.h), configured by the daemon. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "cuzk/log.h"
#include "cuzk/util.h"

static int g_level = CLOG_INFO;
static bool g_json;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_start_ns;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void start_clock(void) { g_start_ns = cuzk_now_ns(); }

static const char *level_names[] = {"error", "warn", "info", "debug", "trace"};

bool clog_level_parse(int *out, const char *name)
{
    for (int i = 0; i < 5; i++)
        if (!strcmp(name, level_names[i])) { *out = i; return true; }
    return false;
}

void clog_set_level(int level) { g_level = level; pthread_once(&g_once, start_clock); }
void clog_set_json(bool json) { g_json = json; }
bool clog_enabled(int level) { return level <= g_level; }

/* JSON string body escaping (quotes, backslash, control characters). */
static size_t json_escape(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (; *s && n + 7 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') { out[n++] = '\\'; out[n++] = (char)ch; }
        else if (ch == '\n') { out[n++] = '\\'; out[n++] = 'n'; }
        else if (ch < 0x20) n += (size_t)snprintf(out + n, cap - n, "\\u%04x", ch);
        else out[n++] = (char)ch;
    }
    out[n] = 0;
    return n;
}

/* Text-mode escaping of a whole formatted message: a value that carries a newline (a request
 * or circuit id from a client, a path) must not start a line of its own, which could forge an
 * `error` line or a TIMELINE row. Control characters (C0, DEL, and C1 as UTF-8) become \n,
 * \r, \t or \xHH; everything else, UTF-8 included, is kept. */
static void text_escape(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 9 < cap; p++) {
        unsigned char ch = *p;
        if (ch == '\n' || ch == '\r' || ch == '\t') {
            out[n++] = '\\';
            out[n++] = ch == '\n' ? 'n' : ch == '\r' ? 'r' : 't';
        } else if (ch < 0x20 || ch == 0x7f) {
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", ch);
        } else if (ch == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            n += (size_t)snprintf(out + n, cap - n, "\\xc2\\x%02x", p[1]);
            p++;
        } else {
            out[n++] = (char)ch;
        }
    }
    out[n] = 0;
}

char *clog_id(char *out, size_t cap, const char *id)
{
    if (!cap) return out;
    if (cap < 3) { out[0] = 0; return out; }
    size_t n = 0;
    out[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)(id ? id : ""); *p; p++) {
        char e[5];
        size_t k;
        if (*p == '"' || *p == '\\') { e[0] = '\\'; e[1] = (char)*p; k = 2; }
        else if (*p == ',' || *p < 0x20 || *p == 0x7f) k = (size_t)snprintf(e, sizeof e, "\\x%02x", *p);
        else { e[0] = (char)*p; k = 1; }
        if (n + k + 2 > cap) break;   /* room for the closing quote and the NUL */
        memcpy(out + n, e, k);
        n += k;
    }
    out[n++] = '"';
    out[n] = 0;
    return out;
}

void cuzk_log(int level, const char *fmt, ...)
{
    if (level > g_level) return;
    pthread_once(&g_once, start_clock);
    char msg[2048], line[4400], ts[40];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    size_t tn = strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(ts + tn, sizeof ts - tn, ".%03ldZ", (long)(tv.tv_usec / 1000));
    if (g_json) {
        char esc[4200];
        json_escape(esc, sizeof esc, msg);
        snprintf(line, sizeof line, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"%s\"}\n", ts,
                 level_names[level], esc);
    } else {
        char esc[4200];
        text_escape(esc, sizeof esc, msg);
        snprintf(line, sizeof line, "%s %-5s %s\n", ts, level_names[level], esc);
    }
    pthread_mutex_lock(&g_mu);
    fputs(line, stderr);
    fflush(stderr);
    pthread_mutex_unlock(&g_mu);
}

void clog_timeline(const char *event, const char *job_id, const char *fmt, ...)
{
    pthread_once(&g_once, start_clock);
    char detail[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    unsigned long long ms = (unsigned long long)((cuzk_now_ns() - g_start_ns) / 1000000);
    char ejob[600], edetail[2100];
    if (g_json) {
        json_escape(ejob, sizeof ejob, job_id);
        json_escape(edetail, sizeof edetail, detail);
    } else {
        clog_id(ejob, sizeof ejob, job_id);
        text_escape(edetail, sizeof edetail, detail);
    }
    pthread_mutex_lock(&g_mu);
    if (g_json)   /* one JSON object per line, like every other log line in this mode */
        fprintf(stderr, "{\"timeline_ms\":%llu,\"event\":\"%s\",\"job_id\":\"%s\",\"detail\":\"%s\"}\n",
                ms, event, ejob, edetail);
    else
        fprintf(stderr, "TIMELINE,%llu,%s,%s,%s\n", ms, event, ejob, edetail);
    fflush(stderr);
    pthread_mutex_unlock(&g_mu);
}
