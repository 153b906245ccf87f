/* bench_gpu_peak.c: cuzk-bench-gpu gpu-peak: the device's measured peaks (IMAD, carry-chain IMAD,
 * FP64 FMA, both pipes at once, Fr/Fp Montgomery products, DRAM read and copy), the
 * denominators of the roofline in docs/gpu.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench/peak.h"

BENCH_CMD(gpu_peak, "gpu-peak", "GPU peaks for the roofline: gpu-peak [--reps R] [--device D]")
{
    int reps = 5, dev = 0;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) goto usage;
        if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--device")) dev = atoi(argv[i + 1]);
        else goto usage;
    }
    struct gpu_peak p;
    struct cuzk_error err;
    if (gpu_peak_measure(dev, reps, &p, &err)) {
        fprintf(stderr, "gpu-peak: %s\n", err.msg);
        return 1;
    }
    /* per SM per clock: the figure the data sheets quote */
    double per = p.sms * p.clock_mhz * 1e6;
    printf("device %d: %d SMs, max SM clock %.0f MHz\n", dev, p.sms, p.clock_mhz);
    printf("gpu_peak_imad          %8.3f T/s  %6.1f per SM per clock\n", p.imad / 1e12, p.imad / per);
    printf("gpu_peak_imad_cc       %8.3f T/s  %6.1f per SM per clock\n", p.imad_cc / 1e12, p.imad_cc / per);
    printf("gpu_peak_dfma          %8.3f T/s  %6.1f per SM per clock\n", p.dfma / 1e12, p.dfma / per);
    printf("gpu_peak_mix           %8.3f + %.3f T/s (IMAD + FP64 FMA in one loop)\n", p.mix_imad / 1e12,
           p.mix_dfma / 1e12);
    printf("gpu_peak_fr_mul        %8.2f G/s  (%.0f IMAD-slots per product at the IMAD peak)\n", p.fr_mul / 1e9,
           p.imad / p.fr_mul);
    printf("gpu_peak_fp_mul        %8.2f G/s  (%.0f IMAD-slots per product at the IMAD peak)\n", p.fp_mul / 1e9,
           p.imad / p.fp_mul);
    printf("gpu_peak_fr_mul_fp64   %8.2f G/s  (52-bit limbs on the FP64 pipe; %llu of %llu checked products wrong)\n",
           p.fr_mul_fp64 / 1e9, p.fr_fp64_bad, p.fr_fp64_checked);
    printf("gpu_peak_fr_mul_mix    %8.2f G/s  (half IMAD, half FP64 products in one loop)\n", p.fr_mul_mix / 1e9);
    printf("gpu_peak_dram_read     %8.1f GB/s\n", p.dram_read / 1e9);
    printf("gpu_peak_dram_copy     %8.1f GB/s (read + write)\n", p.dram_copy / 1e9);
    return 0;
usage:
    fprintf(stderr, "usage: gpu-peak [--reps R] [--device D]\n");
    return 2;
}
