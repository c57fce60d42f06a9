/* simq.c - the simulators' event queue (simq.h). */
#include "simq.h"

#include <stdlib.h>
#include <string.h>

void simq_init(simq *q, size_t size, simq_before before)
{
    memset(q, 0, sizeof *q);
    q->size = size;
    q->before = before;
    q->tmp = malloc(size);
    if (!q->tmp)
        abort();
}

void simq_free(simq *q)
{
    free(q->items);
    free(q->tmp);
    memset(q, 0, sizeof *q);
}

void simq_push(simq *q, const void *item)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 1024;
        unsigned char *a = realloc(q->items, cap * q->size);
        if (!a)
            abort();
        q->items = a;
        q->cap = cap;
    }
    size_t i = q->n++;
    while (i > 0 && q->before(item, simq_item(q, (i - 1) / 2))) {
        memcpy(simq_item(q, i), simq_item(q, (i - 1) / 2), q->size);
        i = (i - 1) / 2;
    }
    memcpy(simq_item(q, i), item, q->size);
}

void simq_pop(simq *q, void *out)
{
    memcpy(out, simq_item(q, 0), q->size);
    memcpy(q->tmp, simq_item(q, --q->n), q->size);
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && q->before(simq_item(q, c + 1), simq_item(q, c)))
            c++;
        if (!q->before(simq_item(q, c), q->tmp))
            break;
        memcpy(simq_item(q, i), simq_item(q, c), q->size);
        i = c;
    }
    if (q->n)
        memcpy(simq_item(q, i), q->tmp, q->size);
}
