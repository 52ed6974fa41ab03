import AppHomeSystem
import Containers
import Dispatch
import Keychain
import PrefsProtocol
import PropertyList
import Synchronization

/// Runs what may take long off the loop: uninstalls (hooks may take
/// seconds) and keychain calls (the device key may come from the Secret
/// Service over D-Bus, and item files are locked). Keychain calls run side
/// by side, an uninstall alone (a barrier). Each finished job is handed to
/// the loop, woken through ``wake``, which sends the reply.
final class JobRunner {
    /// A job done on a worker thread, waiting for the loop to reply.
    struct Finished: Sendable {
        var clientID: Int
        var requestID: Int
        var result: Result<[PlistKey: PlistValue], RemoteError>
        /// An uninstall, after which domains resolve anew. (Subscribers of
        /// the app's domain follow it when the registry is read again.)
        var changesRegistry: Bool
    }

    private let root: String
    private let keyPolicy: DeviceKeyPolicy
    private let clock: @Sendable () -> PlistDate
    private let queue = DispatchQueue(label: "prefsd.jobs", attributes: .concurrent)
    private let finished = FinishedJobs()
    /// Uninstalls handed to a worker and not yet taken back (the loop's alone).
    private var barriersUnderWay = 0
    /// The files keychain calls read, kept while unchanged.
    let keychainCaches: KeychainJob.Caches
    /// Readable when a job finished.
    let wake: WakePipe

    init(configuration: ServerConfiguration) throws(ServiceError) {
        root = configuration.root
        keychainCaches = KeychainJob.Caches(registry: configuration.registryCache ?? RegistryCache(root: configuration.root))
        keyPolicy = configuration.keyPolicy
        clock = configuration.keychainClock
        wake = try WakePipe.make()
    }

    deinit { wake.close() }

    /// Uninstalls the app `bundle`, replying to request `requestID` of client `clientID` when done.
    func uninstall(_ bundle: String, hookEnvironment: HookEnvironment, clientID: Int, requestID: Int) {
        let root = root
        // The service's own key policy: the caller chooses nothing but the hooks' variables.
        let policy = keyPolicy
        // A barrier: no keychain call of the app runs while its items are shredded.
        barriersUnderWay += 1
        submit(clientID: clientID, requestID: requestID, changesRegistry: true, barrier: true) {
            UninstallJob.perform(bundle, root: root, policy: policy, hookEnvironment: hookEnvironment)
        }
    }

    /// Makes the look-up `request` (`keychainFind`) for `caller` on the
    /// loop, when it can be made without waiting: an app's call, the class keys it needs
    /// are open (the keybag, a key file, the kernel's keys), no writer's
    /// lock is needed, the group is small, and no uninstall is under way
    /// (its barrier would have held the call). `nil` otherwise: the caller
    /// hands the call to ``keychain(_:caller:peerPID:peerSandbox:clientID:requestID:)``.
    /// What the worker's hand-off costs (a thread woken, the loop woken
    /// back) is most of a cached look-up.
    func keychainNow(_ request: Request, caller: KeychainCaller, peerPID: Int32, peerSandbox: PeerSandbox) -> Result<[PlistKey: PlistValue], RemoteError>? {
        // The login keychain's callers are checked through /proc (their
        // environment, as long as they make it): a worker's job.
        guard case .keychainFind = request, caller.bundleIdentifier != KeychainContext.loginGroupName, barriersUnderWay == 0 else { return nil }
        var policy = keyPolicy
        policy.mayWait = false
        return KeychainJob.attempt(request, caller: caller, peerPID: peerPID, peerSandbox: peerSandbox, root: root, policy: policy,
                                   now: clock, caches: keychainCaches)
    }

    /// Makes the keychain call `request` for `caller`, replying when done.
    func keychain(_ request: Request, caller: KeychainCaller, peerPID: Int32, peerSandbox: PeerSandbox, clientID: Int, requestID: Int) {
        let root = root
        let policy = keyPolicy
        let clock = clock
        let caches = keychainCaches
        submit(clientID: clientID, requestID: requestID, changesRegistry: false, barrier: false) {
            KeychainJob.perform(request, caller: caller, peerPID: peerPID, peerSandbox: peerSandbox, root: root, policy: policy, now: clock, caches: caches)
        }
    }

    /// The jobs finished since the last call.
    func takeFinished() -> [Finished] {
        wake.drain()
        let jobs = finished.list.withLock { jobs in defer { jobs.removeAll() }; return jobs }
        barriersUnderWay -= jobs.count { $0.changesRegistry }
        return jobs
    }

    private func submit(clientID: Int, requestID: Int, changesRegistry: Bool, barrier: Bool,
                        _ job: @escaping @Sendable () -> Result<[PlistKey: PlistValue], RemoteError>) {
        let wake = wake.write
        let finished = finished
        queue.async(flags: barrier ? .barrier : []) {
            let result = job()
            finished.list.withLock { $0.append(Finished(clientID: clientID, requestID: requestID, result: result, changesRegistry: changesRegistry)) }
            WakePipe.poke(wake)
        }
    }
}

/// Jobs finished on worker threads, waiting for the loop to reply.
private final class FinishedJobs: Sendable {
    let list = Mutex<[JobRunner.Finished]>([])
}
