/* mesh_tests.c - what the test programs of meshes share around cmocka
 * (mesh.h): their work directory, and running their tests, one when
 * named, with the directory removed once every test passed. Apart from
 * mesh.c, which the benchmarks link without cmocka.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "mesh.h"

int mesh_workdir(char *dir, size_t cap, const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/lev-%s-XXXXXX", tmp ? tmp : "/tmp", name);
    return mkdtemp(dir) ? 0 : -1;
}

int mesh_run_tests(const struct CMUnitTest *tests, size_t n, int argc, char **argv, const char *dir)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    int rc = _cmocka_run_group_tests("all", tests, n, NULL, NULL);
    if (!rc) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd))
            rc = 1;
    }
    return rc;
}
