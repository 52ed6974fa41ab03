#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import PropertyList

/// What `apphome run` records while an app runs, in
/// ``ContainerLayout/runsDirectory``: `apphome list --running` shows it,
/// and says plainly which apps run without a sandbox.
public struct RunRecord: Sendable, Equatable {
    public var bundleIdentifier: String
    /// The `apphome` process that runs it (the record is stale once it is gone).
    public var pid: Int32
    public var sandboxed: Bool
    public var network: Bool
    public var instance: String
    public var started: Double

    public init(bundleIdentifier: String, pid: Int32, sandboxed: Bool, network: Bool, instance: String, started: Double) {
        self.bundleIdentifier = bundleIdentifier
        self.pid = pid
        self.sandboxed = sandboxed
        self.network = network
        self.instance = instance
        self.started = started
    }

    /// Writes the record; its path, or `nil` when it cannot be written (a
    /// run does not fail for want of its record).
    func write(in layout: ContainerLayout) -> String? {
        let d: [PlistKey: PlistValue] = [
            "BundleIdentifier": .string(bundleIdentifier), "PID": .integer(Int128(pid)), "Sandboxed": .bool(sandboxed),
            "Network": .bool(network), "Instance": .string(instance), "Started": .real(started),
        ]
        guard let bytes = try? PlistCodec.encode(.dictionary(d), format: .binary) else { return nil }
        let path = layout.runsDirectory + "/" + instance + ".plist"
        // Not synced: a record lives only as long as the run (a stale one is skipped and removed).
        if !FileSystem.isDirectory(layout.runsDirectory) { try? FileSystem.makeDirectories(layout.runsDirectory) }
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        do { try FileSystem.writeAll(fd, bytes, path: path) } catch {
            unlink(path)
            return nil
        }
        return path
    }

    /// The apps running now under `layout`'s root, by bundle id then start;
    /// records whose `apphome` is gone are left out (and removed).
    public static func running(in layout: ContainerLayout) -> [RunRecord] {
        var records: [RunRecord] = []
        for name in (try? FileSystem.directoryEntries(layout.runsDirectory)) ?? [] where name.hasSuffix(".plist") {
            let path = layout.runsDirectory + "/" + name
            guard let bytes = try? FileSystem.readFileIfPresent(path), let value = try? PlistCodec.decode(bytes),
                  case .dictionary(let d) = value, case .string(let id)? = d["BundleIdentifier"], case .integer(let pid)? = d["PID"],
                  let pid32 = Int32(exactly: pid), case .bool(let sandboxed)? = d["Sandboxed"] else { continue }
            guard kill(pid32, 0) == 0 || errno == EPERM else {
                unlink(path)
                continue
            }
            var network = true
            if case .bool(let n)? = d["Network"] { network = n }
            var started = 0.0
            if case .real(let s)? = d["Started"] { started = s }
            var instance = ""
            if case .string(let i)? = d["Instance"] { instance = i }
            records.append(RunRecord(bundleIdentifier: id, pid: pid32, sandboxed: sandboxed, network: network, instance: instance, started: started))
        }
        return records.sorted { ($0.bundleIdentifier, $0.started) < ($1.bundleIdentifier, $1.started) }
    }
}
