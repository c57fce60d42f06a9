/* tsan_sync.h - the happens-before edges ThreadSanitizer cannot see by
 * itself. libzmq hands a message from one thread to another (ours, or
 * its I/O threads) through lock-free pipes in code built without the
 * sanitizer, and frees a zero-copy buffer from its own thread. In a
 * LEV_TSAN build every send releases, and every receive and every free
 * callback acquires, one sync object: what a thread wrote before it sent
 * happens before what another reads once it received. Elsewhere these
 * are no-ops. Internal (not installed).
 */
#ifndef LEV_TSAN_SYNC_H
#define LEV_TSAN_SYNC_H

#if defined(LEV_TSAN) && LEV_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
/* one object for the whole process, whichever file includes this */
__attribute__((weak)) char lev_tsan_zmq_sync;
#define LEV_TSAN_SENT() __tsan_release(&lev_tsan_zmq_sync)
#define LEV_TSAN_RECEIVED() __tsan_acquire(&lev_tsan_zmq_sync)
#else
#define LEV_TSAN_SENT() ((void)0)
#define LEV_TSAN_RECEIVED() ((void)0)
#endif

#endif
