/* bbc_driver.c - runs of the BBC chess engine (the bitboard engine of the
 * perft-test stage, src/bbc.c) that end in a bounded time. The engine's
 * own main (perft 5 from the "tricky" position, about 12 s at -O1) is
 * renamed bbc_main by -Dmain=bbc_main on the command line; this file
 * undoes that for itself and calls the engine's functions.
 *
 * usage: bbc_driver                    the engine's own main
 *        bbc_driver ROUNDS DEPTH       perft DEPTH from four positions in
 *                                      turn, ROUNDS times (0: until killed)
 *
 * perft_test prints the node count of each root move, the total and the
 * time taken: the "Time:" lines are the only ones that vary.
 */
#undef main

#include <stdio.h>
#include <stdlib.h>

int bbc_main();
void init_all();
void parse_fen(char *fen);
void perft_test(int depth);

static char *const positions[] = {
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1 ",
    "rnbqkb1r/pp1p1pPp/8/2p1pP2/1P1P4/3P3P/P1P1P3/RNBQKBNR w KQkq e6 0 1",
    "r2q1rk1/ppp2ppp/2n1bn2/2b1p3/3pP3/3P1NPP/PPP1NPB1/R1BQ1RK1 b - - 0 9 ",
};

int main(int argc, char **argv)
{
    if (argc < 3)
        return bbc_main();
    long rounds = atol(argv[1]);
    int depth = atoi(argv[2]);
    init_all();
    for (long r = 1; rounds == 0 || r <= rounds; r++) {
        parse_fen(positions[(r - 1) % 4]);
        printf("round %ld\n", r);
        perft_test(depth);
        fflush(stdout);
    }
    return 0;
}
