/* fuzz_util.h: helpers shared by the libFuzzer harnesses: an in-memory file (memfd) with a
 * path, for the parsers that take a path, and an error-contract check. */
#ifndef CUZK_FUZZ_UTIL_H
#define CUZK_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cuzk/err.h"

/* One memfd per process, rewritten each iteration: no disk traffic and no temp-file litter.
 * The path (/proc/self/fd/N) opens a fresh description at offset 0, as a real file would. */
static inline const char *fuzz_memfile(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("cuzk-fuzz", MFD_CLOEXEC);
        if (fd < 0) { perror("memfd_create"); abort(); }   /* harness setup, not the library */
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("memfd write");
        abort();
    }
    return path;
}

/* A failing call must say why: a non-zero code and a non-empty message (err.h contract). */
static inline void fuzz_check_err(int rc, const struct cuzk_error *e)
{
    if (rc != CUZK_OK && (e->code != rc || e->msg[0] == '\0')) {
        fprintf(stderr, "error contract broken: rc %d, err.code %d, msg \"%s\"\n", rc, e->code, e->msg);
        abort();
    }
}

#endif
