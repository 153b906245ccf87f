/* test_page.c: the status page (GET /) in a real browser. A daemon with a token proves
 * SYNTHETIC jobs (three that complete, one whose key file is garbage and fails, two large ones
 * that wait for their key to be read from a file); headless Chromium loads the page and the
 * test checks what it drew against what the test submitted and what /status says: job ids,
 * states, the counters, the error, the key load in progress. It saves a screenshot as
 * <build>/status-page.png. Without the token in the address the page asks for it and shows
 * nothing. Needs Debian's chromium (scripts/install-deps.sh installs it); skipped without. */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/groth16.h"
#include "daemon_harness.h"
#include "test.h"

#define TOKEN "page-test-token-0123456789abcdef"
#define AUTH "Authorization: Bearer " TOKEN
#define BIG 32768   /* constraints of the jobs that wait for their key to load */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool have_chromium(void)
{
    return system("command -v chromium >/dev/null 2>&1") == 0;
}

/* chromium on url: the DOM after the page ran its script for a few (virtual) seconds, or a
 * screenshot into png. --no-sandbox: CI runs as root, where Chromium refuses its sandbox. */
static char *chromium(const char *dir, const char *url, const char *png)
{
    char cmd[8192], out[600];
    snprintf(out, sizeof out, "%s/dom.html", dir);
    snprintf(cmd, sizeof cmd,
             "timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run "
             "--user-data-dir='%s/chromium' --window-size=1400,1250 --virtual-time-budget=4000 "
             "%s%s '%s' > '%s' 2> '%s/chromium.log'",
             dir, png ? "--screenshot=" : "--dump-dom", png ? png : "", url, out, dir);
    int rc = system(cmd);
    ASSERT_MSG(rc == 0, "chromium failed (%d): see %s/chromium.log", rc, dir);
    return h_slurp(out);
}

static json_t *get_status(const char *http)
{
    char *body = NULL;
    ASSERT_EQ_INT(h_http_get_hdr(http, "/status?jobs=200", AUTH, &body), 200);
    json_error_t je;
    json_t *s = json_loads(body, 0, &je);
    ASSERT_MSG(s, "/status is not JSON: %s", je.text);
    free(body);
    return s;
}

static long long counter(json_t *s, const char *name)
{
    return json_integer_value(json_object_get(json_object_get(s, "counters"), name));
}

/* The state of job id in /status's pipelines, or NULL if not listed. */
static const char *job_state(json_t *s, const char *id)
{
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(s, "pipelines"), i, j)
        if (!strcmp(json_string_value(json_object_get(j, "job_id")), id))
            return json_string_value(json_object_get(j, "state"));
    return NULL;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

/* the text of the element with id="name" (the header's numbers) */
static long long dom_number(const char *dom, const char *id)
{
    char pat[64];
    snprintf(pat, sizeof pat, "id=\"%s\">", id);
    const char *p = strstr(dom, pat);
    ASSERT_MSG(p, "no element %s in the page", id);
    return strtoll(p + strlen(pat), NULL, 10);
}

TEST_T(status_page_in_chromium, 600)
{
    if (!have_chromium()) test_skip("chromium not installed (scripts/install-deps.sh installs it)");
    struct daemon d;
    memset(&d, 0, sizeof d);
    h_tmpdir(d.dir, sizeof d.dir);
    char path[600], cmd[2048];

    /* the large jobs' key, as a file the daemon reads with full checks (seconds) */
    snprintf(cmd, sizeof cmd, "'%s/cuzk-params' setup --circuit synthetic --constraints %d --public 2 "
             "--seed 7 --out '%s/setup' >/dev/null 2>&1 && mv '%s/setup/synthetic-c%d-p2.params' "
             "'%s/synthetic-%d.params'", h_bin_dir(), BIG, d.dir, d.dir, BIG, d.dir, BIG);
    ASSERT_EQ_INT(system(cmd), 0);
    snprintf(path, sizeof path, "%s/synthetic-%d.params", d.dir, BIG);
    struct g16_params_info inf;
    struct cuzk_error err;
    ASSERT_OK(g16_params_info(&inf, path, &err), &err);
    /* the oracle for bytes_total: the key's points, uncompressed (96 bytes G1, 192 G2) */
    const uint64_t key_bytes = (inf.n_h + inf.n_l + inf.n_a + inf.n_b_g1) * 96 + inf.n_b_g2 * 192;
    /* a key file that cannot be read: the job that needs it fails */
    snprintf(path, sizeof path, "%s/synthetic-512.params", d.dir);
    FILE *f = fopen(path, "w");
    fputs("not a key\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/token", d.dir);
    f = fopen(path, "w");
    fputs(TOKEN "\n", f);
    fclose(f);
    chmod(path, 0600);

    int hp = h_free_port();
    char cfg[1024], http[64];
    snprintf(cfg, sizeof cfg,
             "[daemon]\nlisten = \"unix://%%DIR%%/cuzk.sock\"\nstate_dir = \"off\"\n"
             "status_listen = \"127.0.0.1:%d\"\nauth_token_file = \"%%DIR%%/token\"\n"
             "[memory]\ntotal_budget = \"2GiB\"\n[srs]\nparam_cache = \"%%DIR%%\"\n", hp);
    snprintf(http, sizeof http, "127.0.0.1:%d", hp);
    h_start_or_fail(&d, cfg, 30);

    /* the page needs no token (it holds no data); /status does */
    char *body = NULL;
    ASSERT_EQ_INT(h_http_get(http, "/", &body), 200);
    ASSERT_STR_CONTAINS(body, "<title>cuzk status</title>");
    ASSERT_MSG(!strstr(body, "src=\"http") && !strstr(body, "href=\"http") && !strstr(body, "@import"),
               "the page loads something from elsewhere");
    free(body);
    ASSERT_EQ_INT(h_http_get(http, "/status", &body), 401);
    free(body);

    char *out = NULL, args[512];
    for (int i = 1; i <= 3; i++) {
        snprintf(args, sizeof args, "--token-file %s/token single -t synthetic --constraints 1024 "
                 "--partitions 2 --request-id page-ok-%d", d.dir, i);
        ASSERT_EQ_INT(h_bench(&out, d.addr, args), 0);
        ASSERT_STR_CONTAINS(out, "status:    COMPLETED");
        free(out);
    }
    snprintf(args, sizeof args, "--token-file %s/token single -t synthetic --constraints 512 "
             "--request-id page-bad", d.dir);
    ASSERT_EQ_INT(h_bench(&out, d.addr, args), 1);
    ASSERT_STR_CONTAINS(out, "status:    FAILED");
    free(out);
    /* two large jobs in the background: they wait while the key file is read and checked */
    for (int i = 1; i <= 2; i++) {
        snprintf(cmd, sizeof cmd, "'%s/cuzk-bench' -a '%s' --token-file '%s/token' single -t synthetic "
                 "--constraints %d --partitions 4 --priority 3 --request-id page-run-%d "
                 "> '%s/run-%d.log' 2>&1 &", h_bin_dir(), d.addr, d.dir, BIG, i, d.dir, i);
        ASSERT_EQ_INT(system(cmd), 0);
    }
    /* the key load in /status: its phase and bytes, against the file's own layout */
    bool seen = false;
    for (double t0 = now_s(); !seen && now_s() - t0 < 120;) {
        json_t *s = get_status(http);
        json_t *l = json_array_get(json_object_get(s, "loading"), 0);
        const char *ph = l ? json_string_value(json_object_get(l, "phase")) : NULL;
        long long done = l ? json_integer_value(json_object_get(l, "bytes_done")) : 0;
        if (ph && strcmp(ph, "preparing") && done > 0) {
            char cid[32];
            snprintf(cid, sizeof cid, "synthetic-%d", BIG);
            ASSERT_STR_EQ(json_string_value(json_object_get(l, "circuit_id")), cid);
            ASSERT_STR_EQ(ph, "reading and checking");
            ASSERT_EQ_U64((uint64_t)json_integer_value(json_object_get(l, "bytes_total")), key_bytes);
            ASSERT((uint64_t)done <= key_bytes);
            ASSERT(json_is_integer(json_object_get(l, "eta_s")));
            seen = true;
        }
        json_decref(s);
        if (!seen) usleep(20000);
    }
    ASSERT_MSG(seen, "no key load with bytes read appeared in /status");

    /* the page, with the token in the address's fragment */
    char url[128];
    snprintf(url, sizeof url, "http://%s/#token=%s", http, TOKEN);
    json_t *before = get_status(http);
    char *dom = chromium(d.dir, url, NULL);
    json_t *after = get_status(http);
    ASSERT_STR_CONTAINS(dom, "data-ready=\"1\"");
    /* the header's counters against the page's own rows: every completed proof listed, one failure */
    ASSERT_EQ_INT(dom_number(dom, "failed"), 1);
    long long done = dom_number(dom, "completed");
    ASSERT(done >= 3 && done <= 5);
    ASSERT_EQ_INT(count(dom, "data-state=\"COMPLETED\""), (int)done);
    ASSERT(done >= counter(before, "total_completed") && done <= counter(after, "total_completed"));
    for (int i = 1; i <= 3; i++) {
        char pat[96];
        snprintf(pat, sizeof pat, "data-recent=\"page-ok-%d\" data-state=\"COMPLETED\"", i);
        ASSERT_STR_CONTAINS(dom, pat);
    }
    ASSERT_STR_CONTAINS(dom, "data-recent=\"page-bad\" data-state=\"FAILED\"");
    /* the error of the last hour, with the reason the job was given */
    ASSERT_STR_CONTAINS(dom, "data-error=\"page-bad\"");
    ASSERT_STR_CONTAINS(dom, "partition 0 SRS load failed: ");
    ASSERT_STR_CONTAINS(dom, "synthetic-512.params");
    /* the large jobs: unfinished before and after the page was read, so listed with 4
     * partitions each; finished in between, among the recent proofs */
    for (int i = 1; i <= 2; i++) {
        char id[32], pat[128];
        snprintf(id, sizeof id, "page-run-%d", i);
        const char *sa = job_state(after, id);
        if (sa && (!strcmp(sa, "QUEUED") || !strcmp(sa, "RUNNING"))) {
            snprintf(pat, sizeof pat, "data-job=\"%s\" data-state=\"", id);
            const char *row = strstr(dom, pat);
            ASSERT_MSG(row, "unfinished job %s is not on the page", id);
            ASSERT(!strncmp(row + strlen(pat), "RUNNING", 7) || !strncmp(row + strlen(pat), "QUEUED", 6));
            const char *parts = strstr(row, "class=\"parts\"");
            const char *end = parts ? strstr(parts, "</div>") : NULL;
            ASSERT(parts && end);
            int n = 0;
            for (const char *p = parts; (p = strstr(p, "<i ")) && p < end; p++) n++;
            ASSERT_EQ_INT(n, 4);
            ASSERT_STR_CONTAINS(row, "high");
        } else {
            snprintf(pat, sizeof pat, "data-recent=\"%s\"", id);
            ASSERT_STR_CONTAINS(dom, pat);
        }
    }
    /* the queue by kind: the synthetic row while the large jobs are unfinished */
    if (counter(before, "running_jobs") + counter(before, "queue_depth") > 0 &&
        counter(after, "running_jobs") + counter(after, "queue_depth") > 0)
        ASSERT_STR_CONTAINS(dom, "data-kind=\"synthetic\"");
    /* the key load, if it still ran after the page was read */
    json_t *la = json_array_get(json_object_get(after, "loading"), 0);
    if (la && json_integer_value(json_object_get(la, "bytes_done")) > 0) {
        char pat[64];
        snprintf(pat, sizeof pat, "data-loading=\"synthetic-%d\"", BIG);
        ASSERT_STR_CONTAINS(dom, pat);
    }
    /* /status itself: the queue by priority agrees with the job list, and each completed
     * proof's phases come in the order a partition goes through them, within its total */
    json_t *q;
    size_t qi;
    json_array_foreach(json_object_get(after, "queue"), qi, q) {
        if (strcmp(json_string_value(json_object_get(q, "proof_kind")), "synthetic")) continue;
        int high = 0, queued = 0;
        size_t ji;
        json_t *j;
        json_array_foreach(json_object_get(after, "pipelines"), ji, j) {
            if (strcmp(json_string_value(json_object_get(j, "state")), "QUEUED")) continue;
            queued++;
            high += json_integer_value(json_object_get(j, "priority")) == 3;
        }
        json_t *bp = json_object_get(q, "queued_by_priority");
        ASSERT_EQ_INT(json_integer_value(json_object_get(bp, "high")), high);
        ASSERT_EQ_INT(json_integer_value(json_object_get(q, "queued_jobs")), queued);
    }
    json_t *r;
    size_t ri;
    int checked = 0;
    json_array_foreach(json_object_get(after, "recent_proofs"), ri, r) {
        if (strncmp(json_string_value(json_object_get(r, "job_id")), "page-ok-", 8)) continue;
        json_t *ph = json_object_get(r, "phases");
        json_t *sy = json_object_get(ph, "synthesis"), *gp = json_object_get(ph, "gpu"),
               *ve = json_object_get(ph, "verify"), *qu = json_object_get(ph, "queue");
        ASSERT(json_is_array(sy) && json_is_array(gp) && json_is_array(ve) && json_is_array(qu));
#define AT(a, i) json_integer_value(json_array_get(a, i))
        long long total = json_integer_value(json_object_get(r, "total_ms"));
        ASSERT(AT(qu, 1) <= AT(sy, 0) && AT(sy, 0) <= AT(sy, 1));
        ASSERT(AT(sy, 0) <= AT(gp, 0) && AT(gp, 0) <= AT(gp, 1));
        ASSERT(AT(gp, 0) <= AT(ve, 0) && AT(ve, 0) <= AT(ve, 1) && AT(ve, 1) <= total);
        ASSERT(AT(gp, 1) <= AT(ve, 1));
#undef AT
        checked++;
    }
    ASSERT_EQ_INT(checked, 3);
    /* keys resident: the small key read in memory, in host memory (no GPU here) */
    ASSERT_STR_CONTAINS(dom, "data-key=\"synthetic-1024\"");
    ASSERT_STR_CONTAINS(dom, "none: proving on the CPU");
    json_decref(before);
    json_decref(after);
    free(dom);

    /* the screenshot a person looks at */
    char png[PATH_MAX];
    snprintf(png, sizeof png, "%s/../status-page.png", h_bin_dir());
    free(chromium(d.dir, url, png));
    struct stat st;
    ASSERT_MSG(!stat(png, &st) && st.st_size > 10000, "no screenshot at %s", png);
    printf("    screenshot: %s\n", png);

    /* no token: the page asks for one and shows no job */
    snprintf(url, sizeof url, "http://%s/", http);
    dom = chromium(d.dir, url, NULL);
    ASSERT_STR_CONTAINS(dom, "<form id=\"auth\" style=\"display: block;\">");
    ASSERT_STR_CONTAINS(dom, "token needed");
    ASSERT(!strstr(dom, "data-job=") && !strstr(dom, "data-recent="));
    free(dom);

    /* let the large jobs finish (their answers are checked by their own cuzk-bench) */
    for (double t0 = now_s(); now_s() - t0 < 300;) {
        json_t *s = get_status(http);
        long long c = counter(s, "total_completed");
        json_decref(s);
        if (c >= 5) break;
        usleep(200000);
    }
    for (int i = 1; i <= 2; i++) {
        snprintf(path, sizeof path, "%s/run-%d.log", d.dir, i);
        char *log = h_slurp(path);
        for (double t0 = now_s(); !strstr(log, "status:") && now_s() - t0 < 30;) {
            free(log);
            usleep(100000);
            log = h_slurp(path);
        }
        ASSERT_STR_CONTAINS(log, "status:    COMPLETED");
        free(log);
    }
    h_stop_and_clean(&d, 30);
}
