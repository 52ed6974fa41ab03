#if canImport(Glibc)
import Glibc
#endif
import PrefsProtocol
import PropertyList

/// The loop's side of its clients: reading their frames, sending replies,
/// and dropping those that closed, failed or stalled.
extension PrefsServer {
    /// Reads what each client of `order` sent (`events`: its `poll`
    /// results, in the same order), then handles the complete frames in
    /// the same order: every read comes before the first frame is handled,
    /// so the registry is looked at once for the sweep, after all of it
    /// arrived (``DomainCache/requestsArrived()``).
    func readRequests(_ order: [Int], events: [Int16], now: Double) {
        var sweep: [ClientConnection] = []
        sweep.reserveCapacity(order.count)
        for (i, id) in order.enumerated() {
            guard let c = clients[id] else { continue }
            if events[i] & Int16(POLLIN | POLLHUP | POLLERR) != 0 && !c.closing && !isPaused(c) && !c.reader.hasCompleteFrame {
                if !c.readAvailable(now: now, limit: 256 << 10) { c.peerClosed = true }
            }
            sweep.append(c)
        }
        cache.requestsArrived()
        for c in sweep {
            processFrames(c)
            c.notePartialFrame(now: now)
        }
    }

    /// Sends what each client of `order` has waiting and drops the clients
    /// that are done, failed, or past a timeout (at `now`).
    func sendReplies(_ order: [Int], now: Double) {
        for id in order {
            guard let c = clients[id] else { continue }
            if c.hasOutput { c.writeAvailable(now: UnixSocket.now()) }
            if c.failed || (c.peerClosed && !c.reader.hasCompleteFrame) || (c.closing && !c.hasOutput) {
                dropClient(id)
                continue
            }
            if let since = c.partialFrameSince, now - since > configuration.partialFrameTimeout {
                configuration.log("prefsd: client \(id) did not finish a frame in \(Int(configuration.partialFrameTimeout)) s; disconnected")
                dropClient(id)
            } else if c.hasOutput, now - c.lastOutputProgress > configuration.stalledWriteTimeout {
                configuration.log("prefsd: client \(id) left replies unread for \(Int(configuration.stalledWriteTimeout)) s; disconnected")
                dropClient(id)
            }
        }
    }

    func dropClient(_ id: Int) {
        guard let c = clients.removeValue(forKey: id) else { return }
        close(c.fd)
        subscriptions.removeClient(id, at: Set(c.subscriptions.values.map { PlistKey($0) }))
    }

    /// Whether requests of `c` wait until it reads its replies: its own
    /// unread replies are over the per-client bound, or it has some while
    /// all clients' together are over the total bound.
    func isPaused(_ c: ClientConnection) -> Bool {
        c.queuedBytes > configuration.clientOutputPauseBytes
            || (c.hasOutput && queuedOutputBytes > configuration.totalOutputPauseBytes)
    }

    private func processFrames(_ c: ClientConnection) {
        var handled = 0
        while !c.closing && !c.waitingForCommit && handled < 64 && !isPaused(c) {
            let payload: [UInt8]?
            do { payload = try c.reader.next() } catch {
                let code: ErrorCode
                switch error {
                case .unsupportedVersion: code = .unsupportedVersion
                case .tooLarge: code = .frameTooLarge
                case .badMagic, .reservedBits: code = .malformedFrame
                }
                send(c, .response(id: 0, .failure(RemoteError(code, error.description))))
                c.closing = true
                return
            }
            guard let payload else { return }
            handled += 1
            let (id, decoded) = Request.decode(payload)
            switch decoded {
            case .failure(let e): send(c, .response(id: id, .failure(e.remote)))
            case .success(let request): handle(request, id: id, from: c)
            }
        }
    }

    func send(_ c: ClientConnection, _ reply: Reply) {
        guard !c.failed else { return }
        let before = c.queuedBytes
        do { c.enqueue(Frame.encode(try reply.encode())) } catch {
            if case .response(let id, _) = reply, let fallback = try? Reply.response(id: id, .failure(RemoteError(.preferences, "the reply cannot be encoded: \(error)"))).encode() {
                c.enqueue(Frame.encode(fallback))
            }
        }
        queuedOutputBytes += c.queuedBytes - before
        if c.queuedBytes > configuration.clientOutputDropBytes {
            configuration.log("prefsd: client \(c.id) left \(c.queuedBytes) bytes of replies unread (over \(configuration.clientOutputDropBytes)); disconnected")
            c.failed = true
            c.discardOutput()
        }
    }
}
