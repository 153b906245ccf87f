/* test_main.c: the runner linked into every test binary. Runs each registered test in a
 * forked child with a timeout (CUZK_TEST_TIMEOUT_MULT scales it for slow builds), prints
 * one line per test and a closing "N passed, N failed, N skipped" line. */
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#define MAX_TESTS 512
#define SKIP_EXIT 77

static struct { const char *name, *file; test_fn fn; unsigned timeout_s; } tests[MAX_TESTS];
static int ntests;
static cuzk_rng rng;
static uint64_t seed;

void test_register(const char *name, test_fn fn, const char *file, unsigned timeout_s)
{
    if (ntests < MAX_TESTS) {
        tests[ntests].name = name;
        tests[ntests].fn = fn;
        tests[ntests].file = file;
        tests[ntests].timeout_s = timeout_s;
        ntests++;
    }
}

cuzk_rng *test_rng(void) { return &rng; }
uint64_t test_seed(void) { return seed; }

void test_hex(char *out, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[n - 1 - i]);
    out[2 * n] = 0;
}

_Noreturn void test_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  skip reason: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    _exit(SKIP_EXIT);
}

_Noreturn void test_fail_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("  %s:%d: ", file, line);
    vprintf(fmt, ap);
    printf("\n  (replay with CUZK_TEST_SEED=%" PRIu64 ")\n", seed);
    va_end(ap);
    fflush(stdout);
    _exit(1);
}

int main(int argc, char **argv)
{
    const char *s = getenv("CUZK_TEST_SEED");
    seed = s && *s ? strtoull(s, NULL, 10) : ((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
    double mult = 1.0;
    const char *m = getenv("CUZK_TEST_TIMEOUT_MULT");
    if (m && *m) mult = atof(m);
    struct cuzk_error terr;
    if (pool_default_set_threads(getenv("CUZK_THREADS"), &terr)) {
        fprintf(stderr, "CUZK_THREADS: %s\n", terr.msg);
        return 2;
    }
    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < ntests; i++) {
        if (argc > 1) {
            int match = 0;
            for (int a = 1; a < argc; a++) match |= strcmp(argv[a], tests[i].name) == 0;
            if (!match) continue;
        }
        fflush(stdout);
        uint64_t t0 = cuzk_now_ns();
        pid_t pid = fork();
        if (pid == 0) {
            cuzk_rng_seed(&rng, seed ^ (uint64_t)i * 0x9e3779b97f4a7c15ULL);
            alarm((unsigned)(tests[i].timeout_s * mult) + 1);
            tests[i].fn();
            fflush(stdout);
            _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        double ms = (double)(cuzk_now_ns() - t0) / 1e6;
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
            printf("PASS %s (%.0f ms)\n", tests[i].name, ms);
            passed++;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == SKIP_EXIT) {
            printf("SKIP %s\n", tests[i].name);
            skipped++;
        } else {
            if (WIFSIGNALED(st))
                printf("FAIL %s: killed by signal %d%s (seed %" PRIu64 ")\n", tests[i].name,
                       WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (timeout)" : "", seed);
            else
                printf("FAIL %s (%s)\n", tests[i].name, tests[i].file);
            failed++;
        }
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
