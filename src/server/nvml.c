/* nvml.c: GPU telemetry through libnvidia-ml loaded with dlopen (nvml.h). We declare the few
 * NVML types and functions we call ourselves (their ABI has been stable since the v2 entry
 * points of CUDA 9), so no header or library is needed to build. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuzk/nvml.h"
#include "cuzk/util.h"

/* ---- NVML's ABI (the parts we use) ---- */
typedef int nvmlReturn_t;
typedef void *nvmlDevice_t;
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
/* v2 (driver 510+) leaves the driver's reserved memory out of used, as nvidia-smi does */
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
#define NVML_MEMORY_V2_VERSION ((unsigned)sizeof(nvmlMemory_v2_t) | 2u << 24)
enum { NVML_SUCCESS = 0, NVML_ERROR_GPU_IS_LOST = 15 };
enum { NVML_TEMPERATURE_GPU = 0, NVML_CLOCK_SM = 1 };
enum { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum { NVML_AGGREGATE_ECC = 1 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };

struct nvml_fns {
    /* required: without these the library is not NVML */
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*count)(unsigned *);
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
    /* optional: a missing one reads as "not supported" */
    nvmlReturn_t (*driver_version)(char *, unsigned);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*mem_v2)(nvmlDevice_t, nvmlMemory_v2_t *);
    nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long *);
    nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned *);
};

#define NVML_MAX_GPUS 64

struct nvml_slot {
    pthread_mutex_t mu;        /* one GPU's cache: a slow GPU does not hold up the others */
    uint64_t at_ns;            /* when sample was taken; 0 = never */
    struct nvml_sample sample;
};

struct nvml {
    void *lib;
    struct nvml_fns f;
    unsigned count;
    char driver[80];
    uint64_t max_age_ns;
    struct nvml_slot slot[NVML_MAX_GPUS];
};

static const char *nv_err(const struct nvml *n, nvmlReturn_t r)
{
    const char *s = n->f.error_string ? n->f.error_string(r) : NULL;
    return s ? s : "unknown NVML error";
}

int nvml_open(struct nvml **out, const char *path, uint64_t max_age_ms, struct cuzk_error *err)
{
    *out = NULL;
    if (!path || !path[0]) path = NVML_DEFAULT_LIBRARY;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        return cuzk_fail(err, CUZK_E_NOT_FOUND, "cannot load NVML library %s: %s", path,
                         why ? why : "dlopen failed");
    }
    struct nvml *n = calloc(1, sizeof *n);
    if (!n) { dlclose(lib); return cuzk_fail(err, CUZK_E_NOMEM, "out of memory"); }
    n->lib = lib;
    n->max_age_ns = max_age_ms * 1000000ull;
    /* The _v2 entry points exist in every driver since 2017; the unsuffixed ones are older. */
    struct { void **dst; const char *name, *alt; bool required; } syms[] = {
        {(void **)&n->f.init, "nvmlInit_v2", "nvmlInit", true},
        {(void **)&n->f.shutdown, "nvmlShutdown", NULL, true},
        {(void **)&n->f.error_string, "nvmlErrorString", NULL, true},
        {(void **)&n->f.count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", true},
        {(void **)&n->f.handle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", true},
        {(void **)&n->f.driver_version, "nvmlSystemGetDriverVersion", NULL, false},
        {(void **)&n->f.name, "nvmlDeviceGetName", NULL, false},
        {(void **)&n->f.util, "nvmlDeviceGetUtilizationRates", NULL, false},
        {(void **)&n->f.mem, "nvmlDeviceGetMemoryInfo", NULL, false},
        {(void **)&n->f.mem_v2, "nvmlDeviceGetMemoryInfo_v2", NULL, false},
        {(void **)&n->f.temp, "nvmlDeviceGetTemperature", NULL, false},
        {(void **)&n->f.power, "nvmlDeviceGetPowerUsage", NULL, false},
        {(void **)&n->f.power_limit, "nvmlDeviceGetEnforcedPowerLimit", NULL, false},
        {(void **)&n->f.clock, "nvmlDeviceGetClockInfo", NULL, false},
        {(void **)&n->f.throttle, "nvmlDeviceGetCurrentClocksThrottleReasons",
         "nvmlDeviceGetCurrentClocksEventReasons", false},
        {(void **)&n->f.ecc, "nvmlDeviceGetTotalEccErrors", NULL, false},
        {(void **)&n->f.pcie, "nvmlDeviceGetPcieThroughput", NULL, false},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(lib, syms[i].name);
        if (!p && syms[i].alt) p = dlsym(lib, syms[i].alt);
        if (!p && syms[i].required) {
            dlclose(lib);
            free(n);
            return cuzk_fail(err, CUZK_E_NOT_FOUND, "%s is not an NVML library: it has no %s",
                             path, syms[i].name);
        }
        *syms[i].dst = p;
    }
    nvmlReturn_t r = n->f.init();
    if (r != NVML_SUCCESS) {
        int rc = cuzk_fail(err, CUZK_E_IO, "NVML (%s) did not start: %s", path, nv_err(n, r));
        dlclose(lib);
        free(n);
        return rc;
    }
    unsigned c = 0;
    if ((r = n->f.count(&c)) != NVML_SUCCESS) {
        int rc = cuzk_fail(err, CUZK_E_IO, "NVML (%s) cannot count GPUs: %s", path, nv_err(n, r));
        n->f.shutdown();
        dlclose(lib);
        free(n);
        return rc;
    }
    n->count = c < NVML_MAX_GPUS ? c : NVML_MAX_GPUS;
    if (!n->f.driver_version || n->f.driver_version(n->driver, sizeof n->driver) != NVML_SUCCESS)
        n->driver[0] = 0;
    n->driver[sizeof n->driver - 1] = 0;
    for (unsigned i = 0; i < NVML_MAX_GPUS; i++) pthread_mutex_init(&n->slot[i].mu, NULL);
    *out = n;
    return CUZK_OK;
}

void nvml_close(struct nvml *n)
{
    if (!n) return;
    n->f.shutdown();
    for (unsigned i = 0; i < NVML_MAX_GPUS; i++) pthread_mutex_destroy(&n->slot[i].mu);
    dlclose(n->lib);
    free(n);
}

unsigned nvml_count(const struct nvml *n) { return n->count; }
const char *nvml_driver_version(const struct nvml *n) { return n->driver; }

/* Ask the driver for every figure. A handle is looked up each time (cheap) so that a GPU
 * that came back after a reset is found again; GPU_IS_LOST on any query marks it absent. */
static void sample_now(struct nvml *n, unsigned index, struct nvml_sample *s)
{
    memset(s, 0, sizeof *s);
    nvmlDevice_t d = NULL;
    nvmlReturn_t r = n->f.handle(index, &d);
    if (r != NVML_SUCCESS) {
        snprintf(s->error, sizeof s->error, "NVML has no GPU %u: %s", index, nv_err(n, r));
        return;
    }
    s->present = true;
    nvmlReturn_t lost = NVML_SUCCESS;
#define ASK(call) ((r = (call)) == NVML_SUCCESS ? true \
                   : (r == NVML_ERROR_GPU_IS_LOST ? (lost = r, false) : false))
    if (n->f.name && ASK(n->f.name(d, s->name, sizeof s->name))) s->name[sizeof s->name - 1] = 0;
    else s->name[0] = 0;
    nvmlUtilization_t u;
    if (n->f.util && ASK(n->f.util(d, &u))) {
        s->has_util = true;
        s->util_gpu = u.gpu / 100.0;
        s->util_mem = u.memory / 100.0;
    }
    nvmlMemory_v2_t m2 = {.version = NVML_MEMORY_V2_VERSION};
    nvmlMemory_t m;
    if (n->f.mem_v2 && ASK(n->f.mem_v2(d, &m2))) {
        s->has_mem = true;
        s->mem_used = m2.used;
        s->mem_total = m2.total;
    } else if (n->f.mem && ASK(n->f.mem(d, &m))) {   /* older driver, or v2 refused */
        s->has_mem = true;
        s->mem_used = m.used;
        s->mem_total = m.total;
    }
    unsigned v;
    if (n->f.temp && ASK(n->f.temp(d, NVML_TEMPERATURE_GPU, &v))) { s->has_temp = true; s->temp_c = v; }
    if (n->f.power && ASK(n->f.power(d, &v))) { s->has_power = true; s->power_w = v / 1000.0; }
    if (n->f.power_limit && ASK(n->f.power_limit(d, &v))) {
        s->has_plimit = true;
        s->power_limit_w = v / 1000.0;
    }
    if (n->f.clock && ASK(n->f.clock(d, NVML_CLOCK_SM, &v))) { s->has_clock = true; s->sm_clock_hz = v * 1e6; }
    unsigned long long t, e1, e2;
    if (n->f.throttle && ASK(n->f.throttle(d, &t))) { s->has_throttle = true; s->throttle = t; }
    if (n->f.ecc && ASK(n->f.ecc(d, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, &e1)) &&
        ASK(n->f.ecc(d, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &e2))) {
        s->has_ecc = true;
        s->ecc_corrected = e1;
        s->ecc_uncorrected = e2;
    }
    /* NVML counts PCIe throughput in KiB/s over a 20 ms window */
    unsigned tx, rx;
    if (n->f.pcie && ASK(n->f.pcie(d, NVML_PCIE_UTIL_TX_BYTES, &tx)) &&
        ASK(n->f.pcie(d, NVML_PCIE_UTIL_RX_BYTES, &rx))) {
        s->has_pcie = true;
        s->pcie_tx_bps = tx * 1024.0;
        s->pcie_rx_bps = rx * 1024.0;
    }
#undef ASK
    if (lost != NVML_SUCCESS) {   /* half a sample of a vanishing GPU is no sample */
        memset(s, 0, sizeof *s);
        snprintf(s->error, sizeof s->error, "GPU %u stopped answering: %s", index, nv_err(n, lost));
    }
}

void nvml_sample(struct nvml *n, unsigned index, struct nvml_sample *out)
{
    if (index >= NVML_MAX_GPUS) {
        memset(out, 0, sizeof *out);
        snprintf(out->error, sizeof out->error, "GPU %u: beyond the %d GPUs telemetry follows",
                 index, NVML_MAX_GPUS);
        return;
    }
    struct nvml_slot *sl = &n->slot[index];
    pthread_mutex_lock(&sl->mu);
    uint64_t now = cuzk_now_ns();
    if (!sl->at_ns || now - sl->at_ns >= n->max_age_ns) {
        sample_now(n, index, &sl->sample);
        sl->at_ns = now;
    }
    *out = sl->sample;
    pthread_mutex_unlock(&sl->mu);
}

void nvml_throttle_names(uint64_t bits, char *buf, size_t cap)
{
    static const struct { uint64_t bit; const char *name; } names[] = {
        {NVML_THROTTLE_GPU_IDLE, "gpu_idle"}, {NVML_THROTTLE_APP_CLOCKS, "applications_clocks"},
        {NVML_THROTTLE_SW_POWER_CAP, "sw_power_cap"}, {NVML_THROTTLE_HW_SLOWDOWN, "hw_slowdown"},
        {NVML_THROTTLE_SYNC_BOOST, "sync_boost"}, {NVML_THROTTLE_SW_THERMAL, "sw_thermal"},
        {NVML_THROTTLE_HW_THERMAL, "hw_thermal"}, {NVML_THROTTLE_HW_POWER_BRAKE, "hw_power_brake"},
        {NVML_THROTTLE_DISPLAY_CLOCKS, "display_clocks"},
    };
    size_t used = 0;
    if (cap) buf[0] = 0;
    uint64_t known = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        known |= names[i].bit;
        if (!(bits & names[i].bit) || used >= cap) continue;
        int k = snprintf(buf + used, cap - used, "%s%s", used ? "," : "", names[i].name);
        if (k > 0) used += (size_t)k;
    }
    if (bits & ~known && used < cap)
        snprintf(buf + used, cap - used, "%sother_0x%llx", used ? "," : "",
                 (unsigned long long)(bits & ~known));
}
