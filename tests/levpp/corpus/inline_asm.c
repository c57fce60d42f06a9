/* inline_asm.c - inline assembly in checkpointable functions, of the
 * kinds real C uses: an empty statement that pins a value in a register
 * ("+r", an optimisation barrier), a memory clobber, alignment and `nop`
 * padding, a `pause` hint, and an instruction whose output operand is a
 * local that lives across safe points (moved into the frame, it is still
 * an lvalue), inside a statement expression too. The results do not
 * depend on where the run was stopped and resumed. Each round prints one
 * checksum line.
 * usage: inline_asm [ROUNDS]   (default 3); ROUNDS 0: rounds without end
 * Exit status: 0. levpp-test: resume 0 */
#include <stdio.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#define PAUSE() __asm__ volatile("pause")
#else
#define PAUSE() __asm__ volatile("")
#endif

static unsigned long long mix(unsigned long long x)
{
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    __asm__ volatile("" : "+r"(x)); /* the value is not folded away */
    return x ^ (x >> 29);
}

static unsigned long long spin(unsigned long long seed, long n)
{
    unsigned long long total = seed;
    for (long i = 0; i < n; i++) {
        __asm__ volatile("" : "+r"(total));
        total = mix(total + (unsigned long long)i);
        __asm__ volatile("" ::: "memory");
        if (i % 64 == 0)
            PAUSE();
    }
    __asm__(".p2align 4");
    __asm__ volatile("nop");
    return total;
}

/* a copy through an asm output operand (a move on x86-64, else a plain
 * barrier and an assignment), used across a call that is a safe point */
static unsigned long long copy(unsigned long long v)
{
    unsigned long long out;
#if defined(__x86_64__)
    __asm__("movq %1, %0" : "=r"(out) : "r"(v));
#else
    out = v;
    __asm__ volatile("" : "+r"(out));
#endif
    return out;
}

static unsigned long long round_sum(int r)
{
    unsigned long long acc = copy((unsigned long long)r + 1);
    acc = spin(acc, 20000);
    acc += ({
        __asm__ volatile("" ::: "memory");
        copy(acc >> 3);
    });
    return acc;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 3;
    for (long r = 0; rounds == 0 || r < rounds; r++)
        printf("round %ld: %016llx\n", r, round_sum((int)(r % 1000)));
    return 0;
}
