/* acklog.c: the acknowledgement log (acklog.h). Each entry is self-checking so a cut or a
 * garbled byte costs the entries it touches, not the rest of the file:
 *   [0] 0xC7  [1] type 'A'/'F'/'D'  [2] id length n (< 128)  [3] 0
 *   [4..12) seq, little endian  [12..12+n) id  [12+n..16+n) CRC-32 of bytes [0, 12+n)
 * A reader that meets a byte that does not start a valid entry moves on one byte at a time
 * until one does (a false match needs a CRC-32 collision on top of the framing). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acklog.h"
#include "cuzk/log.h"

#define MAGIC 0xC7
#define HDR 12

struct acks {
    int fd;
    uint64_t base, grown;
    bool dirty;                      /* appended since the last fdatasync */
};

static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return ~c;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static size_t encode(uint8_t *out, char type, uint64_t seq, const char *id)
{
    size_t n = strnlen(id, 127);
    out[0] = MAGIC;
    out[1] = (uint8_t)type;
    out[2] = (uint8_t)n;
    out[3] = 0;
    for (int i = 0; i < 8; i++) out[4 + i] = (uint8_t)(seq >> (8 * i));
    memcpy(out + HDR, id, n);
    uint32_t c = crc32_ieee(out, HDR + n);
    for (int i = 0; i < 4; i++) out[HDR + n + i] = (uint8_t)(c >> (8 * i));
    return HDR + n + 4;
}

/* The length of the valid entry at p (0: none starts there). */
static size_t decode(const uint8_t *p, size_t avail)
{
    if (avail < HDR + 4 || p[0] != MAGIC || p[3] != 0 || p[2] >= 128) return 0;
    if (p[1] != 'A' && p[1] != 'F' && p[1] != 'D') return 0;
    size_t n = p[2];
    if (avail < HDR + n + 4) return 0;
    uint32_t c = crc32_ieee(p, HDR + n);
    uint32_t want = (uint32_t)p[HDR + n] | (uint32_t)p[HDR + n + 1] << 8 |
                    (uint32_t)p[HDR + n + 2] << 16 | (uint32_t)p[HDR + n + 3] << 24;
    return c == want ? HDR + n + 4 : 0;
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = ((const struct acks_entry *)a)->seq, y = ((const struct acks_entry *)b)->seq;
    return x < y ? -1 : x > y;
}

int acks_load(const char *path, struct acks_read *rd)
{
    memset(rd, 0, sizeof *rd);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : errno;
    struct stat st;
    if (fstat(fd, &st) != 0) { int e = errno; close(fd); return e; }
    rd->existed = true;
    rd->size = (uint64_t)st.st_size;
    uint8_t *buf = malloc(rd->size ? rd->size : 1);
    if (!buf) { close(fd); return ENOMEM; }
    size_t got = 0;
    while (got < rd->size) {
        ssize_t r = pread(fd, buf + got, rd->size - got, (off_t)got);
        if (r <= 0) { int e = r < 0 ? errno : EIO; free(buf); close(fd); return e; }
        got += (size_t)r;
    }
    close(fd);
    /* every entry in file order, then merged per seq */
    size_t cap = 64, n = 0;
    struct acks_entry *e = malloc(cap * sizeof *e);
    if (!e) { free(buf); return ENOMEM; }
    bool in_bad = false;
    for (size_t pos = 0; pos < rd->size;) {
        size_t len = decode(buf + pos, rd->size - pos);
        if (!len) {
            if (!in_bad) {
                if (!rd->bad_regions) rd->first_bad_offset = pos;
                rd->bad_regions++;
            }
            in_bad = true;
            rd->bad_bytes++;
            pos++;
            continue;
        }
        in_bad = false;
        if (n == cap) {
            struct acks_entry *ne = realloc(e, 2 * cap * sizeof *e);
            if (!ne) { free(e); free(buf); return ENOMEM; }
            e = ne;
            cap *= 2;
        }
        struct acks_entry *x = &e[n++];
        memset(x, 0, sizeof *x);
        x->seq = le64(buf + pos + 4);
        memcpy(x->id, buf + pos + HDR, buf[pos + 2]);
        x->acked = buf[pos + 1] == 'A';
        x->finished = buf[pos + 1] == 'F';
        x->deleted = buf[pos + 1] == 'D';
        pos += len;
    }
    free(buf);
    qsort(e, n, sizeof *e, by_seq);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && e[m - 1].seq == e[i].seq) {
            struct acks_entry *x = &e[m - 1];
            if (!x->id[0]) memcpy(x->id, e[i].id, sizeof x->id);
            x->acked |= e[i].acked;
            x->finished |= e[i].finished;
            x->deleted |= e[i].deleted;
        } else {
            e[m++] = e[i];
        }
    }
    rd->e = e;
    rd->n = m;
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : EIO;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int fsync_dir_of(const char *path)
{
    char dir[600];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    int rc = fsync(fd) ? errno : 0;
    close(fd);
    return rc;
}

int acks_rewrite(struct acks **out, const char *path, sqlite3 *db)
{
    char tmp[640];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) return errno;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT seq, id, finished FROM jobs ORDER BY seq", -1, &st,
                                NULL) ? EIO : 0;
    uint8_t buf[8192];
    size_t used = 0;
    uint64_t total = 0;
    int s = SQLITE_DONE;
    while (!rc && (s = sqlite3_step(st)) == SQLITE_ROW) {
        uint64_t seq = (uint64_t)sqlite3_column_int64(st, 0);
        const char *id = (const char *)sqlite3_column_text(st, 1);
        if (used + 2 * (HDR + 128 + 4) > sizeof buf) {
            rc = write_all(fd, buf, used);
            total += used;
            used = 0;
        }
        used += encode(buf + used, 'A', seq, id ? id : "");
        if (sqlite3_column_int(st, 2)) used += encode(buf + used, 'F', seq, id ? id : "");
    }
    sqlite3_finalize(st);
    if (!rc && s != SQLITE_DONE) rc = EIO;
    if (!rc && used) rc = write_all(fd, buf, used);
    total += used;
    if (!rc && fdatasync(fd)) rc = errno;
    close(fd);
    if (!rc && rename(tmp, path)) rc = errno;
    if (rc) { unlink(tmp); return rc; }
    if ((rc = fsync_dir_of(path))) return rc;
    struct acks *a = calloc(1, sizeof *a);
    if (!a) return ENOMEM;
    a->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (a->fd < 0) { rc = errno; free(a); return rc; }
    a->base = total;
    acks_close(*out);
    *out = a;
    return 0;
}

int acks_append(struct acks *a, char type, uint64_t seq, const char *id, bool sync)
{
    if (!a) return EBADF;
    uint8_t buf[HDR + 128 + 4];
    size_t n = encode(buf, type, seq, id);
    int rc = write_all(a->fd, buf, n);
    if (!rc) a->grown += n;
    a->dirty = true;
    return !rc && sync ? acks_sync(a) : rc;
}

int acks_sync(struct acks *a)
{
    if (!a) return EBADF;
    if (!a->dirty) return 0;
    if (fdatasync(a->fd)) return errno;
    a->dirty = false;
    return 0;
}

uint64_t acks_grown(const struct acks *a) { return a ? a->grown : 0; }
uint64_t acks_base(const struct acks *a) { return a ? a->base : 0; }

void acks_close(struct acks *a)
{
    if (!a) return;
    close(a->fd);
    free(a);
}

/* ------------------------------------------------------------- comparison -- */

static int push(struct acks_entry **v, size_t *n, size_t *cap, const struct acks_entry *x)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        struct acks_entry *nv = realloc(*v, nc * sizeof *nv);
        if (!nv) return ENOMEM;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = *x;
    return 0;
}

int acks_compare(const struct acks_read *rd, sqlite3 *db, struct acks_diff *d)
{
    memset(d, 0, sizeof *d);
    sqlite3_stmt *by_seq_st = NULL, *by_id = NULL;
    if (sqlite3_prepare_v2(db, "SELECT finished, id FROM jobs WHERE seq = ?1", -1, &by_seq_st,
                           NULL) ||
        sqlite3_prepare_v2(db, "SELECT 1 FROM jobs WHERE id = ?1 LIMIT 1", -1, &by_id, NULL)) {
        sqlite3_finalize(by_seq_st);
        return EIO;
    }
    size_t cap_lost = 0, cap_undone = 0;
    int rc = 0;
    for (size_t i = 0; i < rd->n && !rc; i++) {
        const struct acks_entry *x = &rd->e[i];
        if (!x->acked || x->deleted) continue;
        sqlite3_bind_int64(by_seq_st, 1, (sqlite3_int64)x->seq);
        int s = sqlite3_step(by_seq_st);
        if (s == SQLITE_ROW) {
            if (x->finished && !sqlite3_column_int(by_seq_st, 0))
                rc = push(&d->undone, &d->n_undone, &cap_undone, x);
        } else if (s == SQLITE_DONE) {
            /* the same id under another record (a resubmission) still answers for it */
            sqlite3_bind_text(by_id, 1, x->id, -1, SQLITE_STATIC);
            s = sqlite3_step(by_id);
            if (s == SQLITE_DONE) rc = push(&d->lost, &d->n_lost, &cap_lost, x);
            else if (s != SQLITE_ROW) rc = EIO;
            sqlite3_reset(by_id);
        } else {
            rc = EIO;
        }
        sqlite3_reset(by_seq_st);
    }
    sqlite3_finalize(by_seq_st);
    sqlite3_finalize(by_id);
    return rc;
}

size_t acks_format_ids(const struct acks_entry *e, size_t n, char *out, size_t cap)
{
    size_t used = 0, i = 0;
    out[0] = 0;
    for (; i < n; i++) {
        /* ids are printable (the server refuses others); quoted so commas cannot mislead */
        int w = snprintf(out + used, cap - used, "%s'%s'", i ? ", " : "", e[i].id);
        if (w < 0 || used + (size_t)w >= cap) { out[used] = 0; break; }
        used += (size_t)w;
    }
    return i;
}

void acks_log_ids(int level, const char *head, const struct acks_entry *e, size_t n,
                  const char *tail)
{
    char ids[3000];
    size_t done = 0;
    while (done < n) {
        size_t k = acks_format_ids(e + done, n - done, ids, sizeof ids);
        if (!k) k = 1, snprintf(ids, sizeof ids, "'%.127s'", e[done].id);   /* cannot happen */
        if (!done && k == n)
            cuzk_log(level, "%s: %s; %s", head, ids, tail);
        else
            cuzk_log(level, "%s (ids %zu to %zu of %zu): %s; %s", head, done + 1, done + k, n,
                     ids, tail);
        done += k;
    }
}
