/* tm_plain.c - a shared object that registers no Leverage module: what the
 * loader must refuse with a clear error. */

/* A function for the object to export. */
int tm_plain_answer(void);

int tm_plain_answer(void) { return 42; }
