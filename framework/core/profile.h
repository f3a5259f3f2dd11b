/* profile.h - the profile store: measured device numbers persisted under profiles/.
 *
 * A profile belongs to one app and one load signature (e.g. "n=16384 dtype=float32")
 * on one host. It holds named vectors of doubles per device name:
 *     standalone_rate  1.23e12          work/s of the device running a whole load alone
 *     hass.rate        ...              HASS's last measured rates
 *     qilin.fit        a b              Qilin's T(N) = a + b*N
 * Files are plain text, one line per (device, key), with a header that records
 * the host, the date and the signature, so they diff well and can be edited.
 */
#ifndef HF_PROFILE_H
#define HF_PROFILE_H

#include "sched.h" /* hf_profile_t, hf_profile_get/set */

#ifdef __cplusplus
extern "C" {
#endif

/* Opens (reads if present) the profile for `app` and `signature` on this host
 * under directory `dir` (created on save). dir == NULL gives an in-memory store
 * that never touches disk. A malformed file fails with HF_ECONFIG naming its line. */
int hf_profile_open(hf_profile_t *p, const char *dir, const char *app, const char *signature);
void hf_profile_destroy(hf_profile_t p);

/* Writes the profile atomically (temporary file, then rename) if it changed. */
int hf_profile_save(hf_profile_t p);
/* The file the profile lives in ("" for an in-memory store). */
const char *hf_profile_path(hf_profile_t p);

#ifdef __cplusplus
}
#endif
#endif
