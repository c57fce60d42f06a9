/* libc_state.h - a macro that calls rand, for libc_state.c. */
#define ROLL() (rand() % 6 + 1)
