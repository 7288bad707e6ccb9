// Node reports file failures as errno codes ("ENOENT"); users read words. Every message about a file the user
// named goes through here, so the same failure reads the same everywhere.

const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a folder',
  ENOTDIR: 'a part of the path is not a folder',
  ENAMETOOLONG: 'file name too long',
  ELOOP: 'too many symbolic links',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EEXIST: 'already exists',
  EIO: 'input/output error',
  EBUSY: 'device or resource busy',
  ETXTBSY: 'file is busy',
  EFBIG: 'file too large',
  ENXIO: 'no such device',
  ENODEV: 'no such device',
  EAGAIN: 'would block (not a regular file?)',
  EPIPE: 'the reader went away',
  EXDEV: 'cannot move across file systems',
  EBADF: 'bad file descriptor',
};

/** "no such file" for an ENOENT error; the error's own message for anything without a known code. */
export function describeFileError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code && ERRNO_WORDS[code]) return ERRNO_WORDS[code];
  if (code) return code;
  return error instanceof Error ? error.message : String(error);
}
