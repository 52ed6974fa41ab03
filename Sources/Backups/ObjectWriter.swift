#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem
import Containers

/// The threads of a backup beside the walk's: one creates and writes the
/// temp files of new objects (`.incoming/<64 hex>`) while the walk goes on
/// reading and hashing the next files; another makes what was written
/// durable and puts it in place, in batches, while the writing goes on.
///
/// The walk hands over a file's bytes once it has settled and been hashed
/// and the free-space check has counted them. Files are handed over in
/// batches (one wake-up per batch, not per file), and at most
/// ``inFlightLimit`` bytes wait at a time. Every ``commitBatch`` objects
/// written, the second thread takes them: one `syncfs` (when durable) for
/// their data, then their renames into `objects/` — the order
/// ``BackupStore/commitObjects()`` keeps for the last ones, so an object
/// is never in `objects/` without its bytes, and a crash leaves at worst
/// whole objects no manifest names (the manifest comes after the last
/// `syncfs`). The first failure stops the writing and the renaming (what
/// is still queued is dropped) and is thrown by the next
/// ``submit(_:hash:)`` or by ``finish()``.
///
/// When no thread can be made, the files are written on the caller's, and
/// all are put in place by the commit.
final class ObjectWriter: @unchecked Sendable {
    /// Bytes handed over and not written yet, at most.
    static let inFlightLimit = 32 << 20
    /// A batch is handed over at this many files or bytes.
    static let batchFiles = 64
    static let batchBytes = 1 << 20
    /// Objects written that the second thread makes durable and puts in
    /// place together, by default: a `syncfs` per 8192 new objects.
    static let commitBatch = 8192

    private struct Job {
        let hash: ContentHash
        let bytes: [UInt8]
    }

    private unowned let directories: ObjectDirectories
    private let incoming: Int32
    private let objects: Int32
    private let durable: Bool
    private let commitBatch: Int

    // Shared with the threads, under `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let workReady = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let commitReady = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let progress = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue: [Job] = []
    private var queuedBytes = 0
    private var writing = false
    /// Written, not handed to the second thread yet.
    private var written: [ContentHash] = []
    /// Handed to the second thread, not in place yet.
    private var toCommit: [[ContentHash]] = []
    private var committing = false
    /// Made durable and put in place.
    private var committed: Set<ContentHash> = []
    private var stopping = false
    private var failure: SystemError?

    // The caller's alone.
    private var batch: [Job] = []
    private var batchSize = 0
    private var writerThread: pthread_t?
    private var committerThread: pthread_t?
    private var threadless = false

    /// - Parameters:
    ///   - directories: the store's; `incoming` and `objects` are theirs,
    ///     open while the writer lives.
    ///   - durable: whether a batch is made durable before it is put in place.
    ///   - commitBatch: objects a batch holds (``commitBatch`` by default).
    init(directories: ObjectDirectories, incoming: Int32, objects: Int32, durable: Bool, commitBatch: Int = ObjectWriter.commitBatch) {
        self.directories = directories
        self.incoming = incoming
        self.objects = objects
        self.durable = durable
        self.commitBatch = max(1, commitBatch)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(workReady, nil)
        pthread_cond_init(commitReady, nil)
        pthread_cond_init(progress, nil)
    }

    deinit {
        precondition(writerThread == nil && committerThread == nil, "ObjectWriter released with its threads running")
        pthread_cond_destroy(progress)
        pthread_cond_destroy(commitReady)
        pthread_cond_destroy(workReady)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        workReady.deallocate()
        commitReady.deallocate()
        progress.deallocate()
    }

    /// Queues `bytes` to be written as the temp file of the object `hash`.
    ///
    /// - Throws: the error of an earlier write or rename (nothing more is written).
    func submit(_ bytes: [UInt8], hash: ContentHash) throws {
        if threadless {
            try BackupStore.writeIncoming(bytes, hash: hash, in: incoming, incomingPath: directories.incomingPath)
            return
        }
        batch.append(Job(hash: hash, bytes: bytes))
        batchSize += bytes.count
        if batch.count >= Self.batchFiles || batchSize >= Self.batchBytes { try handOver() }
    }

    /// Waits until every file handed over is written and every full batch
    /// handed to the second thread is in place, and ends the threads.
    ///
    /// - Returns: the objects now in place (the others written are in `.incoming`).
    /// - Throws: the first failure (the threads are ended all the same).
    func finish() throws -> Set<ContentHash> {
        defer { stop() }
        if !batch.isEmpty { try handOver() }
        guard writerThread != nil else { return [] }
        pthread_mutex_lock(mutex)
        while failure == nil && (!queue.isEmpty || writing || !toCommit.isEmpty || committing) { pthread_cond_wait(progress, mutex) }
        let failed = failure
        let done = committed
        pthread_mutex_unlock(mutex)
        if let failed { throw failed }
        return done
    }

    /// Waits until nothing handed over is being written or renamed (what
    /// is queued may be dropped after a failure).
    func flush() {
        guard writerThread != nil else { return }
        pthread_mutex_lock(mutex)
        while failure == nil && (!queue.isEmpty || writing || !toCommit.isEmpty || committing) { pthread_cond_wait(progress, mutex) }
        while writing || committing { pthread_cond_wait(progress, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// Ends the threads once they are idle, writing and renaming nothing
    /// more; what was queued is dropped.
    func stop() {
        batch = []
        batchSize = 0
        guard writerThread != nil || committerThread != nil else { return }
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_broadcast(workReady)
        pthread_cond_broadcast(commitReady)
        pthread_mutex_unlock(mutex)
        if let t = writerThread { pthread_join(t, nil) }
        if let t = committerThread { pthread_join(t, nil) }
        writerThread = nil
        committerThread = nil
        queue = []
        queuedBytes = 0
        written = []
        toCommit = []
        stopping = false
    }

    private func handOver() throws {
        if writerThread == nil && !start() {
            threadless = true
            let jobs = batch
            batch = []
            batchSize = 0
            for job in jobs { try BackupStore.writeIncoming(job.bytes, hash: job.hash, in: incoming, incomingPath: directories.incomingPath) }
            return
        }
        pthread_mutex_lock(mutex)
        while failure == nil && queuedBytes > 0 && queuedBytes + batchSize > Self.inFlightLimit { pthread_cond_wait(progress, mutex) }
        if let failed = failure {
            pthread_mutex_unlock(mutex)
            throw failed
        }
        queue.append(contentsOf: batch)
        queuedBytes += batchSize
        pthread_cond_signal(workReady)
        pthread_mutex_unlock(mutex)
        batch.removeAll(keepingCapacity: true)
        batchSize = 0
    }

    /// Starts the writer's thread and, when it can, the committer's;
    /// `false` when not even the first could be made.
    private func start() -> Bool {
        guard let writer = Threads.spawn({ [self] in runWriter() }) else { return false }
        writerThread = writer
        committerThread = Threads.spawn { [self] in runCommitter() }   // without it, the commit puts everything in place
        return true
    }

    /// The first thread: writes what is queued until told to stop.
    private func runWriter() {
        pthread_mutex_lock(mutex)
        while true {
            while queue.isEmpty && !stopping { pthread_cond_wait(workReady, mutex) }
            if stopping { break }
            let jobs = queue
            queue = []
            writing = true
            let failedBefore = failure != nil
            pthread_mutex_unlock(mutex)
            var bytes = 0
            var done: [ContentHash] = []
            done.reserveCapacity(jobs.count)
            var firstError: SystemError?
            if !failedBefore {
                for job in jobs {
                    do { try BackupStore.writeIncoming(job.bytes, hash: job.hash, in: incoming, incomingPath: directories.incomingPath) } catch {
                        firstError = error
                        break
                    }
                    done.append(job.hash)
                }
            }
            for job in jobs { bytes += job.bytes.count }
            pthread_mutex_lock(mutex)
            writing = false
            queuedBytes -= bytes
            if failure == nil, let firstError { failure = firstError }
            if failure == nil && committerThread != nil {
                written.append(contentsOf: done)
                if written.count >= commitBatch {
                    toCommit.append(written)
                    written = []
                    pthread_cond_signal(commitReady)
                }
            }
            pthread_cond_broadcast(progress)
        }
        pthread_mutex_unlock(mutex)
    }

    /// The second thread: makes each batch of written objects durable and
    /// puts it in place, until told to stop.
    private func runCommitter() {
        pthread_mutex_lock(mutex)
        while true {
            while toCommit.isEmpty && !stopping { pthread_cond_wait(commitReady, mutex) }
            if stopping { break }
            let next = toCommit.removeFirst()
            if failure != nil { continue }   // nothing more after a failure
            committing = true
            pthread_mutex_unlock(mutex)
            var firstError: (any Error)?
            do {
                if durable { try BackupStore.syncFileSystem(fd: objects, path: directories.objectsPath) }
                try directories.putInPlace(next)
            } catch {
                firstError = error
            }
            pthread_mutex_lock(mutex)
            committing = false
            if let firstError, failure == nil {
                failure = firstError as? SystemError ?? SystemError("rename", path: directories.incomingPath, errno: EIO)
            }
            if firstError == nil { committed.formUnion(next) }
            pthread_cond_broadcast(progress)
        }
        pthread_mutex_unlock(mutex)
    }
}

/// Work run on a thread of its own while the caller goes on: ``join()``
/// waits for its result. Runs on the caller's thread at ``join()`` when no
/// thread can be made.
final class BackgroundJob<Value: Sendable>: @unchecked Sendable {
    private let body: @Sendable () throws -> Value
    private var result: Result<Value, any Error>?
    private var thread: pthread_t?

    /// Starts `body` on a new thread.
    init(_ body: @escaping @Sendable () throws -> Value) {
        self.body = body
        start()
    }

    private func start() {
        thread = Threads.spawn { [self] in runBody() }
    }

    private func runBody() {
        result = Result { try body() }
    }

    /// The body's value, once it has run.
    func join() throws -> Value {
        if let running = thread {
            pthread_join(running, nil)
            thread = nil
        }
        if result == nil { result = Result { try body() } }
        return try result!.get()
    }

    deinit {
        guard let running = thread else { return }
        // The last reference may be the thread's own, dropped as it ends.
        if pthread_equal(running, pthread_self()) != 0 { pthread_detach(running) } else { pthread_join(running, nil) }
    }
}
