/* nests.h - the loop nests of the time-to-safe-point test: each shape is
 * a task entry (nests.c, through levpp) and a plain C reference (the same
 * source compiled as it is, with NESTS_NATIVE). */
#ifndef NESTS_H
#define NESTS_H

/* What every task takes: the size of its work. */
struct nest_arg {
    long rounds; /* outer iterations */
    long steps;  /* inner iterations, known only at run time */
};

/* Native references of the tasks, same results. */
long nest_ring_ref(const struct nest_arg *a);
long nest_deep_ref(const struct nest_arg *a);
long nest_list_ref(const struct nest_arg *a);
long nest_counted3_ref(const struct nest_arg *a);
long nest_macro_ref(const struct nest_arg *a);
long nest_const_ref(const struct nest_arg *a);
long nest_scan_ref(const struct nest_arg *a);

#endif
