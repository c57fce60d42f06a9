/* bias.c - a second input of the program, with no #include in a body. */
long bias_of(long x);

long bias_of(long x) { return 7 * x + 1; }
