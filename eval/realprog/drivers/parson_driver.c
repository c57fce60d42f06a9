/* parson_driver.c - a deterministic, CPU-bound run of parson through its
 * public API: each round builds a document from a seeded generator with
 * the value and object API (dotted names, arrays, strings with escapes),
 * serializes it compact and pretty, parses both back, compares them with
 * the original, walks the copy, changes and removes members, and prints
 * one line of sizes and checksums.
 *
 * usage: parson_driver ROUNDS [MEMBERS]   ROUNDS 0: run until killed
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parson.h"

static unsigned long long step(unsigned long long *s)
{
    *s += 0x9e3779b97f4a7c15ULL;
    unsigned long long z = *s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static unsigned long hash_str(unsigned long h, const char *p)
{
    for (; *p; p++)
        h = ((h ^ (unsigned char)*p) * 16777619UL) & 0xffffffffUL;
    return h;
}

static JSON_Value *make(unsigned long long *s, int depth)
{
    char buf[80];
    unsigned long long r = step(s);
    switch (depth > 0 ? r % 6 : r % 4) {
    case 0:
        return json_value_init_number((double)(long long)(r >> 20) / 128.0);
    case 1:
        snprintf(buf, sizeof buf, "text %llu \"q\" \\ / \t %llu", (r >> 8) % 1000, (r >> 30) % 77);
        return json_value_init_string(buf);
    case 2:
        return (r >> 5) % 3 ? json_value_init_boolean((int)((r >> 7) & 1)) : json_value_init_null();
    case 3:
        return json_value_init_number((double)((r >> 9) % 100000));
    case 4: {
        JSON_Value *a = json_value_init_array();
        int n = (int)((r >> 12) % 9);
        for (int i = 0; i < n; i++)
            json_array_append_value(json_array(a), make(s, depth - 1));
        return a;
    }
    default: {
        JSON_Value *o = json_value_init_object();
        int n = (int)((r >> 12) % 8);
        for (int i = 0; i < n; i++) {
            snprintf(buf, sizeof buf, "k%d_%llu", i, (r >> (20 + i)) % 50);
            json_object_set_value(json_object(o), buf, make(s, depth - 1));
        }
        return o;
    }
    }
}

/* Sum of the numbers and checksum of the strings of a whole value. */
static double walk(const JSON_Value *v, unsigned long *h)
{
    size_t n;
    double sum = 0;
    switch (json_value_get_type(v)) {
    case JSONObject:
        n = json_object_get_count(json_object(v));
        for (size_t i = 0; i < n; i++) {
            *h = hash_str(*h, json_object_get_name(json_object(v), i));
            sum += walk(json_object_get_value_at(json_object(v), i), h);
        }
        break;
    case JSONArray:
        n = json_array_get_count(json_array(v));
        for (size_t i = 0; i < n; i++)
            sum += walk(json_array_get_value(json_array(v), i), h);
        break;
    case JSONString:
        *h = hash_str(*h, json_value_get_string(v));
        break;
    case JSONNumber:
        sum += json_value_get_number(v);
        break;
    case JSONBoolean:
        sum += json_value_get_boolean(v);
        break;
    default:
        break;
    }
    return sum;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    int members = argc > 2 ? atoi(argv[2]) : 400;
    char name[64];
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        unsigned long long s = (unsigned long long)r;
        JSON_Value *root = json_value_init_object();
        JSON_Object *o = json_object(root);
        for (int i = 0; i < members; i++) {
            snprintf(name, sizeof name, "group%d.item%d.v", i % 13, i);
            json_object_dotset_value(o, name, make(&s, 4));
        }
        char *compact = json_serialize_to_string(root);
        char *pretty = json_serialize_to_string_pretty(root);
        JSON_Value *a = compact ? json_parse_string(compact) : NULL;
        JSON_Value *b = pretty ? json_parse_string_with_comments(pretty) : NULL;
        int eq = a && b && json_value_equals(a, root) && json_value_equals(b, a);
        unsigned long h = 2166136261UL;
        double sum = a ? walk(a, &h) : 0;
        for (int i = 0; i < members; i += 3) {
            snprintf(name, sizeof name, "group%d.item%d", i % 13, i);
            if (i % 2)
                json_object_dotremove(json_object(b), name);
            else
                json_object_dotset_number(json_object(b), name, i * 0.5);
        }
        char *changed = b ? json_serialize_to_string(b) : NULL;
        printf("round %ld: compact %zu %08lx pretty %zu changed %zu %08lx equal %d sum %.4f walk "
               "%08lx\n",
               r, compact ? strlen(compact) : 0, compact ? hash_str(2166136261UL, compact) : 0,
               pretty ? strlen(pretty) : 0, changed ? strlen(changed) : 0,
               changed ? hash_str(2166136261UL, changed) : 0, eq, sum, h);
        fflush(stdout);
        json_free_serialized_string(compact);
        json_free_serialized_string(pretty);
        json_free_serialized_string(changed);
        json_value_free(a);
        json_value_free(b);
        json_value_free(root);
    }
    return 0;
}
