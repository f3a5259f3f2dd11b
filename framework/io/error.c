/* error.c - the error vocabulary: hf_strerror() and per-thread failure messages.
 *
 * DESIGN
 * ------
 * Every function of hetfarm returns 0 or a negative HF_E* code; the codes and
 * their fixed descriptions come from the single HF_ERRNO_MAP list in hetfarm.h,
 * so adding a code adds its description here automatically.
 *
 * A bare code says what kind of thing went wrong but not where, so the function
 * that detects a failure also records a sentence naming the file, line, key or
 * device (hf_fail). The message lives in a _Thread_local buffer: device host
 * threads fail independently and must not overwrite each other's messages, and
 * no lock is needed. Only the first message since hf_clear_error() is kept,
 * because the first failure is the cause and later ones are usually its
 * consequences ("device failed" after "cudaMalloc: out of memory").
 */
#include "hetfarm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define HF__ERR_BUF 1024

static _Thread_local char last_error[HF__ERR_BUF];

#define HF__ERRNO_CASE(code, msg)                                                                  \
    case HF_##code:                                                                                \
        return msg;

const char *hf_strerror(int err)
{
    switch (err) {
    case HF_OK:
        return "success";
        HF_ERRNO_MAP(HF__ERRNO_CASE)
    default:
        return "unknown error";
    }
}
#undef HF__ERRNO_CASE

/* Formats the message into the calling thread's buffer unless one is already
 * there, and hands `err` back so that callers can `return hf_fail(...)`. */
int hf_fail(int err, const char *fmt, ...)
{
    if (last_error[0] == '\0' && fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(last_error, sizeof last_error, fmt, ap);
        va_end(ap);
    }
    return err;
}

const char *hf_last_error(void)
{
    return last_error;
}

void hf_clear_error(void)
{
    last_error[0] = '\0';
}

/* Programmer misuse is not a runtime condition to recover from: say where and stop. */
void hf__assert_fail(const char *cond, const char *msg, const char *file, int line)
{
    fflush(stdout);
    fprintf(stderr, "hetfarm: %s:%d: assertion `%s' failed: %s\n", file, line, cond,
            msg ? msg : "");
    abort();
}
