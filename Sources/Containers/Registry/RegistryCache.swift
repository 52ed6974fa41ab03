import AppHomeSystem
import Synchronization

/// The registry of a root for a long-running reader (prefsd's write
/// policy and keychain calls): read again only when the file's status
/// changed (``StampedFileCache``), so an install or uninstall made by
/// another process is seen by the next call, and a call whose domain is no
/// app's costs one `stat`, also while no app is installed.
public final class RegistryCache: Sendable {
    private let root: String
    private let path: String
    private let file = StampedFileCache<Registry>(limit: 1)
    /// How many times the file was read (tests).
    let reads = Atomic<Int>(0)

    public init(root: String) {
        self.root = root
        self.path = ContainerLayout(root: root).registryPath
    }

    /// The registry now (empty when there is none or it cannot be read, as
    /// ``ContainerRegistry/readOrEmpty(root:)``).
    public func current() -> Registry {
        file.value(at: path) { () -> Registry? in
            reads.add(1, ordering: .relaxed)
            return ContainerRegistry.readOrEmpty(root: root)
        } ?? Registry()
    }
}
