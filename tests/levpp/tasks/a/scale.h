/* a/scale.h - the factor of a/scale.c, found beside it only (the other
 * scale.c has a scale.h of its own). */
#define SCALE_FACTOR 20
