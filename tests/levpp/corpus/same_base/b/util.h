/* b/util.h - what b/util.c names util.h: another scale, another name. */
#define UTIL_SCALE 7
#define UTIL_NAME "bee"
