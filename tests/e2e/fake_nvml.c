/* fake_nvml.c: a stand-in for libnvidia-ml.so.1, built as a shared library by the tests
 * (build/tests/e2e/libfake_nvml.so) and loaded by src/server/nvml.c through its path. It
 * implements the nvml* functions the daemon calls with NVML's ABI, and fake_nvml_* controls
 * with which a test sets each GPU's figures, makes one query fail with a given NVML code, or
 * makes a GPU vanish (every call answers GPU_IS_LOST) and come back. A test reaches the
 * controls by dlopen of the same path (the loader hands back the same instance). */
#include <string.h>

#define FAKE_MAX 8
enum { OK = 0, ERR_UNINIT = 1, ERR_INVALID = 2, ERR_NOT_SUPPORTED = 3, ERR_LOST = 15 };
enum { Q_NAME, Q_UTIL, Q_MEM, Q_TEMP, Q_POWER, Q_PLIMIT, Q_CLOCK, Q_THROTTLE, Q_ECC, Q_PCIE, Q_N };

struct fake_gpu {
    char name[64];
    unsigned util_gpu, util_mem, temp, power_mw, plimit_mw, sm_mhz, tx_kb, rx_kb;
    unsigned long long mem_used, mem_total, throttle, ecc_c, ecc_u;
    int fail[Q_N];          /* NVML code a query answers instead of its figure (0: answers) */
    int lost;               /* every call on this GPU answers GPU_IS_LOST */
    int v2_refuse;          /* the v2 memory query answers VERSION_MISMATCH (an older driver) */
};
static struct fake_gpu gpus[FAKE_MAX];
static unsigned n_gpus, calls, inited;
static int init_fail;

/* ---- controls ---- */
void fake_nvml_reset(unsigned count, int init_code);
void fake_nvml_set(unsigned i, const char *field, unsigned long long v);
void fake_nvml_fail(unsigned i, int query, int code);
void fake_nvml_lose(unsigned i, int lost);
unsigned fake_nvml_calls(void);
unsigned fake_nvml_inited(void);

void fake_nvml_reset(unsigned count, int init_code)
{
    memset(gpus, 0, sizeof gpus);
    n_gpus = count < FAKE_MAX ? count : FAKE_MAX;
    for (unsigned i = 0; i < n_gpus; i++) {
        struct fake_gpu *g = &gpus[i];
        memcpy(g->name, "Fake GPU 0", 11);
        g->name[9] = (char)('0' + i);
    }
    init_fail = init_code;
    calls = 0;
}

void fake_nvml_set(unsigned i, const char *f, unsigned long long v)
{
    struct fake_gpu *g = &gpus[i % FAKE_MAX];
    if (!strcmp(f, "util_gpu")) g->util_gpu = (unsigned)v;
    else if (!strcmp(f, "util_mem")) g->util_mem = (unsigned)v;
    else if (!strcmp(f, "temp")) g->temp = (unsigned)v;
    else if (!strcmp(f, "power_mw")) g->power_mw = (unsigned)v;
    else if (!strcmp(f, "plimit_mw")) g->plimit_mw = (unsigned)v;
    else if (!strcmp(f, "sm_mhz")) g->sm_mhz = (unsigned)v;
    else if (!strcmp(f, "tx_kb")) g->tx_kb = (unsigned)v;
    else if (!strcmp(f, "rx_kb")) g->rx_kb = (unsigned)v;
    else if (!strcmp(f, "mem_used")) g->mem_used = v;
    else if (!strcmp(f, "mem_total")) g->mem_total = v;
    else if (!strcmp(f, "throttle")) g->throttle = v;
    else if (!strcmp(f, "ecc_c")) g->ecc_c = v;
    else if (!strcmp(f, "ecc_u")) g->ecc_u = v;
    else if (!strcmp(f, "v2_refuse")) g->v2_refuse = (int)v;
}

void fake_nvml_fail(unsigned i, int q, int code) { if (q >= 0 && q < Q_N) gpus[i % FAKE_MAX].fail[q] = code; }
void fake_nvml_lose(unsigned i, int lost) { gpus[i % FAKE_MAX].lost = lost; }
unsigned fake_nvml_calls(void) { return calls; }
unsigned fake_nvml_inited(void) { return inited; }

/* ---- NVML ---- */
typedef void *nvmlDevice_t;
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
/* NVML_STRUCT_VERSION(Memory, 2); the driver reserves this much, which v1 counts as used */
#define MEMORY_V2 ((unsigned)sizeof(nvmlMemory_v2_t) | 2u << 24)
#define RESERVED (512ull << 20)

int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int r);
int nvmlSystemGetDriverVersion(char *buf, unsigned len);
int nvmlDeviceGetCount_v2(unsigned *c);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d);
int nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned len);
int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u);
int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m);
int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m);
int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t);
int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *p);
int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *p);
int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *c);
int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r);
int nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *c);
int nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned *v);

int nvmlInit_v2(void)
{
    if (init_fail) return init_fail;
    inited++;
    return OK;
}
int nvmlShutdown(void) { if (inited) inited--; return OK; }
const char *nvmlErrorString(int r)
{
    switch (r) {
    case OK: return "Success";
    case ERR_UNINIT: return "Uninitialized";
    case ERR_INVALID: return "Invalid Argument";
    case ERR_NOT_SUPPORTED: return "Not Supported";
    case ERR_LOST: return "GPU is lost";
    case 9: return "Driver Not Loaded";
    default: return "Unknown Error";
    }
}
int nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
    if (len < 16) return ERR_INVALID;
    memcpy(buf, "999.99-fake", 12);
    return OK;
}
int nvmlDeviceGetCount_v2(unsigned *c) { if (!inited) return ERR_UNINIT; *c = n_gpus; return OK; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d)
{
    if (!inited) return ERR_UNINIT;
    if (i >= n_gpus) return ERR_INVALID;
    if (gpus[i].lost) return ERR_LOST;
    *d = &gpus[i];
    return OK;
}

/* every device query starts here: counts the call, then a lost GPU or an injected failure */
static int enter(nvmlDevice_t d, int q)
{
    calls++;
    struct fake_gpu *g = d;
    if (!inited) return ERR_UNINIT;
    if (g->lost) return ERR_LOST;
    return g->fail[q];
}
#define ENTER(d, q) do { int rc_ = enter(d, q); if (rc_) return rc_; } while (0)

int nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned len)
{
    ENTER(d, Q_NAME);
    struct fake_gpu *g = d;
    if (len <= strlen(g->name)) return ERR_INVALID;
    memcpy(buf, g->name, strlen(g->name) + 1);
    return OK;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
    ENTER(d, Q_UTIL);
    u->gpu = ((struct fake_gpu *)d)->util_gpu;
    u->memory = ((struct fake_gpu *)d)->util_mem;
    return OK;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
    ENTER(d, Q_MEM);
    struct fake_gpu *g = d;
    m->total = g->mem_total;
    m->used = g->mem_used + RESERVED;
    m->free = g->mem_total - m->used;
    return OK;
}
int nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m)
{
    ENTER(d, Q_MEM);
    struct fake_gpu *g = d;
    if (m->version != MEMORY_V2 || g->v2_refuse) return 25;   /* ARGUMENT_VERSION_MISMATCH */
    m->total = g->mem_total;
    m->reserved = RESERVED;
    m->used = g->mem_used;
    m->free = g->mem_total - g->mem_used - RESERVED;
    return OK;
}
int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *t)
{
    ENTER(d, Q_TEMP);
    if (sensor != 0) return ERR_INVALID;
    *t = ((struct fake_gpu *)d)->temp;
    return OK;
}
int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *p) { ENTER(d, Q_POWER); *p = ((struct fake_gpu *)d)->power_mw; return OK; }
int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *p) { ENTER(d, Q_PLIMIT); *p = ((struct fake_gpu *)d)->plimit_mw; return OK; }
int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *c)
{
    ENTER(d, Q_CLOCK);
    if (type != 1) return ERR_INVALID;   /* only NVML_CLOCK_SM is asked for */
    *c = ((struct fake_gpu *)d)->sm_mhz;
    return OK;
}
int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r)
{
    ENTER(d, Q_THROTTLE);
    *r = ((struct fake_gpu *)d)->throttle;
    return OK;
}
int nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *c)
{
    ENTER(d, Q_ECC);
    if (counter != 1 || (type != 0 && type != 1)) return ERR_INVALID;   /* aggregate only */
    *c = type == 0 ? ((struct fake_gpu *)d)->ecc_c : ((struct fake_gpu *)d)->ecc_u;
    return OK;
}
int nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned *v)
{
    ENTER(d, Q_PCIE);
    if (counter != 0 && counter != 1) return ERR_INVALID;
    *v = counter == 0 ? ((struct fake_gpu *)d)->tx_kb : ((struct fake_gpu *)d)->rx_kb;
    return OK;
}
