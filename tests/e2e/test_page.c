/* test_page.c: the status page (GET /) in a real browser. A daemon with a token proves
 * SYNTHETIC jobs (three that complete, one whose key file is garbage and fails, two large ones
 * that wait for their key to be read from a file); headless Chromium loads the page and the
 * test checks what it drew against what the test submitted and what /status says: job ids,
 * states, the counters, the error, the key load in progress. It saves a screenshot as
 * <build>/status-page.png. Without the token in the address the page asks for it and shows
 * nothing. Needs Debian's chromium (scripts/install-deps.sh installs it); skipped without. */
#include <arpa/inet.h>
#include <jansson.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuzk/groth16.h"
#include "daemon_harness.h"
#include "status_page.h"   /* the page the daemon serves (build/gen, from src/server/page.html) */
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
    h_new(&d);
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

/* ------------------------------------------------------------------------------------------
 * The page's drawing of what this CI machine cannot produce (GPUs with NVML gauges, keys in
 * VRAM, a key load, a long queue, markup in an error): the same page bytes, served with a
 * /status document written here, so every value drawn is known. */

#define GiB (1024.0 * 1024 * 1024)
static const char FAKE_STATUS[] =
    "{\"uptime_secs\": 3725, \"now_unix_ms\": 1796670000000,"
    "\"memory\": {\"total_bytes\": 274877906944, \"used_bytes\": 137438953472, \"available_bytes\": 137438953472,"
    "  \"pinned_bytes\": 0, \"pinned_peak_bytes\": 0},"
    "\"synthesis\": {\"max_concurrent\": 18, \"active\": 5},"
    "\"pipelines\": ["
    "  {\"job_id\": \"job-a\", \"proof_kind\": \"porep-c2\", \"priority\": 2, \"state\": \"RUNNING\", \"started_secs_ago\": 95,"
    "   \"total_partitions\": 10, \"partitions_done\": 3, \"partitions\": ["
    "    {\"index\": 0, \"state\": \"done\", \"synth_ms\": 1, \"gpu_ms\": 2}, {\"index\": 1, \"state\": \"done\", \"synth_ms\": 1, \"gpu_ms\": 2},"
    "    {\"index\": 2, \"state\": \"done\", \"synth_ms\": 1, \"gpu_ms\": 2}, {\"index\": 3, \"state\": \"gpu\", \"synth_ms\": 1, \"gpu_ms\": 0},"
    "    {\"index\": 4, \"state\": \"synth_done\", \"synth_ms\": 1, \"gpu_ms\": 0}, {\"index\": 5, \"state\": \"synth_done\", \"synth_ms\": 1, \"gpu_ms\": 0},"
    "    {\"index\": 6, \"state\": \"pending\", \"synth_ms\": 0, \"gpu_ms\": 0}, {\"index\": 7, \"state\": \"pending\", \"synth_ms\": 0, \"gpu_ms\": 0},"
    "    {\"index\": 8, \"state\": \"pending\", \"synth_ms\": 0, \"gpu_ms\": 0}, {\"index\": 9, \"state\": \"pending\", \"synth_ms\": 0, \"gpu_ms\": 0}]},"
    "  {\"job_id\": \"job-b\", \"proof_kind\": \"porep-c2\", \"priority\": 4, \"state\": \"QUEUED\", \"started_secs_ago\": 3,"
    "   \"total_partitions\": 1, \"partitions_done\": 0, \"partitions\": [{\"index\": 0, \"state\": \"pending\", \"synth_ms\": 0, \"gpu_ms\": 0}]},"
    "  {\"job_id\": \"job-c\", \"proof_kind\": \"porep-c2\", \"priority\": 2, \"state\": \"QUEUED\", \"started_secs_ago\": 2,"
    "   \"total_partitions\": 1, \"partitions_done\": 0, \"partitions\": [{\"index\": 0, \"state\": \"pending\", \"synth_ms\": 0, \"gpu_ms\": 0}]},"
    "  {\"job_id\": \"job-d\", \"proof_kind\": \"porep-c2\", \"priority\": 2, \"state\": \"COMPLETED\", \"started_secs_ago\": 200,"
    "   \"total_partitions\": 1, \"partitions_done\": 1, \"partitions\": [{\"index\": 0, \"state\": \"done\", \"synth_ms\": 1, \"gpu_ms\": 1}]}],"
    "\"pipelines_total\": 4, \"pipelines_offset\": 0,"
    "\"gpu_workers\": [],"
    "\"gpus\": ["
    "  {\"ordinal\": 0, \"name\": \"Fake H100\", \"vram_total_bytes\": 85899345920, \"vram_free_bytes\": 21474836480,"
    "   \"workers\": 2, \"busy_workers\": 1, \"current_job\": \"job-a\", \"current_proof_kind\": \"porep-c2\","
    "   \"telemetry\": {\"present\": true, \"utilization_ratio\": 0.87, \"temperature_celsius\": 71, \"power_watts\": 312.5,"
    "   \"sm_clock_hertz\": 1755000000, \"ecc_corrected_errors\": null,"
    "   \"throttle_reasons\": [\"sw_power_cap\"], \"pcie_rx_bytes_per_second\": 1073741824}},"
    "  {\"ordinal\": 1, \"name\": \"Fake H100\", \"vram_total_bytes\": 85899345920, \"vram_free_bytes\": 85899345920,"
    "   \"workers\": 2, \"busy_workers\": 0, \"current_job\": null, \"current_proof_kind\": null,"
    "   \"telemetry\": {\"present\": true, \"utilization_ratio\": 0.03, \"temperature_celsius\": 40, \"power_watts\": 70.0,"
    "   \"sm_clock_hertz\": 345000000, \"ecc_corrected_errors\": null,"
    "   \"throttle_reasons\": [], \"pcie_rx_bytes_per_second\": 0}}],"
    "\"prover\": {\"device\": \"gpu\", \"reason\": \"\"},"
    "\"allocations\": {\"srs\": ["
    "  {\"circuit_id\": \"porep-32g\", \"tier\": \"vram\", \"host_copy\": false, \"vram_gpus\": [0, 1], \"bytes\": 50000000000,"
    "   \"load_ms\": 61000, \"last_used_secs_ago\": 0, \"ref_count\": 4, \"evictable\": false},"
    "  {\"circuit_id\": \"wpost-32g\", \"tier\": \"host\", \"host_copy\": true, \"vram_gpus\": [], \"bytes\": 1000000000,"
    "   \"load_ms\": 2000, \"last_used_secs_ago\": 120, \"ref_count\": 0, \"evictable\": true}],"
    "  \"srs_validation\": \"full\"},"
    "\"counters\": {\"total_completed\": 41, \"total_failed\": 2, \"total_cancelled\": 0, \"queue_depth\": 2, \"running_jobs\": 1},"
    "\"queue\": [{\"proof_kind\": \"porep-c2\", \"queued_jobs\": 2, \"running_jobs\": 1, \"queued_partitions\": 6,"
    "  \"queued_by_priority\": {\"low\": 0, \"normal\": 1, \"high\": 0, \"critical\": 1}},"
    "  {\"proof_kind\": \"synthetic\", \"queued_jobs\": 0, \"running_jobs\": 0, \"queued_partitions\": 0,"
    "  \"queued_by_priority\": {\"low\": 0, \"normal\": 0, \"high\": 0, \"critical\": 0}}],"
    "\"recent_proofs\": [{\"job_id\": \"job-d\", \"proof_kind\": \"porep-c2\", \"state\": \"COMPLETED\", \"partitions\": 1,"
    "  \"finished_unix_ms\": 1796669990000, \"total_ms\": 40000, \"srs_wait_ms\": 10000,"
    "  \"phases\": {\"queue\": [0, 2000], \"srs_load\": [2000, 12000], \"synthesis\": [12000, 30000],"
    "  \"gpu\": [30000, 38000], \"verify\": [38000, 40000]}}],"
    "\"errors\": [{\"unix_ms\": 1796669000000, \"secs_ago\": 1000, \"job_id\": \"job-x\", \"proof_kind\": \"porep-c2\","
    "  \"message\": \"partition 2 synthesis failed: <script>document.title='owned'</script><img src=x>\"}],"
    "\"loading\": [{\"circuit_id\": \"snap-32g\", \"phase\": \"reading and checking\", \"bytes_done\": 1073741824,"
    "  \"bytes_total\": 4294967296, \"elapsed_ms\": 10000, \"bytes_per_s\": 107374182, \"eta_s\": 42}]}";

struct fake { int fd; volatile int stop; };

/* One request per connection: "/" is the page, "/status..." the document above. */
static void *fake_serve(void *arg)
{
    struct fake *f = arg;
    while (!f->stop) {
        int c = accept(f->fd, NULL, NULL);
        if (c < 0) continue;
        char req[4096];
        size_t n = 0;
        while (n < sizeof req - 1) {
            ssize_t k = read(c, req + n, sizeof req - 1 - n);
            if (k <= 0) break;
            n += (size_t)k;
            req[n] = 0;
            if (strstr(req, "\r\n\r\n")) break;
        }
        req[n] = 0;
        bool status = !strncmp(req, "GET /status", 11);
        const char *body = status ? FAKE_STATUS : (const char *)status_page;
        size_t len = status ? strlen(FAKE_STATUS) : sizeof status_page - 1;
        char hdr[256];
        int h = snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\n\r\n", status ? "application/json" : "text/html; charset=utf-8", len);
        if (write(c, hdr, (size_t)h) == h && write(c, body, len) == (ssize_t)len) { /* sent */ }
        close(c);
    }
    return NULL;
}

TEST_T(status_page_draws_gpus_loads_and_escapes, 180)
{
    if (!have_chromium()) test_skip("chromium not installed (scripts/install-deps.sh installs it)");
    char dir[256];
    h_tmpdir(dir, sizeof dir);
    struct fake f = {socket(AF_INET, SOCK_STREAM, 0), 0};
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    ASSERT(!bind(f.fd, (struct sockaddr *)&a, sizeof a) && !listen(f.fd, 16) &&
           !getsockname(f.fd, (struct sockaddr *)&a, &al));
    pthread_t th;
    ASSERT(!pthread_create(&th, NULL, fake_serve, &f));
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(a.sin_port));
    char *dom = chromium(dir, url, NULL);
    ASSERT_STR_CONTAINS(dom, "data-ready=\"1\"");
    /* the header */
    ASSERT_EQ_INT(dom_number(dom, "completed"), 41);
    ASSERT_EQ_INT(dom_number(dom, "failed"), 2);
    ASSERT_EQ_INT(dom_number(dom, "queued"), 2);
    ASSERT_STR_CONTAINS(dom, "id=\"uptime\">1h02m<");
    /* GPUs: VRAM used of total, the gauges by their unit, nested objects flattened */
    ASSERT_STR_CONTAINS(dom, "data-gpu=\"0\"");
    ASSERT_STR_CONTAINS(dom, "data-gpu=\"1\"");
    ASSERT_STR_CONTAINS(dom, "60.0 GiB / 80.0 GiB");
    ASSERT_STR_CONTAINS(dom, "0 B / 80.0 GiB");
    ASSERT_STR_CONTAINS(dom, "1 of 2 workers busy · porep-c2 job-a");
    ASSERT_STR_CONTAINS(dom, "data-gauge=\"utilization_ratio\"");
    ASSERT_STR_CONTAINS(dom, "width: 87%;");
    ASSERT_STR_CONTAINS(dom, "87 %");
    ASSERT_STR_CONTAINS(dom, "71 °C");
    ASSERT_STR_CONTAINS(dom, "312.5 W");
    ASSERT_STR_CONTAINS(dom, "sw_power_cap");
    ASSERT_STR_CONTAINS(dom, "data-gauge=\"pcie_rx_bytes_per_second\"");
    ASSERT_STR_CONTAINS(dom, "1755 MHz");
    ASSERT(!strstr(dom, "data-gauge=\"present\""));        /* telemetry's flag is not a gauge */
    ASSERT(!strstr(dom, "data-gauge=\"ecc_corrected_errors\"")); /* null: not reported */
    ASSERT_STR_CONTAINS(dom, "1.0 GiB/s");
    ASSERT_EQ_INT(count(dom, "data-gauge=\"temperature_celsius\""), 2);
    /* keys resident per GPU: porep-32g on both, wpost-32g (host memory) on neither */
    for (int g = 0; g < 2; g++) {
        char pat[64];
        snprintf(pat, sizeof pat, "data-gpu-keys=\"%d\"", g);
        const char *row = strstr(dom, pat);
        ASSERT(row);
        const char *rend = strstr(row, "</div>");
        const char *hit = strstr(row, "porep-32g");
        ASSERT(hit && hit < rend);
        hit = strstr(row, "wpost-32g");
        ASSERT(!hit || hit > rend);
    }
    /* keys: where each is */
    const char *k = strstr(dom, "data-key=\"porep-32g\"");
    ASSERT(k);
    ASSERT(strstr(k, "GPU 0, GPU 1") && strstr(k, "GPU 0, GPU 1") < strstr(k, "</tr>"));
    k = strstr(dom, "data-key=\"wpost-32g\"");
    ASSERT(k && strstr(k, "host memory") < strstr(k, "</tr>"));
    /* the key load: a quarter, its rate and ETA */
    k = strstr(dom, "data-loading=\"snap-32g\"");
    ASSERT(k);
    ASSERT_STR_CONTAINS(k, "reading and checking");
    ASSERT_STR_CONTAINS(k, "width: 25%;");
    ASSERT_STR_CONTAINS(k, "1.0 GiB / 4.0 GiB");
    ASSERT_STR_CONTAINS(k, "102.4 MiB/s");
    ASSERT_STR_CONTAINS(k, "42.0 s");
    /* the queue by priority; idle kinds left out */
    k = strstr(dom, "data-kind=\"porep-c2\"");
    ASSERT(k);
    ASSERT_STR_CONTAINS(k, "<td class=\"num\">1</td><td class=\"num\">1</td><td class=\"num\">0</td>"
                           "<td class=\"num\">1</td><td class=\"num\">0</td><td class=\"num\">6</td>");
    ASSERT(!strstr(dom, "data-kind=\"synthetic\""));
    /* jobs: unfinished ones only, a square per partition in its state */
    ASSERT_EQ_INT(count(dom, "data-job=\""), 3);
    ASSERT(!strstr(dom, "data-job=\"job-d\""));
    k = strstr(dom, "data-job=\"job-a\"");
    ASSERT(k);
    const char *end = strstr(k, "</tr>");
    int done = 0, pending = 0, gpu = 0;
    for (const char *p = k; (p = strstr(p, "<i class=\"")) && p < end; p++) {
        done += !strncmp(p + 10, "done\"", 5);
        pending += !strncmp(p + 10, "pending\"", 8);
        gpu += !strncmp(p + 10, "gpu\"", 4);
    }
    ASSERT(done == 3 && pending == 4 && gpu == 1);
    ASSERT_STR_CONTAINS(k, "3 / 10");
    ASSERT_STR_CONTAINS(strstr(dom, "data-job=\"job-b\""), "critical");
    /* the timeline: each phase at its place on the scale of the longest proof (40 s) */
    k = strstr(dom, "data-recent=\"job-d\"");
    ASSERT(k);
    ASSERT_STR_CONTAINS(k, "class=\"srs_load\" title=\"srs load 2000–12000 ms\" style=\"left: 5%; width: 25%;\"");
    ASSERT_STR_CONTAINS(k, "class=\"gpu\" title=\"gpu 30000–38000 ms\" style=\"left: 75%; width: 20%;\"");
    /* an error's markup is text: escaped in the DOM, no element made from it */
    ASSERT_STR_CONTAINS(dom, "&lt;script&gt;document.title='owned'&lt;/script&gt;&lt;img src=x&gt;");
    ASSERT_EQ_INT(count(dom, "<script"), 1);
    ASSERT(!strstr(dom, "<img"));
    ASSERT_STR_CONTAINS(dom, "<title>cuzk status</title>");
    free(dom);
    char png[PATH_MAX];
    snprintf(png, sizeof png, "%s/../status-page-gpus.png", h_bin_dir());
    free(chromium(dir, url, png));
    struct stat st;
    ASSERT_MSG(!stat(png, &st) && st.st_size > 10000, "no screenshot at %s", png);
    printf("    screenshot: %s\n", png);
    f.stop = 1;
    shutdown(f.fd, SHUT_RDWR);
    close(f.fd);
    pthread_join(th, NULL);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ASSERT_EQ_INT(system(cmd), 0);
}
