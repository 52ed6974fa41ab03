import CGio

/// A call GDBus handed over, not answered yet (the invocation is ours to answer).
struct PendingCall {
    var sender: String
    var path: String
    var interface: String
    var method: String
    var invocation: OpaquePointer
}

/// The calls waiting, one queue per client, served by turns: a client that
/// sends hundreds of calls at once (each a durable write) delays another
/// client by one call, never by all of its own.
struct CallQueue {
    private var queues: [String: [PendingCall]] = [:]
    /// How far each client's queue has been served (its array is trimmed when empty).
    private var served: [String: Int] = [:]
    /// Clients with calls waiting, in the order of their turns.
    private var turns: [String] = []
    private var turn = 0

    var isEmpty: Bool { turn == turns.count }

    /// Queues `call`; `false` when its client already has `limit` calls waiting.
    mutating func enqueue(_ call: PendingCall, limit: Int) -> Bool {
        let waiting = (queues[call.sender]?.count ?? 0) - (served[call.sender] ?? 0)
        if waiting >= limit { return false }
        if waiting == 0 { turns.append(call.sender); queues[call.sender] = []; served[call.sender] = 0 }
        queues[call.sender]!.append(call)
        return true
    }

    /// The oldest call of the client whose turn it is.
    mutating func next() -> PendingCall? {
        guard turn < turns.count else { return nil }
        let sender = turns[turn]
        turn += 1
        let i = served[sender]!
        let call = queues[sender]![i]
        if i + 1 == queues[sender]!.count {
            queues[sender] = nil; served[sender] = nil
        } else {
            served[sender] = i + 1
            turns.append(sender)
        }
        if turn > 1024 && turn * 2 > turns.count { turns.removeFirst(turn); turn = 0 }
        return call
    }
}
