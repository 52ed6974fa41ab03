// Extended attributes (<sys/xattr.h>, in glibc), which Swift's Glibc module
// does not import; used by Containers for the exclude-from-backup mark.
#include <sys/xattr.h>
