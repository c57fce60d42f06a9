/* tasks_app.c - a program built against an installed Leverage that
 * carries a task module (leverage_add_tasks): loads the module it carries,
 * twice, and prints one line once both loads give the same module hash.
 */
#include <inttypes.h>
#include <stdio.h>

#include <leverage.h>

int main(void)
{
    uint64_t first = 0, second = 0;
    int rc = lev_task_module_load(&first);
    if (rc == 0)
        rc = lev_task_module_load(&second);
    if (rc != 0) {
        fprintf(stderr, "tasks_app: %s: %s\n", lev_strerror(rc), lev_errdetail());
        return 1;
    }
    if (first == 0 || first != second) {
        fprintf(stderr, "tasks_app: module hashes %016" PRIx64 " and %016" PRIx64 "\n", first,
                second);
        return 1;
    }
    printf("task module loaded\n");
    return 0;
}
