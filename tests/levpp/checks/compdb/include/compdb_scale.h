/* compdb_scale.h - found only through the compilation database's -I. */
#ifndef COMPDB_SCALE_H
#define COMPDB_SCALE_H

#ifndef COMPDB_FACTOR
#error "COMPDB_FACTOR comes from the compilation database"
#endif
#define COMPDB_SCALE (COMPDB_FACTOR + 1)

#endif
