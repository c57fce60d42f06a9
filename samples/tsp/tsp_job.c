/* tsp_job.c - the work of one run of the sample (tsp_job.h): the default
 * budget, the number of epochs, and the validation of a job received as
 * a VT's argument. */
#include "tsp_job.h"

#include <string.h>

int64_t tsp_budget_default(int32_t n)
{
    /* 20 units of the default parameters for each of 8 islands: berlin52
     * to kroA100 in under a second, pr1002 in about 40 s of one core
     * (measured with lev-tsp-seq, samples/tsp/README.md). */
    ga_params p;
    ga_params_default(&p, n);
    return (int64_t)8 * 20 * p.gens;
}

int32_t tsp_job_epochs(int64_t budget, int32_t islands, int32_t gens)
{
    int64_t per = (int64_t)islands * gens;
    if (per <= 0 || budget <= 0)
        return 1;
    int64_t e = (budget + per - 1) / per;
    return e > INT32_MAX ? INT32_MAX : (int32_t)e;
}

int tsp_job_check(const void *job, size_t len, const double **xy, const char **why)
{
    tsp_job j;
    const char *w = NULL;
    if (!job || len < sizeof j)
        w = "the job is shorter than its header";
    else {
        memcpy(&j, job, sizeof j);
        if (j.magic != TSP_JOB_MAGIC)
            w = "the job does not start with its magic number";
        else if (j.n < 5 || j.n > TSP_CITIES_MAX)
            w = "n (cities) is out of range";
        else if (len != sizeof j + (size_t)j.n * 2 * sizeof(double))
            w = "the job's length does not match n";
        else if (j.metric < 1 || j.metric > 4)
            w = "metric is not an edge weight type the sample knows";
        else if (j.islands < 1 || j.islands > TSP_ISLANDS_MAX)
            w = "islands is out of range";
        else if (j.epochs < 1)
            w = "epochs is below 1";
        else
            (void)ga_params_check(&j.ga, j.n, &w); /* sets w when a field is bad */
    }
    if (w) {
        if (why)
            *why = w;
        return -1;
    }
    if (xy)
        *xy = (const void *)((const char *)job + sizeof(tsp_job)); /* 8-aligned: the header is */
    return 0;
}
