/* Internal: writing a whole file so that a failure never costs the old one
 * (write-file.c; docs/reliability.md, "Atomic writes"). */
#ifndef MXP_CORE_WRITE_FILE_H
#define MXP_CORE_WRITE_FILE_H

#include <stddef.h>

#include "mxp/common.h"

typedef struct mxp_write_piece {
    const void *data;
    size_t size;
} mxp_write_piece;

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
 * mxp_last_error(); MXP_ERR_NO_MEMORY. */
mxp_status mxp_write_file(const char *who, const char *path, const mxp_write_piece *pieces, int npieces);

#endif
