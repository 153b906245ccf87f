/* queue.c: the priority queues of partitions (synthesis, proving, and each device's): a
 * binary heap in (priority high first, job seq, partition) order, with removal and moving of
 * a job's items. Every function runs with e->mu held. */
#include <stdlib.h>

#include "engine_internal.h"

/* --------------------------------------------------------- priority queue -- */

bool q_before(const struct qitem *a, const struct qitem *b)
{
    if (a->job->priority != b->job->priority) return a->job->priority > b->job->priority;
    if (a->job->seq != b->job->seq) return a->job->seq < b->job->seq;
    return a->part < b->part;
}

void q_sift_down(struct pqueue *q, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && q_before(&q->v[l], &q->v[m])) m = l;
        if (r < q->n && q_before(&q->v[r], &q->v[m])) m = r;
        if (m == i) return;
        struct qitem t = q->v[i]; q->v[i] = q->v[m]; q->v[m] = t;
        i = m;
    }
}

int q_push(struct pqueue *q, struct job *j, uint32_t part)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        struct qitem *v = realloc(q->v, cap * sizeof *v);
        if (!v) return CUZK_E_NOMEM;
        q->v = v;
        q->cap = cap;
    }
    size_t i = q->n++;
    q->v[i] = (struct qitem){j, part};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!q_before(&q->v[i], &q->v[p])) break;
        struct qitem t = q->v[i]; q->v[i] = q->v[p]; q->v[p] = t;
        i = p;
    }
    return CUZK_OK;
}

struct qitem q_pop(struct pqueue *q)
{
    struct qitem top = q->v[0];
    q->v[0] = q->v[--q->n];
    q_sift_down(q, 0);
    return top;
}

/* Remove every item of job j; returns how many were removed. */
uint32_t q_remove_job(struct pqueue *q, const struct job *j)
{
    size_t w = 0;
    uint32_t removed = 0;
    for (size_t r = 0; r < q->n; r++) {
        if (q->v[r].job == j) removed++;
        else q->v[w++] = q->v[r];
    }
    q->n = w;
    for (size_t i = q->n / 2; i-- > 0;) q_sift_down(q, i);
    return removed;
}

/* Move every item of job j from src to dst (a job bound to a device). false, nothing moved,
 * when dst cannot grow. */
bool q_move_job(struct pqueue *dst, struct pqueue *src, struct job *j)
{
    size_t k = 0;
    for (size_t r = 0; r < src->n; r++) k += src->v[r].job == j;
    if (!k) return true;
    if (dst->n + k > dst->cap) {
        size_t cap = dst->cap ? dst->cap : 64;
        while (cap < dst->n + k) cap *= 2;
        struct qitem *v = realloc(dst->v, cap * sizeof *v);
        if (!v) return false;
        dst->v = v;
        dst->cap = cap;
    }
    for (size_t r = 0; r < src->n; r++)
        if (src->v[r].job == j) q_push(dst, j, src->v[r].part);   /* capacity is there */
    q_remove_job(src, j);
    return true;
}

/* Take the item at position i of q (heap order restored). */
struct qitem q_take_at(struct pqueue *q, size_t i)
{
    struct qitem it = q->v[i];
    q->v[i] = q->v[--q->n];
    if (i < q->n) {
        q_sift_down(q, i);
        while (i > 0 && q_before(&q->v[i], &q->v[(i - 1) / 2])) {
            size_t p = (i - 1) / 2;
            struct qitem t = q->v[i]; q->v[i] = q->v[p]; q->v[p] = t;
            i = p;
        }
    }
    return it;
}
