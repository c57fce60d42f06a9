/* std_redirect.c - stdin sent to a file by freopen, then read in a loop
 * across safe points. Images carry the standard streams as those of the
 * process that resumes them, so a resumed run would read the terminal
 * instead: a plain run prints the sum, and under torture every capture
 * must fail, naming the stream and the file.
 * moving-expects: stdin was sent to 'std_redirect.in' by freopen */
#include <stdio.h>

int main(void)
{
    FILE *f = fopen("std_redirect.in", "w");
    if (!f)
        return 2;
    for (int i = 0; i < 4000; i++)
        fprintf(f, "%d\n", i * 7);
    fclose(f);
    if (!freopen("std_redirect.in", "r", stdin))
        return 3;
    long sum = 0, n = 0;
    int c;
    while ((c = getchar()) != EOF) {
        sum += c;
        n++;
    }
    printf("%ld bytes, sum %ld\n", n, sum);
    return 0;
}
