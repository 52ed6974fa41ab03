#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Preferences
import PrefsProtocol
import PropertyList

/// Writes are *write-through with group commit*: each loop turn collects
/// the write requests of every client that has one ready, then commits
/// each touched domain once (under the same `flock` as the embedded
/// ``FilePreferenceStore``, with `fsync` and an atomic rename), and only
/// then sends the acknowledgements. An acknowledged write is on disk.
extension PrefsServer {
    /// Queues a write of `c`; the client's next request waits for this
    /// turn's commit, so that it reads its own write.
    func queue(_ change: ChangeSet, options: WriteOptions, for address: DomainAddress, id: Int, from c: ClientConnection) throws(PreferencesError) {
        let path = try cache.path(for: address)
        writes.append(.init(clientID: c.id, requestID: id, domain: address.domain, change: change, options: options), path: path)
        c.waitingForCommit = true
    }

    /// Commits every queued write: one locked read-modify-write per domain,
    /// then the acknowledgements, then the change notifications.
    func commitPending() {
        let start = UnixSocket.now()
        var writers: [Int] = []
        for (path, queued) in writes.take() {
            let results = commit(queued, path: path)
            for (w, r) in zip(queued, results) {
                if let c = clients[w.clientID] { send(c, .response(id: w.requestID, r)) }
                writers.append(w.clientID)
            }
        }
        for c in clients.values { c.waitingForCommit = false }
        if !writers.isEmpty {
            recentWriters = writers
            lastCommitSeconds = UnixSocket.now() - start
        } else {
            recentWriters = []
        }
    }

    /// The longest a turn waits for writers (see ``gatherWriters()``).
    static let gatherLimit = 0.000_25

    /// Before a turn's commit, when it has writes: the clients whose writes
    /// the last commit acknowledged usually send their next one within
    /// microseconds of their reply. Waiting for them a little (at most half
    /// the last commit's time, never more than ``gatherLimit``), only on
    /// their sockets, lets this turn's one commit carry their writes too,
    /// instead of a commit of their own right after it (each commit is a
    /// file replaced and two `fsync`s, whatever it carries). The wait is
    /// bounded, so a writer that does not come back holds up nobody longer;
    /// replies already made this turn are sent before it.
    func gatherWriters() {
        guard !writes.isEmpty, !recentWriters.isEmpty else { return }
        let window = min(Self.gatherLimit, lastCommitSeconds / 2)
        var expected = Array(Set(recentWriters)).filter { id in
            guard let c = clients[id] else { return false }
            return !c.closing && !c.failed && !c.peerClosed && !c.waitingForCommit && !c.reader.hasCompleteFrame && !isPaused(c)
        }
        guard !expected.isEmpty, window > 0 else { return }
        for c in clients.values where c.hasOutput && !c.waitingForCommit { c.writeAvailable(now: UnixSocket.now()) }
        let deadline = UnixSocket.now() + window
        while !expected.isEmpty {
            let left = deadline - UnixSocket.now()
            if left <= 0 { break }
            expected = expected.filter { clients[$0] != nil }
            var fds = expected.map { pollfd(fd: clients[$0]!.fd, events: Int16(POLLIN), revents: 0) }
            let n = Polling.wait(&fds, seconds: left)
            if n < 0 && errno != EINTR { break }
            if n <= 0 { continue }
            let ready = zip(expected, fds).filter { $0.1.revents != 0 }
            readRequests(ready.map(\.0), events: ready.map(\.1.revents), now: UnixSocket.now())
            let done = Set(ready.map(\.0))
            expected.removeAll { done.contains($0) }
        }
    }

    /// Commits `writes` to one domain through the one commit path: each
    /// change set must still hold and pass the write policy, else it alone
    /// is refused; the rest are written together.
    private func commit(_ writes: [WriteQueue.PendingWrite], path: String) -> [Result<[PlistKey: PlistValue], RemoteError>] {
        let domain = writes[0].domain
        let policy = configuration.writePolicy?.forOneCommit()
        let cache = self.cache
        let spares = self.spares
        let outcome: DomainCommit.Outcome
        let results: [Result<[PlistKey: PlistValue], RemoteError>]
        // The cached contents are checked against the file under the lock
        // (`load` runs holding it): a writer that got the lock first, such as
        // an embedded `FilePreferenceStore`, must not be overwritten with stale contents.
        let loadLocked = { (d: Domain, p: String) throws(PreferencesError) -> [PlistKey: PlistValue]? in
            cache.prepareCommit(p)
            return try cache.load(d, path: p)
        }
        do {
            (outcome, results) = try DomainCommit.run(domain, path: path, load: loadLocked, spares: spares, leftovers: cache.mayHoldLeftovers) { working in
                var results: [Result<[PlistKey: PlistValue], RemoteError>] = []
                for w in writes {
                    counters.writes += 1
                    guard w.change.holds(in: working) else {
                        results.append(.failure(RemoteError(.conflict, "the domain \(w.domain) changed; nothing was written")))
                        continue
                    }
                    var next = working
                    do throws(PreferencesError) {
                        try w.change.checkDepth(of: w.domain)
                        w.change.apply(to: &next)
                        let notes = try policy?.check(w.domain, old: working, new: next, options: w.options) ?? []
                        working = next
                        results.append(.success(notes.isEmpty ? [:] : ["notes": .array(notes.map(Self.encode))]))
                    } catch {
                        let code: ErrorCode = if case .policyViolation = error { .policyViolation } else { .preferences }
                        results.append(.failure(RemoteError(code, error.description)))
                    }
                }
                return results
            }
        } catch {
            cache.commitFailed(path)
            let e = error as? PreferencesError ?? .service("\(error)")
            return Array(repeating: .failure(RemoteError(.preferences, e.description)), count: writes.count)
        }
        guard outcome.written else { return results }
        counters.commits += 1
        cache.committed(path, contents: outcome.new, status: outcome.status)
        notify(subscriptions[path], old: outcome.old, new: outcome.new)
        return results
    }

    /// A write note as a batch's reply carries it.
    static func encode(_ note: WriteNote) -> PlistValue {
        .dictionary(["rule": .string(note.rule), "message": .string(note.message), "forced": .bool(note.forced)])
    }
}
