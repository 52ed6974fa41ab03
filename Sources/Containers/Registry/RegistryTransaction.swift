import AppHomeSystem

/// One writer's turn at the registry: the writers' lock, held from
/// ``RegistryFile/beginTransaction(refusingPendingJournal:)`` until
/// ``end()``, and the registry as read under that lock.
///
/// Every operation that changes the root (install, update, uninstall,
/// restore) and every one that must see the homes stay put meanwhile
/// (backup, cache and tmp cleaning) runs inside one:
///
/// ```swift
/// let transaction = try registry.beginTransaction(refusingPendingJournal: true)
/// defer { transaction.end() }
/// var current = transaction.registry
/// // … change the files, then `current` …
/// try transaction.commit(current)   // the commit point
/// ```
///
/// Readers take no lock: the file is only ever replaced by `rename`.
public struct RegistryTransaction {
    /// The registry file.
    public let file: RegistryFile
    /// The registry as it was when the lock was taken.
    public let registry: Registry
    /// The writers' lock, held until ``end()``.
    fileprivate let lock: FileLock

    /// Replaces the registry file with `changed` (temp file 0600, `fsync`,
    /// `rename`, `fsync` of the directory): the operation's commit point.
    public func commit(_ changed: Registry) throws(ContainersError) {
        try file.write(changed)
    }

    /// Releases the lock.
    public func end() {
        lock.unlock()
    }
}

extension RegistryFile {
    /// Takes the writers' lock and reads the registry under it.
    ///
    /// - Parameter refusingPendingJournal: for install, update and
    ///   uninstall: first refuse to start while an interrupted operation's
    ///   journal is pending.
    /// - Throws: ``ContainersError/interruptedOperation(_:)``, the journal's
    ///   or the registry's read error, ``ContainersError/system(_:)`` when
    ///   the lock cannot be taken. The lock is released on every throw.
    public func beginTransaction(refusingPendingJournal: Bool = false) throws(ContainersError) -> RegistryTransaction {
        let lock = try self.lock()
        do throws(ContainersError) {
            if refusingPendingJournal, let journal = try Journal.pending(in: layout) {
                throw ContainersError.interruptedOperation(journal.summary)
            }
            return RegistryTransaction(file: self, registry: try read(), lock: lock)
        } catch {
            lock.unlock()
            throw error
        }
    }
}
