/* block_noproto.c - a blocking Leverage function declared without its
 * prototype: levpp keeps its arguments in temporaries of its parameters'
 * types, which only lev_task.h's prototype gives. */
#include <stddef.h>
#include <stdint.h>

int lev_recv();

int main(void)
{
    uint64_t from = 0;
    void *buf = NULL;
    size_t len = 0;
    int rc = lev_recv(&from, &buf, &len, -1);
    return rc == 0 && len == 0 ? 0 : 1;
}
