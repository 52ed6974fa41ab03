// libsodium, imported by the targets that need hashing or encryption.
#include <sodium.h>
