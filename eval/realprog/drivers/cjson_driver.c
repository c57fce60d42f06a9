/* cjson_driver.c - a deterministic, CPU-bound run of cJSON and cJSON_Utils
 * through their public API: each round builds a document from a seeded
 * generator, prints it, parses it back, compares, diffs it against a
 * modified copy (JSON Patch and Merge Patch), applies the patches, sorts
 * it, and prints one line of checksums.
 *
 * usage: cjson_driver ROUNDS [SIZE]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "cJSON_Utils.h"

static unsigned long long next_rand(unsigned long long *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

static unsigned long fnv(const char *p)
{
    unsigned long h = 2166136261UL;
    for (; *p; p++)
        h = ((h ^ (unsigned char)*p) * 16777619UL) & 0xffffffffUL;
    return h;
}

static void make_key(unsigned long long *s, char *key, int i)
{
    static const char *const words[] = {"alpha", "beta", "gamma", "delta",
                                        "eps",   "zeta", "eta",   "theta"};
    sprintf(key, "%s_%d", words[next_rand(s) % 8], i);
}

static cJSON *make_value(unsigned long long *s, int depth, int size)
{
    int kind = (int)(next_rand(s) % (depth > 0 ? 6 : 4));
    char buf[64];
    switch (kind) {
    case 0:
        return cJSON_CreateNumber((double)(long)(next_rand(s) % 100000) - 50000);
    case 1:
        return cJSON_CreateNumber((double)(next_rand(s) % 100000) / 64.0);
    case 2:
        sprintf(buf, "s%llu \"q\" \\ %llu", next_rand(s) % 1000, next_rand(s) % 97);
        return cJSON_CreateString(buf);
    case 3:
        return next_rand(s) % 3 ? cJSON_CreateBool((int)(next_rand(s) & 1)) : cJSON_CreateNull();
    case 4: {
        cJSON *a = cJSON_CreateArray();
        int n = (int)(next_rand(s) % (unsigned)size);
        for (int i = 0; i < n; i++)
            cJSON_AddItemToArray(a, make_value(s, depth - 1, size));
        return a;
    }
    default: {
        cJSON *o = cJSON_CreateObject();
        int n = (int)(next_rand(s) % (unsigned)size);
        for (int i = 0; i < n; i++) {
            make_key(s, buf, i);
            cJSON_AddItemToObject(o, buf, make_value(s, depth - 1, size));
        }
        return o;
    }
    }
}

/* A copy with a few members changed, removed and added. */
static void mutate(unsigned long long *s, cJSON *o)
{
    cJSON *c;
    int i = 0;
    char key[64];
    cJSON_ArrayForEach(c, o)
    {
        if (cJSON_IsNumber(c) && next_rand(s) % 3 == 0)
            cJSON_SetNumberValue(c, c->valuedouble + 1);
        else if (cJSON_IsObject(c) && next_rand(s) % 2 == 0)
            mutate(s, c);
        i++;
    }
    if (i > 2 && next_rand(s) % 2 == 0)
        cJSON_DeleteItemFromArray(o, (int)(next_rand(s) % (unsigned)i));
    make_key(s, key, 1000 + i);
    cJSON_AddNumberToObject(o, key, (double)(next_rand(s) % 1000));
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    int size = argc > 2 ? atoi(argv[2]) : 12;
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        unsigned long long s = (unsigned long long)r * 7919;
        cJSON *doc = cJSON_CreateObject();
        char key[64];
        for (int i = 0; i < size; i++) {
            make_key(&s, key, i);
            cJSON_AddItemToObject(doc, key, make_value(&s, 4, size));
        }
        char *text = cJSON_PrintUnformatted(doc);
        char *pretty = cJSON_Print(doc);
        cJSON *back = cJSON_Parse(pretty);
        int same = back != NULL && cJSON_Compare(doc, back, 1);

        cJSON *changed = cJSON_Duplicate(doc, 1);
        mutate(&s, changed);
        cJSON *patches = cJSONUtils_GeneratePatchesCaseSensitive(doc, changed);
        cJSON *merge = cJSONUtils_GenerateMergePatchCaseSensitive(doc, changed);
        int npatches = cJSON_GetArraySize(patches);
        int applied = cJSONUtils_ApplyPatchesCaseSensitive(back, patches);
        int patched_same = cJSON_Compare(back, changed, 1);
        cJSON *merged = cJSONUtils_MergePatchCaseSensitive(cJSON_Duplicate(doc, 1), merge);
        int merged_same = cJSON_Compare(merged, changed, 1);
        cJSONUtils_SortObjectCaseSensitive(merged);
        char *sorted = cJSON_PrintUnformatted(merged);

        printf("round %ld: len %zu hash %08lx pretty %08lx patches %d applied %d same %d/%d/%d "
               "sorted %08lx\n",
               r, strlen(text), fnv(text), fnv(pretty), npatches, applied, same, patched_same,
               merged_same, fnv(sorted));
        fflush(stdout);
        cJSON_free(text);
        cJSON_free(pretty);
        cJSON_free(sorted);
        cJSON_Delete(doc);
        cJSON_Delete(back);
        cJSON_Delete(changed);
        cJSON_Delete(patches);
        cJSON_Delete(merge);
        cJSON_Delete(merged);
    }
    return 0;
}
