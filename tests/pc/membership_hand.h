/* membership_hand.h - a hand-run net of a few membership peers for the
 * membership tests (test_membership, test_membership_input): the
 * msim_hnet of membership_sim.h, with every step asserted (nothing lost,
 * no queue overflow). Each test program that includes it gets its own
 * g_hopts.
 */
#ifndef LEV_TESTS_MEMBERSHIP_HAND_H
#define LEV_TESTS_MEMBERSHIP_HAND_H

#include "membership_sim.h"

/* A few peers, messages delivered at once, in order. */
typedef msim_hnet h_net;
typedef msim_hmsg h_msg;
#define h_ep msim_hnet_ep
#define h_rec msim_hnet_rec
#define h_drop_queue msim_hnet_drop
#define h_free msim_hnet_destroy

static const pc_members_opts *g_hopts; /* of the peers h_start creates; NULL: defaults */

/* (Re)creates peer i of the net. */
static inline void h_start(h_net *net, int i, uint64_t now)
{
    net->opts = g_hopts;
    assert_int_equal(msim_hnet_start(net, i, now), 0);
}

static inline h_net *h_new(int n)
{
    h_net *net = msim_hnet_new(n, g_hopts);
    assert_non_null(net);
    return net;
}

/* Delivers what is in flight (and what that sends); nothing may be lost. */
static inline void h_flush(h_net *net, uint64_t now)
{
    assert_true(msim_hnet_flush(net, now));
    assert_int_equal(net->overflow, 0);
}

/* Runs the net from `from` to `to` ms, a millisecond at a time. */
static inline void h_run(h_net *net, uint64_t from, uint64_t to)
{
    assert_true(msim_hnet_run(net, from, to));
    assert_int_equal(net->overflow, 0);
}

#endif
