/* fuzz_image.c - the image loaders on any bytes: a runtime image (LVIM,
 * rt_restore into a hand-written module of tests/hw), a VT's channel
 * state (LVCH, rt_ch_load), and an image envelope (its three parts,
 * each through its own loader). A refused image leaves no VT and says
 * why; an accepted one is destroyed whole. Input: u8 which (its value
 * mod 3: image, channel state, envelope), then the bytes. In a fuzzing
 * build (FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION) the runtime does not
 * check an image's checksum, so that a mutation reaches the parts it
 * guards.
 */
#include <stdlib.h>
#include <string.h>

#include "causal.h"
#include "envelope.h"
#include "fuzz.h"
#include "hw/hw_drive.h"
#include "hw/hw_fib.h"
#include "hw/hw_layout.h"
#include "image.h"
#include "lev_errors.h"
#include "log.h"
#include "rt.h"
#include "vt.h"
#include "vtchan.h"

static void s_image(const uint8_t *p, size_t n)
{
    rt_vt *vt = NULL;
    rt_err_clear();
    int rc = rt_restore(hw_layout_module(), p, n, &vt);
    if (rc && vt)
        fuzz_fail("rt_restore", "a VT left after a refusal");
    if (rc && rc != LEV_ENOMEM && !lev_errdetail()[0])
        fuzz_fail("rt_restore", "refused without a reason");
    rt_vt_destroy(&vt);
}

static void s_chan(const uint8_t *p, size_t n)
{
    long k = 3;
    rt_vt *vt = NULL;
    if (rt_vt_new(hw_fib_module(), HW_FIB_FN_FIB_TASK, &k, sizeof k, &vt))
        fuzz_fail("rt_vt_new", lev_errdetail());
    rt_err_clear();
    int rc = rt_ch_load(vt, p, n);
    if (rc && rc != LEV_ENOMEM && !lev_errdetail()[0])
        fuzz_fail("rt_ch_load", "refused without a reason");
    if (!rc) { /* what was taken saves again */
        uint8_t *again = NULL;
        size_t len = 0;
        if (rt_ch_save(vt, &again, &len))
            fuzz_fail("rt_ch_save", lev_errdetail());
        free(again);
    }
    rt_vt_destroy(&vt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int init;
    if (!init) {
        rt_init();
        pc_log_set_level((pc_log_level)(PC_LOG_ERROR + 1));
        if (!hw_layout_module() || !hw_fib_module())
            fuzz_fail("modules", lev_errdetail());
        init = 1;
    }
    if (!size)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] % 3) {
    case 0:
        s_image(p, n);
        break;
    case 1:
        s_chan(p, n);
        break;
    default: {
        const uint8_t *chan, *img, *cx;
        size_t clen, ilen, cxlen;
        const char *why = NULL;
        if (!pc_env_split(p, n, &chan, &clen, &img, &ilen, &cx, &cxlen, &why)) {
            if (!why)
                fuzz_fail("pc_env_split", "refused without a reason");
            break;
        }
        if (img < p || img + ilen > p + n || chan < p || chan + clen > p + n || cx < p ||
            cx + cxlen > p + n)
            fuzz_fail("pc_env_split", "a part outside the envelope");
        s_image(img, ilen);
        s_chan(chan, clen);
        pc_cx_image im;
        memset(&im, 0, sizeof im);
        pc_cx_image_decode(cx, cxlen, 1 << 20, &im, &why);
        pc_cx_image_clear(&im);
    }
    }
    return 0;
}

/* ---- seeds: real images of the hand-written modules, a channel state
 * with inputs and outputs, and an envelope of them ---- */

static void s_emit_tagged(void (*emit)(const char *, const void *, size_t), const char *name,
                          uint8_t tag, const uint8_t *p, size_t n)
{
    uint8_t *b = malloc(n + 1);
    if (!b)
        return;
    b[0] = tag;
    memcpy(b + 1, p, n);
    emit(name, b, n + 1);
    free(b);
}

void fuzz_seeds(void (*emit)(const char *name, const void *p, size_t n))
{
    LLVMFuzzerTestOneInput((const uint8_t *)"", 0); /* init */
    LLVMFuzzerTestOneInput((const uint8_t *)"\1", 1);
    long scale = 1;
    rt_vt *vt = NULL;
    uint8_t *img = NULL, *chan = NULL;
    size_t ilen = 0, clen = 0;
    if (rt_vt_new(hw_layout_module(), HW_LAYOUT_FN_TASK, &scale, sizeof scale, &vt))
        fuzz_fail("seeds", lev_errdetail());
    hw_force_unwind(vt);
    if (rt_vt_step(vt) != LEV_RUN_UNWIND)
        fuzz_fail("seeds", "the layout VT did not stop at its safe point");
    vt->want = 0;
    if (rt_capture(vt, &img, &ilen))
        fuzz_fail("seeds", lev_errdetail());
    s_emit_tagged(emit, "image_layout", 0, img, ilen);
    /* a channel state with an input and an output waiting */
    int32_t v = 7;
    rt_in in = {.d = 1, .from = 3, .kind = RT_IN_MSG, .data = &v, .len = sizeof v};
    rt_ch_deliver(vt, &in);
    rt_in rd = {.d = 2, .ref = 1, .kind = RT_IN_READ, .data = &v, .len = sizeof v};
    rt_ch_deliver(vt, &rd);
    if (rt_ch_save(vt, &chan, &clen))
        fuzz_fail("seeds", lev_errdetail());
    s_emit_tagged(emit, "chan_inputs", 1, chan, clen);
    pc_wbuf cxb;
    pc_wbuf_init(&cxb);
    pc_cx_image im;
    memset(&im, 0, sizeof im);
    im.vt = 2;
    im.epoch = 1;
    im.consumed = 2;
    pc_cx_image_encode(&cxb, &im);
    size_t tlen = 0, elen = 0;
    uint8_t *tail = pc_env_tail(chan, clen, cxb.data, cxb.len, &tlen);
    uint8_t *env = tail ? pc_env_make(tail, tlen, img, ilen, &elen) : NULL;
    if (env)
        s_emit_tagged(emit, "envelope", 2, env, elen);
    free(env);
    free(tail);
    pc_wbuf_free(&cxb);
    free(img);
    free(chan);
    rt_vt_destroy(&vt);
    long n = 5; /* a second module's image */
    if (!rt_vt_new(hw_fib_module(), HW_FIB_FN_FIB_TASK, &n, sizeof n, &vt)) {
        hw_force_unwind(vt);
        if (rt_vt_step(vt) == LEV_RUN_UNWIND) {
            vt->want = 0;
            if (!rt_capture(vt, &img, &ilen))
                s_emit_tagged(emit, "image_fib", 0, img, ilen);
            free(img);
        }
        rt_vt_destroy(&vt);
    }
}
