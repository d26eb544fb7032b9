/* Internal: writing a whole file so that a failure never costs the old one
 * (write-file.c; docs/reliability.md, "Atomic writes"). */
#ifndef MXP_CORE_WRITE_FILE_H
#define MXP_CORE_WRITE_FILE_H

#include <stddef.h>

#include "mxp/common.h"

/* size bytes at data; or, with make, made on demand: make writes bytes
 * [offset, offset + len) of the piece into buf, len at most
 * MXP_WRITE_CHUNK and offset a multiple of it (a file larger than memory
 * written through one buffer of that size). */
typedef struct mxp_write_piece {
    const void *data;
    size_t size;
    mxp_status (*make)(const void *ctx, size_t offset, size_t len, void *buf);
    const void *ctx;
} mxp_write_piece;

/* 6 MiB: whole elements of every dtype, 8 packed float6 values (6 bytes) too. */
enum { MXP_WRITE_CHUNK = 6 << 20 };

/* Writes the pieces, one after the other, as the contents of path.
 *
 * A regular file, or a path that does not exist yet, is replaced
 * atomically: the bytes go to a temporary file in the same directory
 * (".NAME.XXXXXX", the old file's permissions, else 0666 & ~umask), are
 * flushed to disk (fsync), and the temporary file is renamed over path;
 * the directory is then synced.  A symbolic link is followed: the file it
 * names is replaced and the link stays.  On any failure only the
 * temporary file is removed: path keeps its old contents, byte for byte.
 *
 * Anything else that exists at path (a character device such as
 * /dev/null, a FIFO, a socket) cannot be replaced by a rename and is
 * opened and written in place; it is never removed.  A directory is an
 * error.
 *
 * Errors: MXP_ERR_IO with "WHO: PATH: what failed: strerror" for
 * mxp_last_error(); MXP_ERR_NO_MEMORY; a make callback's error, as it set
 * it (path untouched then too). */
mxp_status mxp_write_file(const char *who, const char *path, const mxp_write_piece *pieces, int npieces);

#endif
