/* cell.h - a tagged union shared by the two files of the program: one
 * file writes its members (where levpp pairs them with the tag), the
 * other only reads them. */
#ifndef CELL_H
#define CELL_H

enum cell_kind { CELL_EMPTY, CELL_NUM, CELL_NAME, CELL_NEXT };

struct cell {
    unsigned short kind;
    union {
        long num;
        const char *name;
        struct cell *next;
    } as;
};

/* Fills cells[0..n) (names point into text, links into cells). */
void cells_fill(struct cell *cells, int n, const char *text, int round);

#endif
