/* scale.h - included inside the body of scaled() in main.c: defines the
 * macros the rest of that body and the function after it use, and a
 * static table of its own. */
#define SCALE(x) ((x)*factors[(x)&3])
#define BIAS(x) ((x) + 1000)
static const int factors[4] = {3, 5, 7, 11};
