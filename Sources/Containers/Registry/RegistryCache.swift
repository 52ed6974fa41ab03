import AppHomeSystem
import Synchronization

/// The registry of a root for a long-running reader (prefsd's write
/// policy): read again only when the file's status (device, inode, size,
/// modification and change times) differs from the one it was read at, so
/// an install or uninstall made by another process is seen by the next
/// call, and a write whose domain is no app's costs one `stat`.
public final class RegistryCache: Sendable {
    private let path: String
    private let root: String
    private let state = Mutex<(status: FileStatus?, registry: Registry, valid: Bool)>((nil, Registry(), false))
    /// How many times the file was read (tests).
    let reads = Atomic<Int>(0)

    public init(root: String) {
        self.root = root
        self.path = ContainerLayout(root: root).registryPath
    }

    /// The registry now (empty when there is none or it cannot be read, as
    /// ``ContainerRegistry/readOrEmpty(root:)``).
    public func current() -> Registry {
        let before = FileStatus.of(path)
        if let hit = state.withLock({ $0.valid && $0.status == before ? $0.registry : nil }) { return hit }
        let registry = ContainerRegistry.readOrEmpty(root: root)
        reads.add(1, ordering: .relaxed)
        // Kept only when the file did not change during the read (its new
        // status is then seen next time).
        let valid = FileStatus.of(path) == before
        state.withLock { $0 = (before, registry, valid) }
        return registry
    }
}
