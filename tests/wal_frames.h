/* wal_frames.h: test helper, read apart from src/journal/walscan.c so it stays an independent
 * view of SQLite's write-ahead log (32-byte header, frames of a 24-byte header + one 4096-byte
 * page). */
#ifndef CUZK_TESTS_WAL_FRAMES_H
#define CUZK_TESTS_WAL_FRAMES_H

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

/* The end of the last frame of the WAL's current generation (frames that carry the header's
 * salts): the checkpoint after each request makes the next transaction rewrite the WAL from its
 * start, so frames of the generation before may follow. */
static inline off_t wal_current_end(const char *wal)
{
    int fd = open(wal, O_RDONLY);
    ASSERT_MSG(fd >= 0, "no write-ahead log at %s", wal);
    uint8_t h[32], f[24];
    ASSERT(pread(fd, h, 32, 0) == 32);
    off_t end = 32;
    for (off_t o = 32; pread(fd, f, 24, o) == 24 && !memcmp(f + 8, h + 16, 8); o += 24 + 4096)
        end = o + 24 + 4096;
    close(fd);
    return end;
}

#endif
