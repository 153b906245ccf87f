/* test_nvml.c: GPU telemetry (src/server/nvml.c) against a fake NVML library the build makes
 * (tests/e2e/fake_nvml.c -> libfake_nvml.so, loaded by path): the figures in base units, a
 * query the GPU does not support, a GPU that vanishes and comes back, a library that is
 * missing or is not NVML, an NVML that does not start, the sample cache; then their /metrics
 * and /status renderings, checked by Prometheus's own promtool where it is installed. */
#include <dlfcn.h>
#include <math.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "test.h"
#include "cuzk/nvml.h"
#include "cuzk/server.h"

#ifndef FAKE_NVML_PATH
#error "the Makefile passes FAKE_NVML_PATH"
#endif

/* the fake's controls (tests/e2e/fake_nvml.c) and its query numbers */
enum { Q_NAME, Q_UTIL, Q_MEM, Q_TEMP, Q_POWER, Q_PLIMIT, Q_CLOCK, Q_THROTTLE, Q_ECC, Q_PCIE };
static struct {
    void (*reset)(unsigned count, int init_code);
    void (*set)(unsigned i, const char *field, unsigned long long v);
    void (*fail)(unsigned i, int query, int code);
    void (*lose)(unsigned i, int lost);
    unsigned (*calls)(void);
} fake;

static void fake_load(unsigned gpus, int init_code)
{
    void *h = dlopen(FAKE_NVML_PATH, RTLD_NOW);
    ASSERT_MSG(h, "dlopen %s: %s", FAKE_NVML_PATH, dlerror());
    *(void **)&fake.reset = dlsym(h, "fake_nvml_reset");
    *(void **)&fake.set = dlsym(h, "fake_nvml_set");
    *(void **)&fake.fail = dlsym(h, "fake_nvml_fail");
    *(void **)&fake.lose = dlsym(h, "fake_nvml_lose");
    *(void **)&fake.calls = dlsym(h, "fake_nvml_calls");
    ASSERT(fake.reset && fake.set && fake.fail && fake.lose && fake.calls);
    fake.reset(gpus, init_code);
}

/* What the test told the fake about one GPU, in NVML's units. */
struct raw {
    unsigned util_gpu, util_mem, temp, power_mw, plimit_mw, sm_mhz, tx_kb, rx_kb;
    unsigned long long mem_used, mem_total, throttle, ecc_c, ecc_u;
};

static struct raw fake_random(unsigned i)
{
    cuzk_rng *r = test_rng();
    struct raw w;
    w.util_gpu = (unsigned)(cuzk_rng_u64(r) % 101);
    w.util_mem = (unsigned)(cuzk_rng_u64(r) % 101);
    w.temp = 20 + (unsigned)(cuzk_rng_u64(r) % 70);
    w.plimit_mw = 100000 + (unsigned)(cuzk_rng_u64(r) % 600000);
    w.power_mw = (unsigned)(cuzk_rng_u64(r) % w.plimit_mw);
    w.sm_mhz = 200 + (unsigned)(cuzk_rng_u64(r) % 1800);
    w.tx_kb = (unsigned)(cuzk_rng_u64(r) % 30000000);
    w.rx_kb = (unsigned)(cuzk_rng_u64(r) % 30000000);
    w.mem_total = (16ull + cuzk_rng_u64(r) % 128) << 30;
    w.mem_used = cuzk_rng_u64(r) % (w.mem_total - (1ull << 30));   /* room for the reserve */
    w.throttle = NVML_THROTTLE_SW_POWER_CAP | NVML_THROTTLE_HW_THERMAL;
    w.ecc_c = cuzk_rng_u64(r) % 1000;
    w.ecc_u = cuzk_rng_u64(r) % 10;
    static const char *f[] = {"util_gpu", "util_mem", "temp", "power_mw", "plimit_mw", "sm_mhz",
                              "tx_kb", "rx_kb", "mem_used", "mem_total", "throttle", "ecc_c", "ecc_u"};
    unsigned long long v[] = {w.util_gpu, w.util_mem, w.temp, w.power_mw, w.plimit_mw, w.sm_mhz,
                              w.tx_kb, w.rx_kb, w.mem_used, w.mem_total, w.throttle, w.ecc_c, w.ecc_u};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) fake.set(i, f[k], v[k]);
    return w;
}

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 1e-9 * (1 + fabs((double)(b))))


/* The sample against the raw figures, converted here by NVML's documented units. */
static void check_sample(const struct nvml_sample *s, const struct raw *w, unsigned i)
{
    char name[32];
    snprintf(name, sizeof name, "Fake GPU %u", i);
    ASSERT(s->present);
    ASSERT_MSG(!strcmp(s->name, name), "name '%s', expected '%s'", s->name, name);
    ASSERT(s->has_util && NEAR(s->util_gpu, w->util_gpu / 100.0) && NEAR(s->util_mem, w->util_mem / 100.0));
    ASSERT(s->has_mem);
    ASSERT_EQ_U64(s->mem_used, w->mem_used);   /* v2: without the driver's reserve, as nvidia-smi */
    ASSERT_EQ_U64(s->mem_total, w->mem_total);
    ASSERT(s->has_temp && NEAR(s->temp_c, w->temp));
    ASSERT_MSG(s->has_power && NEAR(s->power_w, w->power_mw / 1000.0), "power %g W from %u mW",
               s->power_w, w->power_mw);
    ASSERT(s->has_plimit && NEAR(s->power_limit_w, w->plimit_mw / 1000.0));
    ASSERT(s->has_clock && NEAR(s->sm_clock_hz, w->sm_mhz * 1e6));
    ASSERT(s->has_throttle);
    ASSERT_EQ_U64(s->throttle, w->throttle);
    ASSERT(s->has_ecc);
    ASSERT_EQ_U64(s->ecc_corrected, w->ecc_c);
    ASSERT_EQ_U64(s->ecc_uncorrected, w->ecc_u);
    ASSERT(s->has_pcie && NEAR(s->pcie_tx_bps, w->tx_kb * 1024.0) && NEAR(s->pcie_rx_bps, w->rx_kb * 1024.0));
}

TEST(nvml_missing_library_is_one_error)
{
    struct nvml *n = (struct nvml *)1;
    struct cuzk_error err;
    ASSERT_CODE(nvml_open(&n, "/nonexistent/libnvidia-ml.so.1", 1000, &err), CUZK_E_NOT_FOUND, &err);
    ASSERT(n == NULL);
    ASSERT_STR_CONTAINS(err.msg, "cannot load NVML library /nonexistent/libnvidia-ml.so.1");
    /* a library that is not NVML: named, with the function it lacks */
    ASSERT_CODE(nvml_open(&n, "libm.so.6", 1000, &err), CUZK_E_NOT_FOUND, &err);
    ASSERT_STR_CONTAINS(err.msg, "libm.so.6 is not an NVML library: it has no nvmlInit_v2");
}

TEST(nvml_init_failure_names_nvml_reason)
{
    fake_load(2, 9 /* NVML_ERROR_DRIVER_NOT_LOADED */);
    struct nvml *n = NULL;
    struct cuzk_error err;
    ASSERT_CODE(nvml_open(&n, FAKE_NVML_PATH, 1000, &err), CUZK_E_IO, &err);
    ASSERT_STR_CONTAINS(err.msg, "did not start: Driver Not Loaded");
}

TEST(nvml_figures_in_base_units)
{
    fake_load(3, 0);
    struct raw w[3];
    for (unsigned i = 0; i < 3; i++) w[i] = fake_random(i);
    struct nvml *n = NULL;
    struct cuzk_error err;
    ASSERT_OK(nvml_open(&n, FAKE_NVML_PATH, 0, &err), &err);
    ASSERT_EQ_U64(nvml_count(n), 3);
    ASSERT(!strcmp(nvml_driver_version(n), "999.99-fake"));
    for (unsigned i = 0; i < 3; i++) {
        struct nvml_sample s;
        nvml_sample(n, i, &s);
        check_sample(&s, &w[i], i);
    }
    /* an index NVML does not have: absent, with NVML's reason */
    struct nvml_sample s;
    nvml_sample(n, 3, &s);
    ASSERT(!s.present);
    ASSERT_STR_CONTAINS(s.error, "NVML has no GPU 3: Invalid Argument");
    char names[128];
    nvml_throttle_names(w[0].throttle | NVML_THROTTLE_GPU_IDLE | 0x10000, names, sizeof names);
    ASSERT_MSG(!strcmp(names, "gpu_idle,sw_power_cap,hw_thermal,other_0x10000"), "names '%s'", names);
    nvml_close(n);
}

TEST(nvml_unsupported_query_leaves_that_figure_out)
{
    fake_load(1, 0);
    struct raw w = fake_random(0);
    fake.fail(0, Q_ECC, 3 /* NOT_SUPPORTED: a GeForce */);
    fake.fail(0, Q_PLIMIT, 3);
    struct nvml *n = NULL;
    struct cuzk_error err;
    ASSERT_OK(nvml_open(&n, FAKE_NVML_PATH, 0, &err), &err);
    struct nvml_sample s;
    nvml_sample(n, 0, &s);
    ASSERT(s.present && !s.has_ecc && !s.has_plimit);
    ASSERT(s.has_temp && NEAR(s.temp_c, w.temp) && s.has_power && s.has_pcie);
    ASSERT_EQ_U64(s.mem_used, w.mem_used);
    /* a driver without the v2 memory query: v1, whose used includes the 512 MiB reserve */
    fake.set(0, "v2_refuse", 1);
    nvml_sample(n, 0, &s);
    ASSERT(s.present && s.has_mem);
    ASSERT_EQ_U64(s.mem_used, w.mem_used + (512ull << 20));
    nvml_close(n);
}

TEST(nvml_gpu_that_vanishes_and_returns)
{
    fake_load(2, 0);
    struct raw w0 = fake_random(0), w1 = fake_random(1);
    struct nvml *n = NULL;
    struct cuzk_error err;
    ASSERT_OK(nvml_open(&n, FAKE_NVML_PATH, 0, &err), &err);
    struct nvml_sample s;
    nvml_sample(n, 1, &s);
    check_sample(&s, &w1, 1);
    fake.lose(1, 1);                       /* off the bus: even the handle lookup fails */
    nvml_sample(n, 1, &s);
    ASSERT(!s.present && !s.has_temp && !s.has_mem);
    ASSERT_STR_CONTAINS(s.error, "GPU is lost");
    nvml_sample(n, 0, &s);                 /* the other GPU does not care */
    check_sample(&s, &w0, 0);
    fake.lose(1, 0);                       /* back after a reset: found again */
    nvml_sample(n, 1, &s);
    check_sample(&s, &w1, 1);
    /* lost in the middle of a sample: no half sample */
    fake.fail(1, Q_PCIE, 15);
    nvml_sample(n, 1, &s);
    ASSERT(!s.present && !s.has_temp);
    ASSERT_STR_CONTAINS(s.error, "GPU 1 stopped answering: GPU is lost");
    nvml_close(n);
}

TEST(nvml_samples_are_reused_within_max_age)
{
    fake_load(1, 0);
    fake_random(0);
    struct nvml *n = NULL;
    struct cuzk_error err;
    ASSERT_OK(nvml_open(&n, FAKE_NVML_PATH, 200, &err), &err);
    struct nvml_sample s;
    nvml_sample(n, 0, &s);
    unsigned c1 = fake.calls();
    ASSERT(c1 > 0);
    fake.set(0, "temp", 77);
    for (int i = 0; i < 10; i++) nvml_sample(n, 0, &s);
    ASSERT_EQ_U64(fake.calls(), c1);       /* nothing asked of the driver within 200 ms */
    ASSERT(!NEAR(s.temp_c, 77));
    usleep(250 * 1000);
    nvml_sample(n, 0, &s);
    ASSERT(fake.calls() > c1);
    ASSERT(NEAR(s.temp_c, 77));
    nvml_close(n);
}

/* A snapshot of two GPUs with telemetry (GPU 1 gone), some proofs, and its renderings. */
static void snapshot_of(struct engine_snapshot *snap, struct engine_gpu_snap g[2], struct nvml *n)
{
    memset(snap, 0, sizeof *snap);
    memset(g, 0, 2 * sizeof *g);
    for (int i = 0; i < 2; i++) {
        g[i].ordinal = i;
        snprintf(g[i].name, sizeof g[i].name, "Fake GPU %d", i);
        g[i].has_telemetry = true;
        nvml_sample(n, (unsigned)i, &g[i].telemetry);
    }
    snap->gpus = g;
    snap->n_gpus = 2;
    snap->prover = "gpu";
    snap->cpu_reason = "";
    snap->validation = "full";
    snap->kinds[0].completed = 3;
    snap->kinds[0].failed = 1;
    snap->completed = 3;
    snap->failed = 1;
}

/* The value of the sample line starting with `series ` in metrics text, or -1. */
static double metric_value(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        if (!strncmp(p, series, n) && p[n] == ' ') return strtod(p + n + 1, NULL);
    return -1;
}

TEST(nvml_metrics_follow_prometheus_rules)
{
    fake_load(2, 0);
    struct raw w0 = fake_random(0);
    fake_random(1);
    fake.lose(1, 1);
    struct nvml *n = NULL;
    struct cuzk_error err;
    ASSERT_OK(nvml_open(&n, FAKE_NVML_PATH, 0, &err), &err);
    struct engine_snapshot snap;
    struct engine_gpu_snap g[2];
    snapshot_of(&snap, g, n);
    char *m = render_metrics(&snap);
    ASSERT(m);
    /* the figures of GPU 0 in base units; GPU 1 only says it is down */
    ASSERT(metric_value(m, "cuzk_gpu_telemetry_up{gpu=\"0\"}") == 1);
    ASSERT(metric_value(m, "cuzk_gpu_telemetry_up{gpu=\"1\"}") == 0);
    ASSERT(NEAR(metric_value(m, "cuzk_gpu_power_watts{gpu=\"0\"}"), w0.power_mw / 1000.0));
    ASSERT(NEAR(metric_value(m, "cuzk_gpu_memory_used_bytes{gpu=\"0\"}"), (double)w0.mem_used));
    ASSERT(NEAR(metric_value(m, "cuzk_gpu_sm_clock_hertz{gpu=\"0\"}"), w0.sm_mhz * 1e6));
    ASSERT(NEAR(metric_value(m, "cuzk_gpu_utilization_ratio{gpu=\"0\"}"), w0.util_gpu / 100.0));
    ASSERT(NEAR(metric_value(m, "cuzk_gpu_ecc_corrected_errors_total{gpu=\"0\"}"), (double)w0.ecc_c));
    ASSERT(metric_value(m, "cuzk_gpu_throttled_power{gpu=\"0\"}") == 1);
    ASSERT(metric_value(m, "cuzk_gpu_throttled_thermal{gpu=\"0\"}") == 1);
    ASSERT(!strstr(m, "cuzk_gpu_temperature_celsius{gpu=\"1\"}"));
    ASSERT(metric_value(m, "cuzk_proofs_completed_by_kind_total{proof_kind=\"porep_c2\"}") == 3);
    /* the Rust cuzk's names stay (untyped, so they break no naming rule) */
    ASSERT(metric_value(m, "cuzk_proofs_completed{proof_kind=\"porep_c2\"}") == 3);
    ASSERT(metric_value(m, "cuzk_proofs_completed_total") == 3);
    /* the naming rule promtool reported, checked here line by line: every counter ends in
     * _total, nothing else does */
    for (const char *p = strstr(m, "# TYPE "); p; p = strstr(p + 1, "# TYPE ")) {
        char name[128], type[32];
        ASSERT(sscanf(p, "# TYPE %127s %31s", name, type) == 2);
        size_t l = strlen(name);
        bool total = l > 6 && !strcmp(name + l - 6, "_total");
        ASSERT_MSG(total == !strcmp(type, "counter"), "%s is a %s", name, type);
    }
    /* and by promtool itself, when this machine has it (CI installs Debian's prometheus) */
    if (system("command -v promtool >/dev/null 2>&1") == 0) {
        char path[] = "/tmp/cuzk-metrics-XXXXXX";
        int fd = mkstemp(path);
        ASSERT(fd >= 0);
        ASSERT(write(fd, m, strlen(m)) == (ssize_t)strlen(m));
        close(fd);
        char cmd[256];
        snprintf(cmd, sizeof cmd, "promtool check metrics < %s", path);
        int rc = system(cmd);
        unlink(path);
        ASSERT_MSG(rc == 0, "promtool check metrics rejected /metrics (its complaints above):\n%s", m);
    }
    free(m);
    /* /status: the same figures per GPU, absent ones null */
    char *js = render_status_json(&snap, 10, 0);
    json_error_t je;
    json_t *root = json_loads(js, 0, &je);
    ASSERT_MSG(root, "status JSON: %s", je.text);
    json_t *t0 = json_object_get(json_array_get(json_object_get(root, "gpus"), 0), "telemetry");
    json_t *t1 = json_object_get(json_array_get(json_object_get(root, "gpus"), 1), "telemetry");
    ASSERT(json_is_true(json_object_get(t0, "present")));
    ASSERT(NEAR(json_real_value(json_object_get(t0, "temperature_celsius")), w0.temp));
    ASSERT_EQ_U64(json_integer_value(json_object_get(t0, "memory_total_bytes")), w0.mem_total);
    json_t *reasons = json_object_get(t0, "throttle_reasons");
    ASSERT(json_array_size(reasons) == 2);
    ASSERT(!strcmp(json_string_value(json_array_get(reasons, 0)), "sw_power_cap"));
    ASSERT(!strcmp(json_string_value(json_array_get(reasons, 1)), "hw_thermal"));
    ASSERT(json_is_false(json_object_get(t1, "present")));
    ASSERT_STR_CONTAINS(json_string_value(json_object_get(t1, "error")), "GPU is lost");
    json_decref(root);
    free(js);
    nvml_close(n);
}
