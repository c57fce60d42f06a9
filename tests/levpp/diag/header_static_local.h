/* header_static_local.h - a helper whose static local counts calls: it
 * changes, and levpp does not rewrite a header's text. The const table
 * never changes, and the file-scope static travels. */
static const int weights[3] = {1, 2, 3};
static int header_total;

static int next_id(void)
{
    static int last;
    static const char *const names[] = {"a", "b"};
    (void)names;
    header_total += weights[last % 3];
    return ++last;
}
