/* vec.h - the one growable array of the project: an array (pointer,
 * count, capacity) made room in by rt_vec_reserve, whatever its element
 * type, in the runtime and in the layers above it (peer controller,
 * client). An array is a T * p, a count of the elements in use and a
 * size_t capacity; it is kept by its owner, which frees p with free().
 *
 * Internal (not installed). Depends on nothing of the runtime but the
 * error codes (lev_errors.h).
 */
#ifndef VEC_H
#define VEC_H

#include <stddef.h>

/* Makes room in the array *pp (of *cap elements of `size` bytes, n of them
 * in use) for `more` elements past the first n: if n + more > *cap, the
 * array is reallocated to twice its capacity or more (at least 8 elements
 * and 64 bytes), and *pp and *cap are updated. The first n elements are
 * kept; the new ones are not initialised. pp is the address of the array's
 * pointer (a T **). Returns 0, or LEV_ENOMEM (the sizes overflow, or no
 * memory) with the array unchanged; it sets no error detail. */
int rt_vec_reserve(void *pp, size_t *cap, size_t n, size_t more, size_t size);

/* rt_vec_reserve for an array `arr` (an lvalue T *) and its capacity
 * `cap` (an lvalue size_t): the element size is sizeof *arr. */
#define RT_VEC_RESERVE(arr, cap, n, more) rt_vec_reserve(&(arr), &(cap), (n), (more), sizeof *(arr))

#endif
