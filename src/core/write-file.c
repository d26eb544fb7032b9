/* Whole-file writes that never cost the old file: a temporary file beside
 * the target, fsync, rename over it (see write-file.h).
 *
 *   DIR/NAME            the target: old contents until the rename
 *   DIR/.NAME.XXXXXX    mkstemp; written, fsync'ed, then renamed to NAME
 *
 * rename() within one directory is atomic on POSIX file systems, so a
 * reader (or a crash) sees the whole old file or the whole new one. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/write-file.h"
#include "mxp/alloc.h"

static mxp_status io_fail(const char *who, const char *path, const char *what, int err)
{
    return mxp_error(MXP_ERR_IO, "%s: %s: %s: %s", who, path, what, err ? strerror(err) : "unknown error");
}

/* write() until every byte is out (write may take less, or be
 * interrupted); false with errno set on failure. */
static bool write_bytes(int fd, const char *p, size_t left)
{
    while (left > 0) {
        const ssize_t w = write(fd, p, left < ((size_t)1 << 30) ? left : (size_t)1 << 30);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return false;
        }
        p += w;
        left -= (size_t)w;
    }
    return true;
}

/* Every piece written, the made ones a chunk at a time through one buffer:
 * MXP_OK; MXP_ERR_IO with errno set (a write); or a make callback's (or
 * the buffer's) error, *made set. */
static mxp_status write_all(int fd, const mxp_write_piece *pieces, int n, bool *made)
{
    char *buf = NULL;
    mxp_status s = MXP_OK;
    *made = false;
    for (int i = 0; i < n && s == MXP_OK; i++) {
        if (!pieces[i].make) {
            s = write_bytes(fd, pieces[i].data, pieces[i].size) ? MXP_OK : MXP_ERR_IO;
            continue;
        }
        if (!buf && pieces[i].size && !(buf = malloc(MXP_WRITE_CHUNK))) {
            *made = true;
            s = mxp_error(MXP_ERR_NO_MEMORY, "no memory for a %d-byte write buffer", MXP_WRITE_CHUNK);
        }
        for (size_t off = 0; s == MXP_OK && off < pieces[i].size; off += MXP_WRITE_CHUNK) {
            const size_t len = pieces[i].size - off < MXP_WRITE_CHUNK ? pieces[i].size - off : MXP_WRITE_CHUNK;
            if ((s = pieces[i].make(pieces[i].ctx, off, len, buf)) != MXP_OK)
                *made = true;
            else if (!write_bytes(fd, buf, len))
                s = MXP_ERR_IO;
        }
    }
    const int err = errno;
    free(buf);
    errno = err;
    return s;
}

/* A device, FIFO or socket: opened as it is (no O_CREAT, no O_TRUNC) and
 * written; on failure it stays, whatever was written. */
static mxp_status write_in_place(const char *who, const char *path, const mxp_write_piece *pieces, int n)
{
    const int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return io_fail(who, path, "cannot open", errno);
    bool made;
    const mxp_status s = write_all(fd, pieces, n, &made);
    bool ok = s == MXP_OK;
    int err = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    return made ? s : ok ? MXP_OK : io_fail(who, path, "write failed", err);
}

/* The file creation mask, left as it is: Linux shows it in
 * /proc/self/status; elsewhere umask() is set and restored (a file another
 * thread creates in that instant gets 022). */
static mode_t creation_mask(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned mask;
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "Umask: %o", &mask) == 1) {
            fclose(f);
            return (mode_t)mask;
        }
    }
    if (f)
        fclose(f);
    const mode_t old = umask(022);
    umask(old);
    return old;
}

/* "DIR/.NAME.XXXXXX" for "DIR/NAME", NAME cut to 200 bytes so that the
 * temporary name fits NAME_MAX. */
static char *temp_template(const char *target)
{
    const char *slash = strrchr(target, '/');
    const size_t dir = slash ? (size_t)(slash - target) + 1 : 0;
    size_t base = strlen(target + dir);
    base = base < 200 ? base : 200;
    char *t = mxp_malloc(dir + base + 9);
    if (!t)
        return NULL;
    memcpy(t, target, dir);
    t[dir] = '.';
    memcpy(t + dir + 1, target + dir, base);
    memcpy(t + dir + 1 + base, ".XXXXXX", 8);
    return t;
}

/* Best effort: after the rename, the directory entry is on disk once the
 * directory is synced (some file systems refuse; the data is there). */
static void sync_dir(const char *target)
{
    char dir[4096] = ".";
    const char *slash = strrchr(target, '/');
    if (slash) {
        const size_t n = slash == target ? 1 : (size_t)(slash - target);
        if (n >= sizeof dir)
            return;
        memcpy(dir, target, n);
        dir[n] = '\0';
    }
    const int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* The new file gets the old one's owner (where allowed) and mode, or the
 * mode a plain creation would give. */
static bool set_mode(int fd, const struct stat *old)
{
    if (!old)
        return fchmod(fd, 0666 & ~creation_mask()) == 0;
    if ((old->st_uid != geteuid() || old->st_gid != getegid()) && fchown(fd, old->st_uid, old->st_gid) != 0) {
        /* best effort: only root may give a file away */
    }
    return fchmod(fd, old->st_mode & 07777) == 0;
}

/* Writes a temporary file beside target and renames it over target; on
 * failure removes the temporary file and nothing else. */
static mxp_status replace(const char *who, const char *path, const char *target, const struct stat *old,
                          const mxp_write_piece *pieces, int n)
{
    char *tmp = temp_template(target);
    if (!tmp)
        return mxp_error(MXP_ERR_NO_MEMORY, "%s: %s: no memory for a temporary file name", who, path);
    const int fd = mkstemp(tmp);
    if (fd < 0) {
        const mxp_status st = io_fail(who, path, "cannot create", errno);
        mxp_free(tmp);
        return st;
    }
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    const char *what = NULL;
    bool made = false;
    mxp_status ms = MXP_OK;
    if (!set_mode(fd, old))
        what = "cannot set the permissions of the new file";
    else if ((ms = write_all(fd, pieces, n, &made)) != MXP_OK)
        what = "write failed";
    else if (fsync(fd) != 0)
        what = "write failed (fsync)";
    int err = errno;
    if (close(fd) != 0 && !what) {
        what = "write failed (close)";
        err = errno;
    }
    if (!what && rename(tmp, target) != 0) {
        what = "cannot replace it";
        err = errno;
    }
    mxp_status st = MXP_OK;
    if (what) {
        unlink(tmp);
        st = made ? ms : io_fail(who, path, what, err); /* a made piece's own error, as it set it */
    } else {
        sync_dir(target);
    }
    mxp_free(tmp);
    return st;
}

/* The path a dangling symbolic link names, following up to 40 links (the
 * file open(O_CREAT) would create through it), in a new malloc'ed string;
 * NULL with errno set. */
static char *dangling_target(const char *path)
{
    size_t len = strlen(path);
    char *cur = malloc(len + 1);
    if (!cur)
        return NULL;
    memcpy(cur, path, len + 1);
    for (int hop = 0; hop < 40; hop++) {
        struct stat l;
        if (lstat(cur, &l) != 0 || !S_ISLNK(l.st_mode))
            return cur;
        char link[4096];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) {
            free(cur);
            return NULL;
        }
        link[n] = '\0';
        const char *slash = strrchr(cur, '/');
        size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1; /* a relative link: from its folder */
        char *next = malloc(dir + (size_t)n + 1);
        if (!next) {
            free(cur);
            return NULL;
        }
        memcpy(next, cur, dir);
        memcpy(next + dir, link, (size_t)n + 1);
        free(cur);
        cur = next;
    }
    free(cur);
    errno = ELOOP;
    return NULL;
}

mxp_status mxp_write_file(const char *who, const char *path, const mxp_write_piece *pieces, int npieces)
{
    struct stat st, lst;
    const bool exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT)
        return io_fail(who, path, "cannot create", errno);
    if (exists && S_ISDIR(st.st_mode))
        return io_fail(who, path, "cannot create", EISDIR);
    if (exists && !S_ISREG(st.st_mode))
        return write_in_place(who, path, pieces, npieces);
    char *resolved = NULL; /* a symbolic link: replace the file it names */
    if (exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && !(resolved = realpath(path, NULL)))
        return io_fail(who, path, "cannot follow the symbolic link", errno);
    /* a dangling one: create the file it names, as np.save (open) does, and keep the link */
    if (!exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && !(resolved = dangling_target(path)))
        return io_fail(who, path, "cannot follow the symbolic link", errno);
    const mxp_status s = replace(who, path, resolved ? resolved : path, exists ? &st : NULL, pieces, npieces);
    free(resolved);
    return s;
}
