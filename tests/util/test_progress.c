/* test_progress.c: the progress module: rate and ETA arithmetic, the terminal and plain line
 * formats, and when lines are printed (each tenth and the interval on a pipe, redraws on a
 * terminal). Expected values are worked out by hand in each case. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/progress.h"
#include "test.h"

#define MiB (1ull << 20)
#define S 1000000000ull

static struct cuzk_progress_view view(uint64_t done, uint64_t total, double secs, double scale,
                                      const char *unit)
{
    struct cuzk_progress_view v = {"k.params", "reading", unit, scale, done, total,
                                   (uint64_t)(secs * 1e9)};
    return v;
}

TEST(rate_and_eta)
{
    /* 100 MiB of 400 MiB in 2 s: 50 MiB/s, 300 MiB left -> 6 s */
    struct cuzk_progress_view v = view(100 * MiB, 400 * MiB, 2.0, 1.0 / MiB, "MiB");
    ASSERT(cuzk_progress_rate(&v) == 50.0 * MiB);
    ASSERT(cuzk_progress_eta_s(&v) == 6.0);
    /* nothing done yet: the rate is 0 and the ETA unknown */
    v = view(0, 400, 3.0, 1, "proofs");
    ASSERT(cuzk_progress_rate(&v) == 0.0);
    ASSERT(cuzk_progress_eta_s(&v) == -1.0);
    /* no time passed: no rate, ETA unknown */
    v = view(5, 400, 0.0, 1, "proofs");
    ASSERT(cuzk_progress_rate(&v) == 0.0);
    ASSERT(cuzk_progress_eta_s(&v) == -1.0);
    /* done (and past the total): ETA 0 */
    v = view(400, 400, 8.0, 1, "proofs");
    ASSERT(cuzk_progress_eta_s(&v) == 0.0);
    ASSERT(cuzk_progress_rate(&v) == 50.0);
    v = view(3, 8, 1.5, 1, "proofs");   /* 2 proofs/s, 5 left: 2.5 s */
    ASSERT(cuzk_progress_eta_s(&v) == 2.5);
}

TEST(line_formats)
{
    char b[256];
    struct cuzk_progress_view v = view(100 * MiB, 400 * MiB, 2.0, 1.0 / MiB, "MiB");
    cuzk_progress_format(b, sizeof b, &v, false);
    ASSERT_STR_EQ(b, "k.params: reading 25% (100.0 of 400.0 MiB, 50.0 MiB/s, ETA 6s)\n");
    cuzk_progress_format(b, sizeof b, &v, true);
    ASSERT_STR_EQ(b, "\rk.params: reading  25%  100.0/400.0 MiB  50.0 MiB/s  ETA 6s\033[K");
    /* integer counts, a slow rate with two decimals, minutes: 3 of 10 in 60 s is 0.05/s and
     * 7 more take 140 s */
    v = view(3, 10, 60.0, 1, "proofs");
    v.phase = NULL;
    v.what = "batch";
    cuzk_progress_format(b, sizeof b, &v, false);
    ASSERT_STR_EQ(b, "batch: 30% (3 of 10 proofs, 0.05 proofs/s, ETA 2m20s)\n");
    /* hours, and the ETA rounded up: 1 of 1000 in 10 s leaves 9990 s = 2h46m30s -> "2h46m" */
    v = view(1, 1000, 10.0, 1, "proofs");
    cuzk_progress_format(b, sizeof b, &v, false);
    ASSERT_STR_CONTAINS(b, "ETA 2h46m)");
    v = view(0, 10, 4.0, 1, "proofs");
    cuzk_progress_format(b, sizeof b, &v, false);
    ASSERT_STR_CONTAINS(b, "0% (0 of 10 proofs, 0.00 proofs/s, ETA ?)");
    /* done: how long it took instead of an ETA (62.5 s rounds up to 1m03s) */
    v = view(10, 10, 62.5, 1, "proofs");
    cuzk_progress_format(b, sizeof b, &v, false);
    ASSERT_STR_CONTAINS(b, "100% (10 of 10 proofs, 0.16 proofs/s, done in 1m03s)\n");
    /* a short buffer is cut, still terminated */
    char small[8];
    int n = cuzk_progress_format(small, sizeof small, &v, false);
    ASSERT(n > 8 && strlen(small) == 7);
}

static char *file_text(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    char *s = calloc(1, (size_t)n + 1);
    rewind(f);
    ASSERT(fread(s, 1, (size_t)n, f) == (size_t)n);
    fseek(f, 0, SEEK_END);
    return s;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

TEST(plain_lines_at_tenths_and_interval)
{
    FILE *f = tmpfile();
    ASSERT(f);
    struct cuzk_progress p;
    cuzk_progress_init(&p, f, "setup", "proofs", 1);
    ASSERT(!p.tty);
    cuzk_progress_phase(&p, "proving", 100);
    uint64_t t0 = atomic_load(&p.t0_ns);
    cuzk_progress_set_at(&p, 5, t0 + 1 * S);     /* below the first tenth: nothing */
    char *s = file_text(f);
    ASSERT_STR_EQ(s, "");
    free(s);
    cuzk_progress_set_at(&p, 12, t0 + 2 * S);    /* the 10% line */
    cuzk_progress_set_at(&p, 15, t0 + 3 * S);    /* same tenth: nothing */
    cuzk_progress_set_at(&p, 35, t0 + 7 * S);    /* 30%: one line, not one per tenth passed */
    s = file_text(f);
    ASSERT_EQ_INT(count_lines(s), 2);
    ASSERT_STR_CONTAINS(s, "setup: proving 12% (12 of 100 proofs, 6.00 proofs/s, ETA 15s)\n");
    ASSERT_STR_CONTAINS(s, "setup: proving 35% (35 of 100 proofs, 5.00 proofs/s, ETA 13s)\n");
    free(s);
    /* a slow phase still says something every CUZK_PROGRESS_PLAIN_S seconds */
    cuzk_progress_set_at(&p, 36, t0 + 7 * S + CUZK_PROGRESS_PLAIN_S * S - 1);
    s = file_text(f);
    ASSERT_EQ_INT(count_lines(s), 2);
    free(s);
    cuzk_progress_set_at(&p, 36, t0 + 7 * S + CUZK_PROGRESS_PLAIN_S * S);
    s = file_text(f);
    ASSERT_EQ_INT(count_lines(s), 3);
    free(s);
    /* the end: the total and how long it took (100 in 40 s) */
    cuzk_progress_set_at(&p, 100, t0 + 40 * S);
    cuzk_progress_end_at(&p, t0 + 40 * S);
    s = file_text(f);
    ASSERT_EQ_INT(count_lines(s), 4);
    ASSERT_STR_CONTAINS(s, "setup: proving 100% (100 of 100 proofs, 2.50 proofs/s, done in 40s)\n");
    ASSERT(!strchr(s, '\r'));
    free(s);
    fclose(f);
}

TEST(terminal_redraws_one_line)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    ASSERT(m >= 0);
    ASSERT(!grantpt(m) && !unlockpt(m));
    int sl = open(ptsname(m), O_RDWR | O_NOCTTY);
    ASSERT(sl >= 0);
    FILE *f = fdopen(sl, "w");
    struct cuzk_progress p;
    cuzk_progress_init(&p, f, "batch", "proofs", 1);
    ASSERT(p.tty);
    cuzk_progress_phase(&p, NULL, 4);
    uint64_t t0 = atomic_load(&p.t0_ns);
    const uint64_t ms = 1000000;
    cuzk_progress_set_at(&p, 1, t0 + CUZK_PROGRESS_TTY_MS * ms);       /* due: drawn */
    cuzk_progress_set_at(&p, 2, t0 + CUZK_PROGRESS_TTY_MS * ms + 1);   /* too soon: not */
    cuzk_progress_set_at(&p, 3, t0 + 3 * CUZK_PROGRESS_TTY_MS * ms);   /* drawn over it */
    cuzk_progress_set_at(&p, 4, t0 + 4 * CUZK_PROGRESS_TTY_MS * ms);
    cuzk_progress_end_at(&p, t0 + 4 * CUZK_PROGRESS_TTY_MS * ms);      /* final, then newline */
    fclose(f);
    char buf[2048];
    size_t n = 0;
    for (;;) {
        ssize_t k = read(m, buf + n, sizeof buf - 1 - n);
        if (k <= 0) break;
        n += (size_t)k;
        if (n && buf[n - 1] == '\n') break;
    }
    buf[n] = 0;
    close(m);
    /* 1 of 4 after 0.25 s: 4/s, 3 left -> 0.75 s, shown rounded up as 1s */
    ASSERT_STR_CONTAINS(buf, "\rbatch:  25%  1/4 proofs  4.00 proofs/s  ETA 1s\033[K");
    ASSERT(!strstr(buf, " 2/4 "));
    ASSERT_STR_CONTAINS(buf, "\rbatch:  75%  3/4 proofs  4.00 proofs/s  ETA 1s\033[K");
    ASSERT_STR_CONTAINS(buf, "\rbatch: 100%  4/4 proofs  4.00 proofs/s  done in 1s\033[K");
    /* one line in all: the only newline is the last character (the pty may add \r) */
    char *nl = strchr(buf, '\n');
    ASSERT(nl && (size_t)(nl - buf) >= n - 2);
}

TEST(silent_tracker_counts_from_threads)
{
    struct cuzk_progress p;
    cuzk_progress_init(&p, NULL, "k", "MiB", 1.0 / MiB);
    cuzk_progress_phase(&p, "checking", 1000);
    for (int i = 0; i < 10; i++) cuzk_progress_add(&p, 7);
    struct cuzk_progress_view v;
    cuzk_progress_read(&p, atomic_load(&p.t0_ns) + 2 * S, &v);
    ASSERT_EQ_U64(v.done, 70);
    ASSERT_EQ_U64(v.total, 1000);
    ASSERT_STR_EQ(v.phase, "checking");
    ASSERT_EQ_U64(v.elapsed_ns, 2 * S);
    cuzk_progress_end(&p);   /* silent: prints nothing, does not crash */
}
