/* cli_io.c - atomic file writes and mkdir -p for profiles, results and traces.
 *
 * DESIGN
 * ------
 * A results file that a crash or a full disk cut in half is worse than none:
 * scripts would parse half a JSON document or, worse, the previous run's file
 * with this run's name. Every file hetfarm writes therefore goes to a
 * temporary name in the same directory (same file system, so rename is
 * atomic), is flushed to disk, and only then renamed over the target. Any
 * failure unlinks the temporary file, so nothing is left behind.
 */
#include "files.h"
#include "hetfarm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hf__mkdir_p(const char *dir)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
        return hf_fail(HF_EIO, "cannot create directory %s: path too long", dir);
    /* Create each prefix in turn; EEXIST on a prefix is the normal case. */
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return hf_fail(HF_EIO, "cannot create directory %s: %s", buf, strerror(errno));
            *p = c;
            if (c == '\0')
                break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return hf_fail(HF_EIO, "cannot create directory %s: not a directory", dir);
    return 0;
}

/* Writes everything, retrying short writes and EINTR. */
static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

int hf__write_atomic(const char *path, const char *data, size_t len, const char *what)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof tmp)
        return hf_fail(HF_EIO, "cannot write %s %s: path too long", what, path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return hf_fail(HF_EIO, "cannot write %s %s: %s", what, path, strerror(errno));
    /* mkstemp creates 0600; results and profiles are meant to be read by
     * others like any file the user writes. (umask() cannot be read without
     * changing it, which would race with other threads creating files.) */
    (void)fchmod(fd, 0644);
    int err = 0;
    if (write_all(fd, data, len) != 0 || fsync(fd) != 0)
        err = errno ? errno : EIO;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err) {
        unlink(tmp);
        return hf_fail(HF_EIO, "cannot write %s %s: %s", what, path, strerror(err));
    }
    return 0;
}
