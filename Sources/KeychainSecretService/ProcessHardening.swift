import CSecret

/// Hardening for a process that handles secrets.
public enum ProcessHardening {
    /// No core dumps (`RLIMIT_CORE` 0) and not dumpable (`PR_SET_DUMPABLE` 0,
    /// which also stops other processes of the user from attaching with ptrace).
    public static func disableCoreDumps() {
        apphome_disable_core_dumps()
    }
}
