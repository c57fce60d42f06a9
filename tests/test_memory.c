/* test_memory.c - a VT runs in the same memory however many times it is
 * captured and restored: in place (torture mode), into a new VT (a
 * resume or a migration), or captured without ever being restored
 * (checkpoint files).
 *
 * Each test builds a list of S_NODES nodes in a VT of the hand-written
 * list task, then cycles, running the VT one safe point further at each
 * cycle while it reverses the list (which relinks every node), and reads
 * the resident set size (/proc/self/statm) and the collector's heap after
 * S_EARLY cycles and after all of them: the later figures must stay
 * within twice the early ones, and within a fixed allowance of the live
 * bytes. Counts of cycles, not times, bound every loop, so the outcome
 * does not depend on the machine's speed or load. This runner has its own
 * process so that no other test's memory is counted.
 *
 * Under AddressSanitizer, whose quarantine keeps freed C memory (the
 * images) resident up to its own limit, only the collector's heap is
 * checked, over fewer cycles.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define GC_THREADS
#include <gc/gc.h>

#include "heap.h"
#include "hw/hw_drive.h"
#include "hw/hw_list.h"
#include "image.h"
#include "rt.h"
#include "vt.h"

#if defined(__SANITIZE_ADDRESS__)
#define S_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define S_ASAN 1
#endif
#endif

enum { S_NODES = 2000, S_EARLY = 100 };

/* Cycles per test. In the normal build, 100,000 in place, 20,000 into a
 * new VT (each also creates and frees a VT) and 50,000 captures alone: a
 * few seconds each. Under AddressSanitizer, whose checks make each cycle
 * many times slower, a fifth of that. */
#ifdef S_ASAN
#define S_SCALE 5u
#else
#define S_SCALE 1u
#endif
#define S_CYCLES (100000u / S_SCALE)
#define S_CYCLES_NEW_VT (20000u / S_SCALE)
#define S_CYCLES_CAPTURE (50000u / S_SCALE)

/* The collector's heap may hold, besides the live bytes (and as much
 * again for the restore's new copy, and the room it makes): the least
 * allocation a restore allows between collections (4 MiB, image_restore.c), and
 * a margin. Resident memory may grow by the heap and images, frames and
 * the C library's free lists. */
#define S_HEAP_ALLOW ((size_t)6 << 20)
#define S_RSS_ALLOW ((size_t)4 << 20)

/* Resident set size of this process in bytes. */
static size_t s_rss(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    assert_non_null(f);
    unsigned long size = 0, res = 0;
    int n = fscanf(f, "%lu %lu", &size, &res);
    fclose(f);
    assert_int_equal(n, 2);
    return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/* The collector's heap in bytes, unmapped blocks included. */
static size_t s_gc_heap(void) { return GC_get_heap_size() + GC_get_unmapped_bytes(); }

/* A list VT at the safe point after its last node is linked in. */
static rt_vt *s_list_vt(void)
{
    long n = S_NODES;
    rt_vt *vt = NULL;
    assert_int_equal(rt_vt_new(hw_list_module(), HW_LIST_FN_TASK, &n, sizeof n, &vt), 0);
    for (long i = 0; i < n; i++) {
        hw_force_unwind(vt);
        assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
        vt->want = 0;
    }
    return vt;
}

/* Runs vt to its next safe point while the list is being reversed (the
 * S_NODES - 1 safe points after the build); afterwards it stays put. */
static void s_advance(rt_vt *vt, unsigned cycle)
{
    if (cycle >= S_NODES - 1)
        return;
    hw_force_unwind(vt);
    assert_int_equal(rt_vt_step(vt), LEV_RUN_UNWIND);
    vt->want = 0;
}

/* Live bytes of the list: its nodes with their headers, and the frame. */
static size_t s_live(void)
{
    return S_NODES * (sizeof(rt_objhdr) + sizeof(struct hw_node)) +
           sizeof(struct hw_list_task__frame);
}

typedef struct s_mem {
    size_t rss, heap;
} s_mem;

static s_mem s_now(void) { return (s_mem){s_rss(), s_gc_heap()}; }

/* Asserts the memory after `cycles` cycles against the memory after
 * S_EARLY of them, and against the live bytes. */
static void s_check(const char *what, unsigned cycles, s_mem base, s_mem early, s_mem late)
{
    size_t live = s_live();
    print_message("%s: RSS %zu KiB before, %zu KiB after %u cycles, %zu KiB after %u; "
                  "GC heap %zu KiB, %zu KiB; live %zu KiB\n",
                  what, base.rss >> 10, early.rss >> 10, S_EARLY, late.rss >> 10, cycles,
                  early.heap >> 10, late.heap >> 10, live >> 10);
#ifndef S_ASAN
    if (late.rss > 2 * early.rss)
        fail_msg("%s: RSS %zu KiB after %u cycles, more than twice %zu KiB after %u", what,
                 late.rss >> 10, cycles, early.rss >> 10, S_EARLY);
    if (late.rss > base.rss + late.heap + S_RSS_ALLOW)
        fail_msg("%s: RSS grew by %zu KiB with a GC heap of %zu KiB", what,
                 (late.rss - base.rss) >> 10, late.heap >> 10);
#else
    (void)base;
    if (late.heap > 2 * early.heap)
        fail_msg("%s: GC heap %zu KiB after %u cycles, more than twice %zu KiB after %u", what,
                 late.heap >> 10, cycles, early.heap >> 10, S_EARLY);
#endif
    if (late.heap > 4 * live + S_HEAP_ALLOW)
        fail_msg("%s: GC heap %zu KiB for %zu KiB live", what, late.heap >> 10, live >> 10);
}

/* Capture, wipe and restore in place, as torture mode does at every safe
 * point. */
static void t_restore_in_place(void **state)
{
    (void)state;
    GC_gcollect();
    s_mem base = s_now();
    rt_vt *vt = s_list_vt();
    hw_stats st = {0};
    s_mem early = {0};
    for (unsigned c = 0; c < S_CYCLES; c++) {
        s_advance(vt, c);
        assert_int_equal(hw_cycle(vt, &st), 0);
        if (c + 1 == S_EARLY)
            early = s_now();
    }
    assert_int_equal(st.cycles, S_CYCLES);
    s_check("in place", S_CYCLES, base, early, s_now());
    /* The VT is still whole: it runs to its end with the right result. */
    assert_int_equal(hw_run_straight(vt, &st), LEV_RUN_DONE);
    assert_int_equal(((struct hw_list_task__frame *)rt_vt_bottom(vt))->result,
                     hw_list_ref(S_NODES));
    rt_vt_destroy(&vt);
}

/* Capture, then restore into a new VT and destroy the old one, as a
 * resume or a migration does. */
static void t_restore_new_vt(void **state)
{
    (void)state;
    GC_gcollect();
    s_mem base = s_now();
    rt_vt *vt = s_list_vt();
    s_mem early = {0};
    for (unsigned c = 0; c < S_CYCLES_NEW_VT; c++) {
        s_advance(vt, c);
        uint8_t *img;
        size_t len;
        assert_int_equal(rt_capture(vt, &img, &len), 0);
        rt_vt *nvt = NULL;
        assert_int_equal(hw_restore_copy(hw_list_module(), img, len, &nvt), 0);
        free(img);
        rt_vt_destroy(&vt);
        vt = nvt;
        if (c + 1 == S_EARLY)
            early = s_now();
    }
    s_check("new VT", S_CYCLES_NEW_VT, base, early, s_now());
    hw_stats st = {0};
    assert_int_equal(hw_run_straight(vt, &st), LEV_RUN_DONE);
    assert_int_equal(((struct hw_list_task__frame *)rt_vt_bottom(vt))->result,
                     hw_list_ref(S_NODES));
    rt_vt_destroy(&vt);
}

/* Many captures, never restored, as periodic checkpoints are. */
static void t_capture_only(void **state)
{
    (void)state;
    GC_gcollect();
    s_mem base = s_now();
    rt_vt *vt = s_list_vt();
    s_mem early = {0};
    size_t len0 = 0;
    for (unsigned c = 0; c < S_CYCLES_CAPTURE; c++) {
        s_advance(vt, c);
        uint8_t *img;
        size_t len;
        assert_int_equal(rt_capture(vt, &img, &len), 0);
        if (c == 0)
            len0 = len;
        assert_true(len == len0); /* reversing relinks nodes, it adds none */
        free(img);
        if (c + 1 == S_EARLY)
            early = s_now();
    }
    s_check("capture only", S_CYCLES_CAPTURE, base, early, s_now());
    rt_vt_destroy(&vt);
}

int main(void)
{
    rt_init();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_restore_in_place),
        cmocka_unit_test(t_restore_new_vt),
        cmocka_unit_test(t_capture_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
