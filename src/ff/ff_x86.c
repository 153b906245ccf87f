/* ff_x86.c: run-time choice of the Fp/Fr multiplication: the mulx/adcx/adox assembly of
 * ff_x86.h when the CPU has BMI2 and ADX, else the portable C of ff_internal.h. */
#include "cuzk/ff.h"
#include "ff_x86.h"

#if FF_HAVE_X86_ASM
#include <cpuid.h>
#endif

int ff__use_adx;

static int ff_cpu_has_adx(void)
{
#if FF_HAVE_X86_ASM
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, NULL) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    (void)a, (void)c, (void)d;
    return (b & (1u << 8)) && (b & (1u << 19));   /* CPUID.7.0:EBX bit 8 BMI2, bit 19 ADX */
#else
    return 0;
#endif
}

/* Runs before main (fp.o and fr.o reference ff__use_adx, so this object is always linked). */
__attribute__((constructor)) static void ff_x86_init(void) { ff__use_adx = ff_cpu_has_adx(); }

const char *ff_backend(void) { return ff__use_adx ? "x86-64 mulx/adx" : "portable C"; }

void ff_force_portable(bool on) { ff__use_adx = on ? 0 : ff_cpu_has_adx(); }
