/* ga.h - the island-model genetic algorithm for the TSP (ga.c): one
 * island's population evolved one epoch at a time. Plain C with no
 * Leverage call, compiled twice: into the task module (through levpp, so
 * an epoch may be captured at any loop poll) and natively into the
 * sequential reference lev-tsp-seq.
 *
 * Determinism: an island's next state is a function of its state, the
 * migrant it takes and the world only (its random numbers come from a
 * generator kept in the state), so the same job gives the same tours on
 * any number of machines, in any order of units. Distances are integers;
 * only GEO instances use floating point (cos, acos), which is exact on
 * one architecture but may differ in the last bit between two.
 *
 * An island's state is one flat block of bytes with no pointer in it (it
 * travels as a global variable of the virtual computer); ga_island_check
 * validates one that came from elsewhere.
 */
#ifndef TSP_GA_H
#define TSP_GA_H

#include <stddef.h>
#include <stdint.h>

/* The parameters of the algorithm; ga_params_default fills them. */
typedef struct ga_params {
    int32_t pop;        /* chromosomes per island */
    int32_t gens;       /* generations per epoch (one unit of work) */
    int32_t tournament; /* tournament size of the parent selection */
    int32_t elite;      /* best chromosomes kept unchanged each generation */
} ga_params;

/* The instance and what the algorithm derives from it (neighbour lists,
 * a distance matrix for small instances) plus scratch space: built once
 * per process or VT, read-only apart from the scratch. */
typedef struct ga_world ga_world;

/* Fills *p with the default parameters for an instance of n cities. */
void ga_params_default(ga_params *p, int32_t n);

/* Returns 0 if p is usable for n cities, else -1 and a static sentence
 * naming the first bad field in *why. */
int ga_params_check(const ga_params *p, int32_t n, const char **why);

/* Builds the world of n cities (n >= 5) of metric m (tsp_metric) at
 * coordinates xy[2n] (x0, y0, x1, y1...; GEO in radians), copied. Caller
 * owns it and frees it with ga_world_destroy; NULL when memory runs out or
 * the arguments are invalid. */
ga_world *ga_world_new(int32_t n, int32_t m, const double *xy, const ga_params *p);

/* Frees *w and sets it to NULL; accepts NULL. */
void ga_world_destroy(ga_world **w);

/* The nearest cities of city a in w (nearest first, ties by the lower
 * index), *count of them: the candidates of the local search. Owned by w. */
const int32_t *ga_world_neighbours(const ga_world *w, int32_t a, int32_t *count);

/* Length of the closed tour (a permutation of 0..n-1) in w. */
int64_t ga_tour_length(const ga_world *w, const int32_t *tour);

/* Size in bytes of one island's state in w. */
size_t ga_island_bytes(const ga_world *w);

/* Writes into state (ga_island_bytes long) the first population of
 * island `island` of the run seeded with `seed`: epoch 0. */
void ga_island_init(ga_world *w, void *state, uint64_t seed, int32_t island);

/* Runs one epoch of the island: takes `migrant` (a tour of w, or NULL) in
 * place of its worst chromosome, then evolves p->gens generations; the
 * state's epoch goes up by one. */
void ga_island_epoch(ga_world *w, void *state, const int32_t *migrant);

/* The number of epochs the island has run. */
int32_t ga_island_epochs(const void *state);

/* Length of the island's best tour, copied to tour[n] when tour is not
 * NULL. */
int64_t ga_island_best(const ga_world *w, const void *state, int32_t *tour);

/* Returns 0 if state[len] is a valid island state of w (size, header, every
 * chromosome a permutation, lengths right), else -1 and a static sentence
 * saying what is wrong in *why. */
int ga_island_check(const ga_world *w, const void *state, size_t len, const char **why);

#endif
