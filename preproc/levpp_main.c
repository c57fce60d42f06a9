/* levpp_main.c - levpp's main: the command line run once (pp_main,
 * levpp.c), over the passes of levpp_lib.
 */
#include "levpp.h"

int main(int argc, char **argv) { return pp_main(argc, argv); }
