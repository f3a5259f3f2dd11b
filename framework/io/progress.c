/* progress.c - the progress line on stderr.
 *
 * DESIGN
 * ------
 * A run of 10 rounds of a large GEMM takes minutes; a line that says how far it
 * got and how long it will still take keeps users from killing it. It is one
 * line rewritten in place ("\r...\033[K"), drawn only when stderr is a
 * terminal (logs and CI output stay clean) and at most every 100 ms, so calling
 * it after every bundle costs a clock read and a compare. The estimate of the
 * time left assumes the remaining work goes at the average rate so far.
 * A mutex makes it callable from any device thread.
 */
#include "progress.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double last_draw = -1;
static int drawn;
static int tty = -1;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Formats seconds as "42s", "3m07s" or "1h02m". */
static void fmt_time(char *buf, size_t len, double s)
{
    if (s < 0)
        s = 0;
    long t = (long)(s + 0.5);
    if (t < 60)
        snprintf(buf, len, "%lds", t);
    else if (t < 3600)
        snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(buf, len, "%ldh%02ldm", t / 3600, (t % 3600) / 60);
}

void hf__progress(const char *label, int round, int nrounds, size_t done, size_t total,
                  double elapsed_s)
{
    pthread_mutex_lock(&lock);
    if (tty < 0)
        tty = isatty(2);
    double t = now_s();
    if (!tty || (last_draw >= 0 && t - last_draw < 0.1 && done < total)) {
        pthread_mutex_unlock(&lock);
        return;
    }
    last_draw = t;
    char el[32], left[32] = "?";
    fmt_time(el, sizeof el, elapsed_s);
    double frac = total ? (double)done / (double)total : 0;
    if (frac > 0)
        fmt_time(left, sizeof left, elapsed_s * (1 - frac) / frac);
    fprintf(stderr, "\r%s  round %d/%d  %zu/%zu chunks  %5.1f%%  %s elapsed, ~%s left\033[K",
            label ? label : "", round + 1, nrounds, done, total, 100 * frac, el, left);
    fflush(stderr);
    drawn = 1;
    pthread_mutex_unlock(&lock);
}

void hf__progress_end(void)
{
    pthread_mutex_lock(&lock);
    if (drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        drawn = 0;
    }
    last_draw = -1;
    pthread_mutex_unlock(&lock);
}
