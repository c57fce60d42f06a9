/* lev_errors.h - the one list of Leverage error codes and their messages.
 *
 * Every call of the public API returns 0 or one of these negative codes;
 * lev_strerror() maps a code to its message. Installed; included by
 * leverage.h and by the frame ABI header that generated code uses.
 */
#ifndef LEV_ERRORS_H
#define LEV_ERRORS_H

/* X(name, value, message) */
#define LEV_ERRNO_MAP(X)                                                                           \
    X(EINVAL, -1, "invalid argument")                                                              \
    X(ENOMEM, -2, "out of memory")                                                                 \
    X(ENOVT, -3, "no such virtual thread")                                                         \
    X(ETIMEDOUT, -4, "timed out")                                                                  \
    X(EIMAGE, -5, "damaged, truncated or foreign checkpoint image")                                \
    X(EMODULE, -6, "task module missing or does not match the image")                              \
    X(EPEER, -7, "peer unreachable or lost")                                                       \
    X(ECANCELED, -8, "virtual thread canceled")                                                    \
    X(EUNSUPPORTED, -9, "operation not supported")                                                 \
    X(ECAPTURE, -10, "state cannot be captured")                                                   \
    X(EVERSION, -11, "checkpoint image format version not supported")                              \
    X(EIO, -12, "input/output error")                                                              \
    X(EBUSY, -13, "resource busy")                                                                 \
    X(EFAILED, -14, "virtual thread failed")                                                       \
    X(ERANGE, -15, "value out of range")

enum {
#define LEV_ERR_ENUM_(name, val, msg) LEV_##name = (val),
    LEV_ERRNO_MAP(LEV_ERR_ENUM_)
#undef LEV_ERR_ENUM_
};

#if defined(__GNUC__)
#define LEV_API __attribute__((__visibility__("default")))
#else
#define LEV_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Returns the message of an error code; never NULL, owned by the library. */
LEV_API const char *lev_strerror(int err);

/* Returns the detail of the last error raised on the calling thread (which
 * function, variable, field or byte offset was at fault), or "" if none.
 * The text stays valid until the next failing call on this thread. */
LEV_API const char *lev_errdetail(void);

#ifdef __cplusplus
}
#endif

#endif
