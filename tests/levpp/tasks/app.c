/* app.c - the application of the leverage_add_tasks test: finds its task
 * module through LEV_TASK_MODULE_PATH, loads it and calls into it.
 * Exit status 0 when the module loads and answers. */
#include <dlfcn.h>
#include <stdio.h>

#ifndef LEV_TASK_MODULE_PATH
#error "leverage_add_tasks did not define LEV_TASK_MODULE_PATH"
#endif

int main(void)
{
    void *h = dlopen(LEV_TASK_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "app: cannot load %s: %s\n", LEV_TASK_MODULE_PATH, dlerror());
        return 1;
    }
    int (*probe)(void);
    *(void **)&probe = dlsym(h, "tasks_probe");
    if (!probe) {
        fprintf(stderr, "app: no tasks_probe in %s\n", LEV_TASK_MODULE_PATH);
        return 1;
    }
    int v = probe();
    printf("tasks_probe() = %d\n", v);
    return v == 1330 ? 0 : 1; /* 1000 + (1 + 2 + 3 + 4) + 20 + 300 */
}
