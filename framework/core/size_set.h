/* size_set.h - a set of bundle sizes (chunk counts) in a caller's array of
 * `slots` zeroed size_t's, by open addressing: the sim engine's record of the
 * sizes each device ran (a new one pays its warm-up) and the chunk costs'
 * (a new one may hold one). Internal to core/.
 */
#ifndef HF_SIZE_SET_H
#define HF_SIZE_SET_H

#include <stddef.h>

/* Whether `count` was in the set; it is afterwards. A full set holds every
 * size. */
static inline int hf__size_set_add(size_t *set, size_t slots, size_t count)
{
    size_t key = count + 1;
    for (size_t i = 0, k = key % slots; i < slots; i++, k = (k + 1) % slots) {
        if (set[k] == key)
            return 1;
        if (set[k] == 0) {
            set[k] = key;
            return 0;
        }
    }
    return 1;
}

#endif
