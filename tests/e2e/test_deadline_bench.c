/* test_deadline_bench.c: scripts/deadline-bench.sh (issue 48, deadlines under load) run as the
 * CPU dry run at 2 KiB, so the suite runs the script the GPU machine runs: the keys (the
 * shared 2 KiB PoRep fixture of tests/filecoin/porep_fixture.h, linked in; the PoSt keys made
 * by the script itself), a CPU daemon, PoSt alone, the warm-up PoRep proof verified apart,
 * the batch alone and under WinningPoSt / WindowPoSt arrivals, and the summary. Its goals
 * (2 s, 5 %, ...) are GPU goals and are not asserted; that every figure is printed, that
 * every request was answered COMPLETED and verified apart, and that the script fails when a
 * proof fails (a WindowPoSt proof checked against the wrong key; a WindowPoSt the daemon
 * FAILS) are. */
#include "test.h"

#ifndef CUZK_CLIENT
#define CUZK_CLIENT 0
#endif

#if !CUZK_CLIENT
TEST(deadline_bench_needs_the_daemon) { test_skip("built with CUZK_CLIENT=0: no daemon, no cuzk-bench client"); }
#else
#include <dirent.h>

#include "cuzk/fil_circuit.h"
#include "filecoin/porep_fixture.h"

#ifndef CUZK_REPO_DIR
#error "CUZK_REPO_DIR (the repository root, for scripts/deadline-bench.sh) is set by the Makefile"
#endif

static struct cuzk_error g_err;
static struct cuzk_error *E = &g_err;

/* <build>/bin, from this test's path <build>/tests/e2e/test_deadline_bench */
static void build_dir(char *out, size_t cap)
{
    char exe[512];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ASSERT(n > 0);
    exe[n] = 0;
    snprintf(out, cap, "%s", dirname(dirname(dirname(exe))));
}

static void link_or_fail(const char *target, const char *path)
{
    unlink(path);
    ASSERT_MSG(symlink(target, path) == 0, "symlink %s -> %s: %s", path, target, strerror(errno));
}

/* The script's PARAMS for the dry run: <build>/test-cache/deadline-2KiB with the PoRep
 * fixture linked in. The PoSt keys the script made on an earlier run are kept unless the
 * circuit's shape changed since (then they are removed and the script makes them again); the
 * vanilla files are always made afresh (0.1 s each). */
static void params_dir(char *dir, size_t cap)
{
    struct param_fixture fx;
    porep_fixture_get(&fx);
    char build[512];
    build_dir(build, sizeof build);
    snprintf(dir, cap, "%s/test-cache/deadline-2KiB", build);
    ASSERT(mkdir(dir, 0777) == 0 || errno == EEXIST);
    char path[1200], target[1200];
    static const char *ext[4] = {"params", "params.validated", "vk", "shape"};
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "%s/%s.%s", dir, fx.stem, ext[k]);
        snprintf(target, sizeof target, "%s/%s.%s", fx.dir, fx.stem, ext[k]);
        link_or_fail(target, path);
    }
    static const enum fil_circuit_kind kinds[2] = {FIL_CIRCUIT_WINDOW_POST, FIL_CIRCUIT_WINNING_POST};
    for (int i = 0; i < 2; i++) {
        struct fil_circuit c;
        char stem[256], fresh[1200];
        ASSERT_OK(fil_circuit_init(&c, kinds[i], 2048, E), E);
        ASSERT_OK(fil_circuit_param_stem(stem, sizeof stem, &c, E), E);
        struct g16_shape s;
        ASSERT_OK(fil_circuit_shape(&s, &c, pool_default(), E), E);
        snprintf(fresh, sizeof fresh, "%s/%s.shape.now", dir, stem);
        ASSERT_OK(g16_shape_save(&s, fresh, E), E);
        g16_shape_free(&s);
        snprintf(path, sizeof path, "%s/%s.shape", dir, stem);
        if (!pf_same_file(fresh, path))
            for (int k = 0; k < 4; k++) {
                snprintf(path, sizeof path, "%s/%s.%s", dir, stem, ext[k]);
                unlink(path);
            }
        unlink(fresh);
    }
    static const char *vanilla[3] = {"deadline-c1-2KiB.json", "deadline-winning-2KiB.json",
                                     "deadline-window-2KiB.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, vanilla[i]);
        unlink(path);
    }
}

/* A copy of PARAMS whose files are links to the originals, for a case that changes one. */
static void params_copy(char *out, size_t cap, const char *dir)
{
    snprintf(out, cap, "/tmp/cuzk-deadline-test-XXXXXX");
    ASSERT(mkdtemp(out));
    DIR *d = opendir(dir);
    ASSERT(d);
    struct dirent *e;
    char path[1200], target[1200];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(target, sizeof target, "%s/%s", dir, e->d_name);
            snprintf(path, sizeof path, "%s/%s", out, e->d_name);
            link_or_fail(target, path);
        }
    closedir(d);
}

static void rm_rf(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT(system(cmd) == 0);
}

/* Run the script at 2 KiB on the CPU (env: more VAR=value words), output in *out; returns its
 * exit status. OUT is a fresh temp directory, removed afterwards. */
static int run_bench(char **out, const char *params, const char *env)
{
    char build[512], outdir[64] = "/tmp/cuzk-deadline-out-XXXXXX", cmd[4096];
    build_dir(build, sizeof build);
    ASSERT(mkdtemp(outdir));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && REQUIRE_GPU=0 BIN='%s/bin' SIZE=2KiB WSIZE=2KiB INTERVAL=1 COUNT_WINNING=3 ALONE_N=1 "
             "PARAMS='%s' %s scripts/deadline-bench.sh '%s' '%s' 2>&1; echo \"exit=$?\"; "
             "cat '%s/requests.tsv' 2>/dev/null",
             CUZK_REPO_DIR, build, params, env, build, outdir, outdir);
    FILE *p = popen(cmd, "r");
    ASSERT(p);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    ASSERT(buf);
    for (size_t got; (got = fread(buf + n, 1, cap - n - 1, p)) > 0;) {
        n += got;
        if (n + 1 == cap) ASSERT((buf = realloc(buf, cap *= 2)));
    }
    buf[n] = 0;
    ASSERT(pclose(p) != -1);
    rm_rf(outdir);
    *out = buf;
    const char *x = strstr(buf, "\nexit=");
    ASSERT_MSG(x, "no exit status in the output:\n%s", buf);
    return atoi(x + 6);
}

TEST_T(deadline_bench_dry_run_at_2kib, 900)
{
    porep_fixture_skip_if_slow();
    char dir[600];
    params_dir(dir, sizeof dir);
    char *out = NULL;
    int rc = run_bench(&out, dir, "");
    printf("%s", out);
    ASSERT_MSG(rc == 0, "deadline-bench.sh exit %d (output above)", rc);
    /* every figure of the summary, with the counts the schedule sets: 3 WinningPoSt (one a
     * second), 2 WindowPoSt (every 2 s), one of each alone */
    ASSERT_STR_CONTAINS(out, "=== deadline-bench summary ===");
    ASSERT_STR_CONTAINS(out, "WinningPoSt alone:        n=1 ");
    ASSERT_STR_CONTAINS(out, "WinningPoSt under load:   n=3 ");
    ASSERT_STR_CONTAINS(out, "arrivals during the batch: 3, goal >= COUNT_WINNING=3: PASS");
    ASSERT_STR_CONTAINS(out, "WindowPoSt alone:         n=1 ");
    ASSERT_STR_CONTAINS(out, "WindowPoSt under load:    n=2 ");
    ASSERT_STR_CONTAINS(out, "PoRep partition device lock (batch alone): median ");
    ASSERT_STR_CONTAINS(out, "PoRep batch alone:        ");
    ASSERT_STR_CONTAINS(out, "PoRep batch under load:   ");
    ASSERT_STR_CONTAINS(out, "throughput loss:          ");
    ASSERT_STR_CONTAINS(out, "GPU busy fraction:        ");
    ASSERT_STR_CONTAINS(out, "7 PoSt requests, 0 not COMPLETED, 7 verified apart from the daemon");
    ASSERT_STR_CONTAINS(out, "deadline-bench: DONE: every proof verified");
    /* no figure left unknown: s/proof, loss and busy fraction were all measured */
    const char *sum = strstr(out, "=== deadline-bench summary ===");
    ASSERT_MSG(!strstr(sum, " ? "), "a figure of the summary is missing:\n%s", sum);
    /* the requests' rows: 7 COMPLETED, the loaded ones with the ids the daemon's log used */
    int rows = 0;
    for (const char *l = strstr(out, "\nexit=0\n"); l && (l = strchr(l + 1, '\n')) && l[1];) {
        rows++;
        ASSERT_MSG(strstr(l + 1, "\tCOMPLETED\t") && strstr(l + 1, "\tCOMPLETED\t") < strchr(l + 1, '\n'),
                   "a request not COMPLETED: %.200s", l + 1);
    }
    ASSERT_EQ_INT(rows, 7);
    ASSERT_STR_CONTAINS(out, "load\twinning\twinning-load-3\t0\tCOMPLETED\t");
    ASSERT_STR_CONTAINS(out, "load\twindow\twindow-load-2\t0\tCOMPLETED\t");
    free(out);
}

/* The returned WindowPoSt proof checked against the WinningPoSt key's .vk: the verification
 * apart from the daemon refuses it and the script exits 1 naming it, in the alone phase. */
TEST_T(deadline_bench_fails_when_a_proof_does_not_verify, 600)
{
    porep_fixture_skip_if_slow();
    char dir[600], bad[600], path[1200], target[1200], *out = NULL;
    params_dir(dir, sizeof dir);
    ASSERT_EQ_INT(run_bench(&out, dir, "KEYS_ONLY=1"), 0);   /* the PoSt keys, when missing */
    free(out);
    params_copy(bad, sizeof bad, dir);
    struct fil_circuit c;
    char wstem[256], nstem[256];
    ASSERT_OK(fil_circuit_init(&c, FIL_CIRCUIT_WINDOW_POST, 2048, E), E);
    ASSERT_OK(fil_circuit_param_stem(wstem, sizeof wstem, &c, E), E);
    ASSERT_OK(fil_circuit_init(&c, FIL_CIRCUIT_WINNING_POST, 2048, E), E);
    ASSERT_OK(fil_circuit_param_stem(nstem, sizeof nstem, &c, E), E);
    snprintf(path, sizeof path, "%s/%s.vk", bad, wstem);
    snprintf(target, sizeof target, "%s/%s.vk", dir, nstem);
    link_or_fail(target, path);
    int rc = run_bench(&out, bad, "");
    rm_rf(bad);
    ASSERT_MSG(rc == 1, "exit %d, expected 1; output:\n%s", rc, out);
    ASSERT_STR_CONTAINS(out, "deadline-bench: FAIL: the window proof does not verify apart from the daemon");
    ASSERT_STR_CONTAINS(out, "verified: no");
    ASSERT_MSG(!strstr(out, "=== deadline-bench summary ==="), "the run went on past the failure:\n%s", out);
    free(out);
}

/* A WindowPoSt vanilla file made for another randomness than the one sent: the daemon's
 * native check FAILS the request, and the script exits 1 with the daemon's error. */
TEST_T(deadline_bench_fails_when_the_daemon_fails_a_proof, 600)
{
    porep_fixture_skip_if_slow();
    char dir[600], bad[600], path[1200], cmd[4096], build[512], *out = NULL;
    params_dir(dir, sizeof dir);
    ASSERT_EQ_INT(run_bench(&out, dir, "KEYS_ONLY=1"), 0);
    free(out);
    params_copy(bad, sizeof bad, dir);
    snprintf(path, sizeof path, "%s/deadline-window-2KiB.json", bad);
    unlink(path);
    build_dir(build, sizeof build);
    snprintf(cmd, sizeof cmd, "'%s/bin/cuzk-bench' gen-vanilla window-post --sector-size 2KiB --randomness "
             "0100000000000000000000000000000000000000000000000000000000000000 -o '%s' > /dev/null", build, path);
    ASSERT(system(cmd) == 0);
    int rc = run_bench(&out, bad, "");
    rm_rf(bad);
    ASSERT_MSG(rc == 1, "exit %d, expected 1; output:\n%s", rc, out);
    ASSERT_STR_CONTAINS(out, "deadline-bench: FAIL: window-alone-1: status:    FAILED");
    ASSERT_STR_CONTAINS(out, "synthesis failed");
    free(out);
}
#endif
