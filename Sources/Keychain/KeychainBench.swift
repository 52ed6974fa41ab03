#if canImport(Glibc)
import Glibc
#endif
import Containers

/// The in-process look-up benchmark behind `keychainbench` (kept here so
/// the executable only assembles).
public enum KeychainBench {
    /// `keychainbench <root> <bundle-id> <account> <service> <count>`:
    /// prints a "warm" line (one open keychain: group keys unwrapped once;
    /// class keys, as always, per call) and a "cold" line (a new keychain per
    /// look-up). What each look-up costs depends on the item's class: a
    /// `whenUnlocked` one fetches the device root key from the Secret Service,
    /// an `afterFirstUnlock` one reads the kernel's keys. Returns the exit status.
    public static func main(_ args: [String], secretStore: (any SecretStore)?, kernelKeys: DeviceKeyPolicy.KernelKeyLifetime = .off) -> Int32 {
        func fail(_ text: String, _ status: Int32) -> Int32 {
            let bytes = Array(("keychainbench: " + text + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            return status
        }
        guard args.count == 5, let count = Int(args[4]), count > 0 else {
            return fail("usage: keychainbench <root> <bundle-id> <account> <service> <count>", 2)
        }
        do {
            return try run(root: args[0], bundleID: args[1], account: args[2], service: args[3], count: count,
                           policy: DeviceKeyPolicy(secretStore: secretStore, kernelKeys: kernelKeys))
        } catch {
            return fail("\(error)", 1)
        }
    }

    /// Runs `count` warm and `count` cold look-ups of one generic password
    /// and prints the timings; returns the exit status.
    public static func run(root: String, bundleID: String, account: String, service: String, count: Int,
                           policy: DeviceKeyPolicy) throws -> Int32 {
        let manager = ContainerManager(root: root)
        let context = try KeychainContext(installed: manager.entry(for: BundleIdentifier(bundleID)))
        var q = ItemQuery(itemClass: .genericPassword)
        q.account = account
        q.service = service
        q.returnData = true
        func seconds() -> Double {
            var ts = timespec()
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        }
        func report(_ name: String, _ body: () throws -> Int) rethrows {
            let start = seconds()
            var bytes = 0
            for _ in 0..<count { bytes &+= try body() }
            let total = seconds() - start
            print("\(name): \(count) look-ups in \(rounded(total, 3)) s, \(rounded(total / Double(count) * 1e6, 1)) µs per look-up (\(bytes) secret bytes)")
        }
        let warm = Keychain(root: root, policy: policy, now: ContainerManager.systemClock)
        try report("warm") { try warm.copyMatching(q, context: context)[0].data!.count }
        try report("cold") { try Keychain(root: root, policy: policy, now: ContainerManager.systemClock).copyMatching(q, context: context)[0].data!.count }
        return 0
    }

    public static func rounded(_ x: Double, _ places: Int) -> String {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        let n = (x * scale).rounded()
        let whole = Int(n / scale)
        let frac = Int(n) - whole * Int(scale)
        let f = String(frac)
        return places == 0 ? String(whole) : "\(whole)." + String(repeating: "0", count: places - f.count) + f
    }
}
