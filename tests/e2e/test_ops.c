/* test_ops.c: the daemon as an operator meets it (issue 50): Curio's own example configuration
 * (tests/data/curio-cuzk.example.toml, only the listen address and paths changed) proves a job
 * and its remote listener is refused; a live daemon's /metrics passes Prometheus's promtool;
 * every metric the Grafana dashboard (deploy/grafana-cuzk.json) queries is exported; the NVML
 * telemetry says in one log line whether it loaded. */
#include <ctype.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "test.h"
#include "daemon_harness.h"
#include "cuzk/server.h"

#ifndef CUZK_REPO_DIR
#error "the Makefile passes CUZK_REPO_DIR and FAKE_NVML_PATH"
#endif

static char *repo_file(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", CUZK_REPO_DIR, rel);
    char *s = h_slurp(path);
    ASSERT_MSG(s && s[0], "cannot read %s", path);
    return s;
}

/* text with every occurrence of `from` replaced by `to` (malloc'd) */
static char *replace(const char *text, const char *from, const char *to)
{
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    for (const char *p = strstr(text, from); p; p = strstr(p + lf, from)) n++;
    char *out = malloc(strlen(text) + n * (lt + 1) + 1), *o = out;
    for (const char *p = text;;) {
        const char *q = strstr(p, from);
        if (!q) { strcpy(o, p); break; }
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, to, lt);
        o += lt;
        p = q + lf;
    }
    return out;
}

TEST_T(curio_example_config_proves_a_job, 180)
{
    char *cfg = repo_file("tests/data/curio-cuzk.example.toml");
    struct daemon d;
    h_new(&d);
    char params[300];
    snprintf(params, sizeof params, "%s/params", d.dir);
    ASSERT(mkdir(params, 0755) == 0);
    h_start_or_fail(&d, cfg, 60);
    char *out = NULL;
    ASSERT_EQ_INT(h_bench(&out, d.addr, "single -t synthetic --constraints 1024"), 0);
    ASSERT_STR_CONTAINS(out, "status:    COMPLETED");
    free(out);
    h_stop_or_fail(&d, 30);
    /* the keys docs/migrating.md lists as accepted without effect are warned, by line */
    char *err = h_slurp(d.err_path);
    ASSERT_STR_CONTAINS(err, ":70: [gpus] gpu_threads: has no effect yet");
    ASSERT_STR_CONTAINS(err, ":112: [scheduler] sort_by_type: has no effect");
    free(err);
    /* Curio's listen address unchanged (all interfaces, no TLS, no token): refused */
    char *remote = replace(cfg, "unix://%DIR%/cuzk.sock", "0.0.0.0:9820");
    char *text = replace(remote, "%DIR%", d.dir);
    char path[400], cmd[1200];
    snprintf(path, sizeof path, "%s/remote.toml", d.dir);
    FILE *f = fopen(path, "w");
    ASSERT(f && fputs(text, f) >= 0 && fclose(f) == 0);
    snprintf(cmd, sizeof cmd, "%s/cuzk-daemon -c %s --check-config > %s/check.txt 2>&1", h_bin_dir(),
             path, d.dir);
    ASSERT(system(cmd) != 0);
    snprintf(path, sizeof path, "%s/check.txt", d.dir);
    char *check = h_slurp(path);
    ASSERT_STR_CONTAINS(check, "listen = \"0.0.0.0:9820\" accepts connections from other hosts but "
                               "neither tls_cert nor auth_token_file is set");
    free(check);
    free(text);
    free(remote);
    free(cfg);
    h_cleanup(&d);
}

/* A daemon with the status listener that proved one SYNTHETIC job; its /metrics text. */
static char *live_metrics(void)
{
    struct daemon d;
    h_new(&d);
    int hp = h_free_port();
    char cfg[512];
    snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"unix://%%DIR%%/cuzk.sock\"\nstatus_listen = "
             "\"127.0.0.1:%d\"\n[memory]\ntotal_budget = \"2GiB\"\n[srs]\nparam_cache = \"%%DIR%%\"\n", hp);
    h_start_or_fail(&d, cfg, 30);
    char *out = NULL;
    ASSERT_EQ_INT(h_bench(&out, d.addr, "single -t synthetic --constraints 1024"), 0);
    ASSERT_STR_CONTAINS(out, "status:    COMPLETED");
    free(out);
    char http[64], *body = NULL;
    snprintf(http, sizeof http, "127.0.0.1:%d", hp);
    ASSERT_EQ_INT(h_http_get(http, "/metrics", &body), 200);
    h_stop_and_clean(&d, 30);
    return body;
}

TEST_T(live_metrics_pass_promtool, 120)
{
    if (system("command -v promtool >/dev/null 2>&1") != 0)
        test_skip("promtool is not installed (scripts/install-deps.sh installs it)");
    char *m = live_metrics();
    ASSERT_STR_CONTAINS(m, "\ncuzk_proofs_completed_total 1\n");
    ASSERT_STR_CONTAINS(m, "\ncuzk_proofs_completed_by_kind_total{proof_kind=\"synthetic\"} 1\n");
    char path[] = "/tmp/cuzk-live-metrics-XXXXXX", cmd[128];
    int fd = mkstemp(path);
    ASSERT(fd >= 0 && write(fd, m, strlen(m)) == (ssize_t)strlen(m));
    close(fd);
    snprintf(cmd, sizeof cmd, "promtool check metrics < %s", path);
    int rc = system(cmd);
    unlink(path);
    ASSERT_MSG(rc == 0, "promtool check metrics rejected the live /metrics (its complaints above)");
    free(m);
}

/* Does the exposition text have a sample of this metric name? */
static bool exported(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, name, n) && (p[n] == ' ' || p[n] == '{')) return true;
    return false;
}

TEST_T(grafana_dashboard_queries_only_exported_metrics, 120)
{
    char *live = live_metrics();
    /* the GPU families from a GPU with every figure (this machine has none) */
    struct engine_gpu_snap g;
    memset(&g, 0, sizeof g);
    g.has_telemetry = true;
    struct nvml_sample *t = &g.telemetry;
    t->present = t->has_util = t->has_mem = t->has_temp = t->has_power = t->has_plimit = true;
    t->has_clock = t->has_throttle = t->has_ecc = t->has_pcie = true;
    struct engine_snapshot snap;
    memset(&snap, 0, sizeof snap);
    snap.gpus = &g;
    snap.n_gpus = 1;
    char *gpu = render_metrics(&snap);
    ASSERT(gpu);

    char *js = repo_file("deploy/grafana-cuzk.json");
    json_error_t je;
    json_t *dash = json_loads(js, 0, &je);
    ASSERT_MSG(dash, "deploy/grafana-cuzk.json: line %d: %s", je.line, je.text);
    size_t names = 0, exprs = 0, i, k;
    json_t *panel, *target;
    json_array_foreach(json_object_get(dash, "panels"), i, panel) {
        json_array_foreach(json_object_get(panel, "targets"), k, target) {
            const char *e = json_string_value(json_object_get(target, "expr"));
            ASSERT_MSG(e, "panel '%s': a target without expr",
                       json_string_value(json_object_get(panel, "title")));
            exprs++;
            for (const char *p = strstr(e, "cuzk_"); p; p = strstr(p + 1, "cuzk_")) {
                if (p > e && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) continue;
                char name[128];
                size_t l = 0;
                while (l + 1 < sizeof name && (isalnum((unsigned char)p[l]) || p[l] == '_')) {
                    name[l] = p[l];
                    l++;
                }
                name[l] = 0;
                names++;
                bool gpu_family = !strncmp(name, "cuzk_gpu_", 9) && strcmp(name, "cuzk_gpu_workers") &&
                                  strcmp(name, "cuzk_gpu_workers_busy");
                ASSERT_MSG(exported(gpu_family ? gpu : live, name),
                           "the dashboard's panel '%s' queries %s, which /metrics does not export",
                           json_string_value(json_object_get(panel, "title")), name);
            }
        }
    }
    ASSERT_MSG(exprs >= 20 && names >= 25, "only %zu queries naming %zu metrics", exprs, names);
    json_decref(dash);
    free(js);
    free(gpu);
    free(live);
}

/* stderr lines containing needle */
static int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        const char *nl = strchr(p, '\n');
        const char *hit = strstr(p, needle);
        if (hit && (!nl || hit < nl)) n++;
    }
    return n;
}

TEST_T(telemetry_says_in_one_line_whether_nvml_loaded, 120)
{
    static const char *libs[2] = {"/nonexistent/libnvidia-ml.so.1", FAKE_NVML_PATH};
    for (int i = 0; i < 2; i++) {
        struct daemon d;
        h_new(&d);
        char cfg[600];
        snprintf(cfg, sizeof cfg, "[daemon]\nlisten = \"unix://%%DIR%%/cuzk.sock\"\n[memory]\n"
                 "total_budget = \"1GiB\"\n[gpus]\nnvml_library = \"%s\"\n", libs[i]);
        h_start_or_fail(&d, cfg, 30);
        h_stop_or_fail(&d, 30);
        char *err = h_slurp(d.err_path);
        ASSERT_EQ_INT(count_lines(err, "GPU telemetry"), 1);
        if (i == 0) {
            ASSERT_STR_CONTAINS(err, "info  GPU telemetry off: cannot load NVML library "
                                     "/nonexistent/libnvidia-ml.so.1: ");
        } else {
            char want[600];
            snprintf(want, sizeof want, "info  GPU telemetry: NVML from %s, driver 999.99-fake, "
                     "0 GPU(s) visible, 0 in use", FAKE_NVML_PATH);
            ASSERT_STR_CONTAINS(err, want);
        }
        free(err);
        h_cleanup(&d);
    }
}
