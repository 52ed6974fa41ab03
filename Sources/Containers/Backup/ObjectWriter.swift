#if canImport(Glibc)
import Glibc
#endif
import AppHomeSystem

/// The second thread of a backup: it creates and writes the temp files of
/// new objects (`.incoming/<64 hex>`) while the walk goes on reading and
/// hashing the next files on the first.
///
/// The walk hands over a file's bytes once it has settled and been hashed,
/// and the free-space check has counted them; the writer only writes.
/// Files are handed over in batches (one wake-up per batch, not per
/// file), and at most ``inFlightLimit`` bytes wait at a time. The first
/// failure stops the writing (what is still queued is not written) and is
/// thrown by the next ``submit(_:hash:)`` or by ``finish()``. Nothing is
/// renamed or made durable here: ``BackupStore/commitObjects()`` does that
/// after ``finish()``, as before.
///
/// When no thread can be made, the files are written on the caller's.
final class ObjectWriter: @unchecked Sendable {
    /// Bytes handed over and not written yet, at most.
    static let inFlightLimit = 32 << 20
    /// A batch is handed over at this many files or bytes.
    static let batchFiles = 64
    static let batchBytes = 1 << 20

    private struct Job {
        let hash: ContentHash
        let bytes: [UInt8]
    }

    private let incoming: Int32
    private let incomingPath: String

    // Shared with the thread, under `mutex`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let workReady = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private let progress = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue: [Job] = []
    private var queuedBytes = 0
    private var busy = false
    private var stopping = false
    private var failure: SystemError?

    // The caller's alone.
    private var batch: [Job] = []
    private var batchSize = 0
    private var thread: pthread_t?
    private var threadless = false

    /// - Parameters:
    ///   - incoming: `.incoming`, open; stays open while the writer lives.
    ///   - incomingPath: its path, for messages.
    init(incoming: Int32, incomingPath: String) {
        self.incoming = incoming
        self.incomingPath = incomingPath
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(workReady, nil)
        pthread_cond_init(progress, nil)
    }

    deinit {
        precondition(thread == nil, "ObjectWriter released with its thread running")
        pthread_cond_destroy(progress)
        pthread_cond_destroy(workReady)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        workReady.deallocate()
        progress.deallocate()
    }

    /// Queues `bytes` to be written as the temp file of the object `hash`.
    ///
    /// - Throws: the error of an earlier write (nothing more is written).
    func submit(_ bytes: [UInt8], hash: ContentHash) throws {
        if threadless {
            try BackupStore.writeIncoming(bytes, hash: hash, in: incoming, incomingPath: incomingPath)
            return
        }
        batch.append(Job(hash: hash, bytes: bytes))
        batchSize += bytes.count
        if batch.count >= Self.batchFiles || batchSize >= Self.batchBytes { try handOver() }
    }

    /// Waits until every file handed over is written.
    ///
    /// - Throws: the first write's error.
    func flush() throws {
        if !batch.isEmpty { try handOver() }
        guard thread != nil else { return }
        pthread_mutex_lock(mutex)
        while failure == nil && (!queue.isEmpty || busy) { pthread_cond_wait(progress, mutex) }
        let failed = failure
        pthread_mutex_unlock(mutex)
        if let failed { throw failed }
    }

    /// Waits for the writes (``flush()``) and ends the thread.
    ///
    /// - Throws: the first write's error (the thread is ended all the same).
    func finish() throws {
        defer { stop() }
        try flush()
    }

    /// Ends the thread once it is idle, writing nothing more; what was
    /// queued and not written is dropped (after a failure).
    func stop() {
        batch = []
        batchSize = 0
        guard let running = thread else { return }
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_signal(workReady)
        pthread_mutex_unlock(mutex)
        pthread_join(running, nil)
        thread = nil
        queue = []
        queuedBytes = 0
        stopping = false
    }

    private func handOver() throws {
        if thread == nil && !start() {
            threadless = true
            let jobs = batch
            batch = []
            batchSize = 0
            for job in jobs { try BackupStore.writeIncoming(job.bytes, hash: job.hash, in: incoming, incomingPath: incomingPath) }
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

    private func start() -> Bool {
        let context = Unmanaged.passRetained(self).toOpaque()
        var created = pthread_t()
        let rc = pthread_create(&created, nil, { raw in
            let writer = Unmanaged<ObjectWriter>.fromOpaque(raw!).takeRetainedValue()
            writer.run()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<ObjectWriter>.fromOpaque(context).release()
            return false
        }
        thread = created
        return true
    }

    /// The thread: writes what is queued until told to stop.
    private func run() {
        pthread_mutex_lock(mutex)
        while true {
            while queue.isEmpty && !stopping { pthread_cond_wait(workReady, mutex) }
            if stopping { break }
            let jobs = queue
            queue = []
            busy = true
            let failedBefore = failure != nil
            pthread_mutex_unlock(mutex)
            var written = 0
            var firstError: SystemError?
            if !failedBefore {
                for job in jobs {
                    do { try BackupStore.writeIncoming(job.bytes, hash: job.hash, in: incoming, incomingPath: incomingPath) } catch {
                        firstError = error
                        break
                    }
                }
            }
            for job in jobs { written += job.bytes.count }
            pthread_mutex_lock(mutex)
            busy = false
            queuedBytes -= written
            if failure == nil, let firstError { failure = firstError }
            pthread_cond_broadcast(progress)
        }
        pthread_mutex_unlock(mutex)
    }
}

/// Work run on a thread of its own while the caller goes on: ``join()``
/// waits for its result. Runs on the caller's thread at ``join()`` when no
/// thread can be made.
final class BackgroundJob<Value: Sendable>: BackgroundJobRunnable, @unchecked Sendable {
    private let body: @Sendable () throws -> Value
    private var result: Result<Value, any Error>?
    private var thread: pthread_t?

    /// Starts `body` on a new thread.
    init(_ body: @escaping @Sendable () throws -> Value) {
        self.body = body
        start()
    }

    private func start() {
        let context = Unmanaged.passRetained(self as AnyObject).toOpaque()
        var created = pthread_t()
        let rc = pthread_create(&created, nil, { raw in
            let job = Unmanaged<AnyObject>.fromOpaque(raw!).takeRetainedValue() as! BackgroundJobRunnable
            job.runBody()
            return nil
        }, context)
        if rc == 0 { thread = created } else { Unmanaged<AnyObject>.fromOpaque(context).release() }
    }

    fileprivate func runBody() {
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

/// What the thread of a ``BackgroundJob`` runs (the thread's entry point
/// is not generic).
private protocol BackgroundJobRunnable: AnyObject {
    func runBody()
}
