#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import CSeccomp

/// The seccomp filter of an app's sandbox, in the spirit of Flatpak's
/// (`flatpak-run.c`, `setup_seccomp`): a blocklist built with libseccomp and
/// handed to bubblewrap (`--seccomp FD`) as a compiled BPF program.
///
/// Refused with `EPERM`: tracing other processes (`ptrace`,
/// `process_vm_readv`/`writev`), the kernel's keyrings (`add_key`,
/// `keyctl`, `request_key`: the keychain caches class keys there),
/// `perf_event_open`, new namespaces and mounts (`unshare`, `setns`,
/// `mount`, `umount2`, `pivot_root`, `chroot`, `clone` with
/// `CLONE_NEWUSER`, 0x10000000), NUMA and kernel-log calls, `personality` other than
/// `PER_LINUX`, typing into a terminal (`ioctl` `TIOCSTI`, `TIOCLINUX`);
/// the new mount API and `clone3` (whose flags a filter cannot see) get
/// `ENOSYS`, so the C library falls back to `clone`. Socket families other
/// than Unix, IPv4, IPv6 and netlink get `EAFNOSUPPORT`. A system call the
/// filter does not name is allowed; one made through another architecture's
/// calling convention (the 32-bit `int 0x80`) kills the process.
public enum SandboxFilter {
    static let allow: UInt32 = 0x7fff_0000
    static func errno(_ e: Int32) -> UInt32 { 0x0005_0000 | (UInt32(e) & 0xffff) }

    /// The calls refused with `EPERM`, whatever their arguments.
    public static let refused = [
        "syslog", "uselib", "acct", "modify_ldt", "quotactl", "add_key", "keyctl", "request_key", "move_pages", "mbind",
        "get_mempolicy", "set_mempolicy", "migrate_pages", "unshare", "setns", "mount", "umount", "umount2", "pivot_root",
        "chroot", "ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open", "kexec_load", "kexec_file_load",
        "init_module", "finit_module", "delete_module", "open_by_handle_at", "name_to_handle_at", "bpf", "userfaultfd",
    ]
    /// The calls that get `ENOSYS`.
    public static let missing = ["clone3", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr"]

    /// Writes the compiled filter to `fd` (a pipe bubblewrap reads).
    static func export(to fd: Int32) throws(SystemError) {
        // libseccomp is loaded here, on the first filter (dlopen: no other command loads it).
        if let failure = apphome_seccomp_load() {
            throw SystemError("dlopen", path: "libseccomp.so.2", errno: ELIBACC, detail: String(cString: failure))
        }
        guard let ctx = apphome_seccomp_init(allow) else { throw SystemError("seccomp_init", path: "", errno: ENOMEM) }
        defer { apphome_seccomp_release(ctx) }
        func add(_ name: String, _ action: UInt32, _ conditions: [scmp_arg_cmp] = []) throws(SystemError) {
            let nr = apphome_seccomp_syscall_resolve_name(name)
            guard nr != __NR_SCMP_ERROR else { return }  // not a call of this architecture
            let rc = conditions.withUnsafeBufferPointer { apphome_seccomp_rule_add_array(ctx, action, nr, UInt32($0.count), $0.baseAddress) }
            guard rc == 0 else { throw SystemError("seccomp_rule_add(\(name))", path: "", errno: -rc) }
        }
        func arg(_ index: UInt32, _ op: scmp_compare, _ a: UInt64, _ b: UInt64 = 0) -> scmp_arg_cmp {
            scmp_arg_cmp(arg: index, op: op, datum_a: a, datum_b: b)
        }
        for name in refused { try add(name, errno(EPERM)) }
        for name in missing { try add(name, errno(ENOSYS)) }
        try add("clone", errno(EPERM), [arg(0, SCMP_CMP_MASKED_EQ, 0x1000_0000, 0x1000_0000)])
        try add("personality", errno(EPERM), [arg(0, SCMP_CMP_NE, 0)])
        for request: UInt64 in [0x5412 /* TIOCSTI */, 0x541C /* TIOCLINUX */] {
            try add("ioctl", errno(EPERM), [arg(1, SCMP_CMP_MASKED_EQ, 0xffff_ffff, request)])
        }
        // Socket families: AF_UNIX 1, AF_INET 2, AF_INET6 10, AF_NETLINK 16.
        for family: UInt64 in [0, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15] {
            try add("socket", errno(EAFNOSUPPORT), [arg(0, SCMP_CMP_EQ, family)])
        }
        try add("socket", errno(EAFNOSUPPORT), [arg(0, SCMP_CMP_GE, 17)])
        let rc = apphome_seccomp_export_bpf(ctx, fd)
        guard rc == 0 else { throw SystemError("seccomp_export_bpf", path: "", errno: -rc) }
    }
}
