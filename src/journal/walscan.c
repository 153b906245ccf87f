/* walscan.c: the journal's reading of its write-ahead log before SQLite opens it (walscan.h). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "walscan.h"

/* ------------------------------------------------------ write-ahead log scan -- */

/* Read the WAL the way SQLite's recovery will (https://sqlite.org/fileformat2.html#walformat):
 * frames count while their salts match the header and their cumulative checksums hold; the
 * log ends at the last commit frame before the first frame that does not. Done before
 * SQLite opens the database, so the warning can say what its recovery is about to drop:
 * a frame with the header's salts but a wrong checksum, or a partial frame, is damage
 * (torn or garbled); a frame with other salts is a leftover of an earlier log generation
 * (normal); valid frames after the last commit are a transaction that never committed. */
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void wal_cksum(bool big, const uint8_t *d, size_t n, uint32_t *s0, uint32_t *s1)
{
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint32_t x0, x1;
        if (big) { x0 = be32(d + i); x1 = be32(d + i + 4); }
        else {
            x0 = (uint32_t)d[i] | (uint32_t)d[i + 1] << 8 | (uint32_t)d[i + 2] << 16 | (uint32_t)d[i + 3] << 24;
            x1 = (uint32_t)d[i + 4] | (uint32_t)d[i + 5] << 8 | (uint32_t)d[i + 6] << 16 | (uint32_t)d[i + 7] << 24;
        }
        *s0 += x0 + *s1;
        *s1 += x1 + *s0;
    }
}

void wal_scan(const char *path, struct journal_report *r)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size == 0) { close(fd); return; }
    r->wal_size = (uint64_t)st.st_size;
    uint8_t h[32];
    if (pread(fd, h, 32, 0) != 32) {                 /* a torn header: the whole log is void */
        r->wal_damaged = true;
        close(fd);
        return;
    }
    uint32_t magic = be32(h), psz = be32(h + 8);
    bool big = magic == 0x377f0683;
    uint32_t s0 = 0, s1 = 0;
    wal_cksum(big, h, 24, &s0, &s1);
    if ((magic != 0x377f0682 && !big) || psz < 512 || psz > 65536 || (psz & (psz - 1)) ||
        s0 != be32(h + 24) || s1 != be32(h + 28)) {
        r->wal_damaged = true;
        close(fd);
        return;
    }
    size_t fsz = 24 + (size_t)psz;
    uint8_t *f = malloc(fsz);
    if (!f) { close(fd); return; }
    uint64_t off = 32, last_commit_end = 32;
    bool damaged = false;
    for (;;) {
        ssize_t got = pread(fd, f, fsz, (off_t)off);
        if (got <= 0) break;                                   /* clean end */
        if ((size_t)got < fsz) { damaged = true; break; }      /* a partial frame: torn */
        if (memcmp(f + 8, h + 16, 8)) {
            /* Both salts differ: a frame of an earlier generation of the log (SQLite restarts
             * the log with salt-1 + 1 and a new random salt-2), not damage. One differs: a
             * garbled salt. A checkpoint after every request leaves the log in place and
             * the next transaction rewrites it from the start, so frames of the generation
             * before follow the current ones as a rule.) */
            damaged = !memcmp(f + 8, h + 16, 4) || !memcmp(f + 12, h + 20, 4);
            break;
        }
        uint32_t c0 = s0, c1 = s1;
        wal_cksum(big, f, 8, &c0, &c1);
        wal_cksum(big, f + 24, psz, &c0, &c1);
        if (c0 != be32(f + 16) || c1 != be32(f + 20)) { damaged = true; break; }
        s0 = c0;
        s1 = c1;
        off += fsz;
        if (be32(f + 4)) last_commit_end = off;
    }
    r->wal_uncommitted = (unsigned)((off - last_commit_end) / fsz);
    if (damaged) {
        r->wal_damaged = true;
        r->wal_damage_offset = off;
        /* commit frames of this generation from the damaged one on: transactions that had
         * committed and are dropped with it (their checksums cannot be checked any more) */
        for (uint64_t o = off; pread(fd, f, fsz, (off_t)o) == (ssize_t)fsz; o += fsz)
            if (!memcmp(f + 8, h + 16, 8) && be32(f + 4)) r->wal_lost_commits++;
    }
    free(f);
    close(fd);
}

