/* a/util.h - what a/util.c names util.h: its own scale and table. */
#define UTIL_SCALE 3
#define UTIL_NAME "a"
