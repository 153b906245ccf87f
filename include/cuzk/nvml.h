/* nvml.h: GPU telemetry from NVIDIA's management library (libnvidia-ml), loaded at run time
 * with dlopen so that nothing is needed to build and a host without the driver only loses the
 * gauges. Samples are cached for a short time so /metrics scrapes and status page refreshes
 * ask the driver at most once per interval per GPU. Thread-safe. Part of the daemon's server
 * library; the core library never includes it. See docs/daemon.md ("GPU telemetry"). */
#ifndef CUZK_NVML_H
#define CUZK_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuzk/err.h"

#define NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"

/* NVML's clock event (throttle) reason bits, as nvmlDeviceGetCurrentClocksThrottleReasons
 * reports them; nvml_throttle_names spells them out. */
#define NVML_THROTTLE_GPU_IDLE          0x1ull
#define NVML_THROTTLE_APP_CLOCKS        0x2ull
#define NVML_THROTTLE_SW_POWER_CAP      0x4ull
#define NVML_THROTTLE_HW_SLOWDOWN       0x8ull
#define NVML_THROTTLE_SYNC_BOOST        0x10ull
#define NVML_THROTTLE_SW_THERMAL        0x20ull
#define NVML_THROTTLE_HW_THERMAL        0x40ull
#define NVML_THROTTLE_HW_POWER_BRAKE    0x80ull
#define NVML_THROTTLE_DISPLAY_CLOCKS    0x100ull
/* the reasons that slow a busy GPU down because of power or heat */
#define NVML_THROTTLE_POWER (NVML_THROTTLE_SW_POWER_CAP | NVML_THROTTLE_HW_POWER_BRAKE)
#define NVML_THROTTLE_THERMAL (NVML_THROTTLE_HW_SLOWDOWN | NVML_THROTTLE_SW_THERMAL | \
                               NVML_THROTTLE_HW_THERMAL)

/* One GPU's figures in base units. Each has_* flag says whether the driver answered that
 * query (a GeForce has no ECC, some boards report no power limit): absent figures are left
 * out of /metrics rather than shown as 0. present = false: the GPU did not answer at all
 * (fell off the bus, driver reset); error then says what NVML said. */
struct nvml_sample {
    bool present;
    char name[96];
    char error[160];
    bool has_util;      double util_gpu, util_mem;         /* 0..1 over the driver's last period */
    bool has_mem;       uint64_t mem_used, mem_total;      /* bytes */
    bool has_temp;      double temp_c;                     /* degrees Celsius, GPU die */
    bool has_power;     double power_w;                    /* watts, board draw */
    bool has_plimit;    double power_limit_w;              /* watts, enforced limit */
    bool has_clock;     double sm_clock_hz;
    bool has_throttle;  uint64_t throttle;                 /* NVML_THROTTLE_* bits */
    bool has_ecc;       uint64_t ecc_corrected, ecc_uncorrected;   /* lifetime (aggregate) */
    bool has_pcie;      double pcie_tx_bps, pcie_rx_bps;   /* bytes per second */
};

struct nvml;
/* Load the library at path (NULL or "": NVML_DEFAULT_LIBRARY, found through the loader's
 * search path) and initialise it. Failures: CUZK_E_NOT_FOUND when the library cannot be
 * loaded (no NVIDIA driver) or lacks a required function, CUZK_E_IO when nvmlInit fails; the
 * message names the path and NVML's reason. max_age_ms: how long a sample is reused. */
int nvml_open(struct nvml **out, const char *path, uint64_t max_age_ms, struct cuzk_error *err);
void nvml_close(struct nvml *n);
/* GPUs NVML sees, and the driver version ("" if unknown). */
unsigned nvml_count(const struct nvml *n);
const char *nvml_driver_version(const struct nvml *n);
/* The figures of GPU index (NVML's numbering: PCI bus order, which is CUDA's numbering under
 * CUDA_DEVICE_ORDER=PCI_BUS_ID, as the systemd unit sets). Never fails: a GPU that does not
 * answer, or an index NVML does not have, gives present = false and the reason in error. A
 * GPU that answers again after vanishing is picked up on the next sample. */
void nvml_sample(struct nvml *n, unsigned index, struct nvml_sample *out);
/* Comma-separated names of the throttle bits ("sw_power_cap,hw_thermal"; "" for none) into
 * buf (cap bytes). */
void nvml_throttle_names(uint64_t bits, char *buf, size_t cap);

#endif
