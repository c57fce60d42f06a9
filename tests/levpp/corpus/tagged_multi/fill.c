/* fill.c - writes the tagged unions of cell.h. */
#include "cell.h"

void cells_fill(struct cell *cells, int n, const char *text, int round)
{
    for (int i = 0; i < n; i++) {
        struct cell *c = &cells[i];
        switch ((i + round) % 4) {
        case 0:
            c->kind = CELL_NUM;
            c->as.num = i * round;
            break;
        case 1:
            c->kind = CELL_NAME;
            c->as.name = text + (i + round) % 7;
            break;
        case 2:
            c->kind = CELL_NEXT;
            c->as.next = &cells[(i + 1) % n];
            break;
        default:
            c->kind = CELL_EMPTY;
            break;
        }
    }
}
