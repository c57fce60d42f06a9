/* strings.c - character arrays in frames and on the heap: strcpy,
 * strcat, strcmp, strncpy, strchr, snprintf into buffers, string literals
 * kept in pointers across loops, in-place reversal and tokenising.
 * Exit status: 0 if the round trip of the tokens matches, else 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void reverse_in_place(char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
        char t = s[i];
        s[i] = s[j];
        s[j] = t;
    }
}

/* Splits line at sep into at most max heap copies; returns how many. */
static int split(const char *line, char sep, char **out, int max)
{
    int n = 0;
    const char *start = line;
    while (n < max) {
        const char *end = strchr(start, sep);
        size_t len = end ? (size_t)(end - start) : strlen(start);
        char *tok = malloc(len + 1);
        if (!tok)
            return n;
        memcpy(tok, start, len);
        tok[len] = '\0';
        out[n++] = tok;
        if (!end)
            break;
        start = end + 1;
    }
    return n;
}

/* Joins tokens with sep into buf (truncating); returns the full length. */
static size_t join(char *buf, size_t size, char **tok, int n, const char *sep)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        int w = snprintf(buf + len, len < size ? size - len : 0, "%s%s", i ? sep : "", tok[i]);
        len += (size_t)w;
        if (len >= size)
            len = size - 1;
    }
    return len;
}

static int count_char(const char *s, char c)
{
    int n = 0;
    while ((s = strchr(s, c)) != NULL) {
        n++;
        s++;
    }
    return n;
}

int main(void)
{
    const char *greeting = "hello, world";
    char buf[64];
    strcpy(buf, greeting);
    reverse_in_place(buf);
    printf("reversed: '%s'\n", buf);
    reverse_in_place(buf);
    printf("back: '%s' equal %d\n", buf, strcmp(buf, greeting) == 0);

    char line[] = "alpha:beta::gamma:delta-epsilon:zeta";
    char *tok[8];
    int n = split(line, ':', tok, 8);
    printf("%d tokens:", n);
    for (int i = 0; i < n; i++)
        printf(" [%s]", tok[i]);
    printf("\n");

    char joined[128];
    size_t len = join(joined, sizeof joined, tok, n, ":");
    int same = strcmp(joined, line) == 0;
    printf("joined (%zu): %s, same %d\n", len, joined, same);

    char small[12];
    len = join(small, sizeof small, tok, n, " + ");
    printf("truncated (%zu): '%s'\n", len, small);

    char *longest = NULL;
    for (int i = 0; i < n; i++)
        if (!longest || strlen(tok[i]) > strlen(longest))
            longest = tok[i];
    char *copy = strdup(longest);
    int colons = count_char(line, ':');
    printf("longest '%s', copy '%s', colons in line %d\n", longest, copy, colons);

    char names[3][10];
    strncpy(names[0], "zeta", sizeof names[0]);
    strncpy(names[1], "alpha", sizeof names[1]);
    strncpy(names[2], "mu", sizeof names[2]);
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < 2; i++)
            if (strcmp(names[i], names[i + 1]) > 0) {
                char t[10];
                strcpy(t, names[i]);
                strcpy(names[i], names[i + 1]);
                strcpy(names[i + 1], t);
            }
    printf("sorted names: %s %s %s\n", names[0], names[1], names[2]);

    char msg[40];
    snprintf(msg, sizeof msg, "%s has %d tokens and %.2f%% colons", "line", n, 100.0 * 5 / 37);
    strcat(msg, "!");
    printf("%s\n", msg);

    free(copy);
    for (int i = 0; i < n; i++)
        free(tok[i]);
    return same ? 0 : 1;
}
