/* progress.c: counts, rate, ETA and the progress line (see progress.h). */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cuzk/progress.h"
#include "cuzk/util.h"

#define NS_PER_S 1000000000ull

void cuzk_progress_init(struct cuzk_progress *p, FILE *out, const char *what, const char *unit,
                        double scale)
{
    p->out = out;
    p->tty = out && isatty(fileno(out));
    p->what = what ? what : "";
    p->unit = unit ? unit : "";
    p->scale = scale > 0 ? scale : 1.0;
    atomic_store(&p->phase, NULL);
    atomic_store(&p->total, 0);
    atomic_store(&p->done, 0);
    atomic_store(&p->t0_ns, cuzk_now_ns());
    atomic_store(&p->next_ns, 0);
    atomic_store(&p->tenth, 0);
}

void cuzk_progress_phase(struct cuzk_progress *p, const char *phase, uint64_t total)
{
    const uint64_t now = cuzk_now_ns();
    atomic_store(&p->done, 0);
    atomic_store(&p->total, total);
    atomic_store(&p->t0_ns, now);
    atomic_store(&p->tenth, 0);
    /* the first plain line comes at the first tenth or after the interval, not at once */
    atomic_store(&p->next_ns, now + (p->tty ? (uint64_t)CUZK_PROGRESS_TTY_MS * 1000000u
                                            : (uint64_t)CUZK_PROGRESS_PLAIN_S * NS_PER_S));
    atomic_store(&p->phase, phase);
}

void cuzk_progress_read(const struct cuzk_progress *p, uint64_t now_ns, struct cuzk_progress_view *v)
{
    v->what = p->what;
    v->unit = p->unit;
    v->scale = p->scale;
    v->phase = atomic_load(&p->phase);
    v->total = atomic_load(&p->total);
    v->done = atomic_load(&p->done);
    const uint64_t t0 = atomic_load(&p->t0_ns);
    v->elapsed_ns = now_ns > t0 ? now_ns - t0 : 0;
}

double cuzk_progress_rate(const struct cuzk_progress_view *v)
{
    return v->elapsed_ns ? (double)v->done * 1e9 / (double)v->elapsed_ns : 0.0;
}

double cuzk_progress_eta_s(const struct cuzk_progress_view *v)
{
    if (v->done >= v->total) return 0.0;
    if (!v->done || !v->elapsed_ns) return -1.0;
    return (double)(v->total - v->done) / cuzk_progress_rate(v);
}

/* "45s", "2m05s", "1h02m" (seconds rounded up: an ETA of 0.2 s is not "0s" while work is left) */
static void fmt_dur(char *buf, size_t cap, double s)
{
    uint64_t t = s <= 0 ? 0 : (uint64_t)ceil(s);
    if (t < 60) snprintf(buf, cap, "%us", (unsigned)t);
    else if (t < 3600) snprintf(buf, cap, "%um%02us", (unsigned)(t / 60), (unsigned)(t % 60));
    else snprintf(buf, cap, "%" PRIu64 "h%02um", t / 3600, (unsigned)(t % 3600 / 60));
}

static void fmt_count(char *buf, size_t cap, const struct cuzk_progress_view *v, uint64_t n)
{
    if (v->scale == 1.0) snprintf(buf, cap, "%" PRIu64, n);
    else snprintf(buf, cap, "%.1f", (double)n * v->scale);
}

int cuzk_progress_format(char *buf, size_t cap, const struct cuzk_progress_view *v, bool tty)
{
    char done[32], total[32], tail[48];
    fmt_count(done, sizeof done, v, v->done);
    fmt_count(total, sizeof total, v, v->total);
    const unsigned pct = v->total ? (unsigned)(v->done >= v->total ? 100 : v->done * 100 / v->total) : 0;
    const double rate = cuzk_progress_rate(v) * v->scale;
    if (v->total && v->done >= v->total) {
        char d[24];
        fmt_dur(d, sizeof d, (double)v->elapsed_ns / 1e9);
        snprintf(tail, sizeof tail, "done in %s", d);
    } else {
        const double eta = cuzk_progress_eta_s(v);
        char d[24];
        if (eta < 0) snprintf(d, sizeof d, "?");
        else fmt_dur(d, sizeof d, eta);
        snprintf(tail, sizeof tail, "ETA %s", d);
    }
    const char *ph = v->phase ? v->phase : "";
    const char *sep = v->phase ? " " : "";
    if (tty)
        return snprintf(buf, cap, "\r%s: %s%s%3u%%  %s/%s %s  %.*f %s/s  %s\033[K", v->what, ph, sep,
                        pct, done, total, v->unit, rate < 10 ? 2 : 1, rate, v->unit, tail);
    return snprintf(buf, cap, "%s: %s%s%u%% (%s of %s %s, %.*f %s/s, %s)\n", v->what, ph, sep, pct,
                    done, total, v->unit, rate < 10 ? 2 : 1, rate, v->unit, tail);
}

static void emit(struct cuzk_progress *p, uint64_t now_ns)
{
    struct cuzk_progress_view v;
    cuzk_progress_read(p, now_ns, &v);
    char line[512];
    cuzk_progress_format(line, sizeof line, &v, p->tty);
    fputs(line, p->out);
    fflush(p->out);
}

/* Print if a line is due now that `done` counts are done. */
static void maybe_emit(struct cuzk_progress *p, uint64_t done, uint64_t now_ns)
{
    const uint64_t total = atomic_load(&p->total);
    uint64_t due = atomic_load(&p->next_ns);
    const uint64_t step = p->tty ? (uint64_t)CUZK_PROGRESS_TTY_MS * 1000000u
                                 : (uint64_t)CUZK_PROGRESS_PLAIN_S * NS_PER_S;
    if (!p->tty && total) {
        /* a plain line at each tenth crossed; only the thread that moves the tenth prints */
        unsigned t = (unsigned)((done >= total ? total : done) * 10 / total);
        unsigned last = atomic_load(&p->tenth);
        while (t > last && t < 10) {
            if (atomic_compare_exchange_weak(&p->tenth, &last, t)) {
                atomic_store(&p->next_ns, now_ns + step);
                emit(p, now_ns);
                return;
            }
        }
    }
    /* the time-driven line (the terminal's redraw, the plain line of a slow phase); the
     * last line of a phase is cuzk_progress_end's */
    if (now_ns >= due && (!total || done < total) &&
        atomic_compare_exchange_strong(&p->next_ns, &due, now_ns + step))
        emit(p, now_ns);
}

void cuzk_progress_set_at(struct cuzk_progress *p, uint64_t done, uint64_t now_ns)
{
    atomic_store(&p->done, done);
    if (p->out) maybe_emit(p, done, now_ns);
}

void cuzk_progress_set(struct cuzk_progress *p, uint64_t done)
{
    cuzk_progress_set_at(p, done, cuzk_now_ns());
}

void cuzk_progress_add(struct cuzk_progress *p, uint64_t n)
{
    const uint64_t d = atomic_fetch_add(&p->done, n) + n;
    if (p->out) maybe_emit(p, d, cuzk_now_ns());
}

void cuzk_progress_print(struct cuzk_progress *p)
{
    if (p->out) emit(p, cuzk_now_ns());
}

void cuzk_progress_end_at(struct cuzk_progress *p, uint64_t now_ns)
{
    if (!p->out) return;
    emit(p, now_ns);
    if (p->tty) {
        fputc('\n', p->out);
        fflush(p->out);
    }
}

void cuzk_progress_end(struct cuzk_progress *p)
{
    cuzk_progress_end_at(p, cuzk_now_ns());
}
